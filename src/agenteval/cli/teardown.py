"""Ending the console script without tearing down what a command built.

When `agenteval score` has written its result, the interpreter would free the eval sets and the
result one object at a time (about 10^7 objects: 0.6 s at 10,000 cases) and then unload every
module. Instead, the command hands them to `keep`, and the console-script entry point leaves
with `os._exit` once the `atexit` handlers have run (a custom metric's module may have
registered one) and stdout and stderr are flushed, as mypy does. Only `arm()`, called by that
entry point, enables this: in-process callers (click's CliRunner in tests, code calling `cli`)
keep ordinary returns and exceptions. The same fast exit is taken when threads the command gave
up on are still running (an agent call past its case timeout), which the interpreter would
otherwise wait for.

`agenteval eval` ends by `end` instead: it runs user code (the agent, its tools), so what the
interpreter's exit does that anything may rely on is done first, in the interpreter's order
(`threading`'s exit hooks, every `atexit` handler: a tracer's flush, logging's, the journal's,
an agent's own; then every open file's buffer), and only the teardown is skipped (freeing the
modules and objects one at a time: 0.04-0.09 s of a 10,000-case resume on a quiet machine).
What the teardown alone would do is not done: finalizers (`__del__`) of objects still alive,
which Python does not promise to run at exit either (`weakref.finalize` ones do run: they are
an `atexit` handler).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import io
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

_armed = False
_kept: list[object] = []
_ended = False  # `end` was called


def arm() -> None:
    """Allows `exit_fast`; for the console-script entry point only."""
    global _armed
    _armed = True


def keep(*objects: object) -> None:
    """Keeps `objects` alive to the end of an armed process, out of the cyclic GC's reach
    (nothing is kept otherwise, so in-process callers free them as usual)."""
    if _armed:
        _kept.extend(objects)
        gc.freeze()


def end() -> None:
    """Lets an armed process end at once when the command has returned, once the interpreter's
    exit hooks have run and its open files are flushed (see the module's docstring; `exit_fast`).
    Nothing is done in process."""
    global _ended
    if _armed:
        _ended = True


def settle() -> None:
    """Moves every object alive now (the modules, the agent, the plan: what a command builds
    before its run) out of the cyclic GC's reach in an armed process, so the collector's full
    passes during the run scan only what the run allocates. Without it, each full pass walks
    the hundreds of thousands of objects the imports leave, and a resume of a 10,000-case run
    spent about a third of its CPU there. In-process callers keep an ordinary collector."""
    if _armed:
        gc.freeze()


@contextlib.contextmanager
def imports_settled() -> Iterator[None]:
    """Runs the block (a command's imports) without the cyclic GC in an armed process, then
    moves what it left alive out of the GC's reach (`settle`). A module's objects live to the
    end, so the collections the imports would trigger (about 150, one of them full: 3.6% of
    `eval`'s start-up) find next to nothing to free. In process the collector is left alone; a
    block that raises gets it back on, with nothing frozen."""
    paused = _armed and gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
        if paused:
            gc.freeze()
    finally:
        if paused:
            gc.enable()


# How long threads still alive at the end get to finish before they count as abandoned: an idle
# AnyIO worker thread told to stop when the event loop closed is usually still on its way out.
_GRACE_S = 0.2


def _abandoned_threads() -> bool:
    """Threads still running `_GRACE_S` after the command ended that it gave up on (an agent's
    call past its case timeout): the interpreter would wait for them at exit, however long."""
    deadline = time.monotonic() + _GRACE_S
    for t in threading.enumerate():
        if t is threading.main_thread() or t.daemon:
            continue
        t.join(max(0.0, deadline - time.monotonic()))
        if t.is_alive():
            return True
    return False


def exit_fast(code: int) -> None:
    """Ends the process with `code` at once if a command kept its objects, asked to `end`, or
    left threads it gave up on; otherwise, or when an output stream cannot be flushed (e.g. a
    closed pipe), returns for a normal exit. Before it ends, the interpreter's exit hooks run
    (`_exit_hooks`: `threading`'s, unless a thread was given up on, and every `atexit`
    handler, e.g. one a custom metric's module registered); the buffers of open files are
    written out after an `end` only: `score`'s kept objects are 10^6 or more, and looking
    through them for files would cost what skipping their teardown saves."""
    abandoned = _abandoned_threads()
    if not (_kept or _ended or abandoned):
        return
    _exit_hooks(threads=not abandoned, files=_ended and not _kept)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


# The file objects whose buffers the teardown would write out when it frees them: text first
# (its pending text goes to its buffer), then binary buffers.
_TEXT = (io.TextIOWrapper,)
_BUFFERS = (io.BufferedWriter, io.BufferedRandom, io.BufferedRWPair)


def _exit_hooks(threads: bool, files: bool) -> None:
    """What the interpreter's exit runs before its teardown, in its order: `threading`'s exit
    hooks (when `threads`: they wait for every non-daemon thread), then the `atexit` handlers
    (each once; one that raises is reported by `sys.unraisablehook` and the others still run,
    as at exit); then, when `files`, the buffers of open files, which the teardown would write
    out as it frees them (a file an agent opened and never closed, say). The standard streams
    are `exit_fast`'s."""
    shutdown = getattr(threading, "_shutdown", None)  # (private: what the interpreter calls)
    if threads and shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    if not files:
        return
    gc.unfreeze()  # (`settle` froze what was alive before the run: an agent's files among it)
    found: dict[type, int] = {}
    text: list[Any] = []
    buffers: list[Any] = []
    for o in gc.get_objects():
        t = type(o)
        kind = found.get(t)
        if kind is None:  # (by type, once each: `isinstance` may ask an object its __class__)
            kind = found[t] = 1 if issubclass(t, _TEXT) else 2 if issubclass(t, _BUFFERS) else 0
        if kind == 1:
            text.append(o)
        elif kind == 2:
            buffers.append(o)
    std = {id(s) for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__)}
    for f in (*text, *buffers):
        if id(f) not in std:
            with contextlib.suppress(Exception):  # (as the teardown: nothing to tell it to)
                if not f.closed:
                    f.flush()
