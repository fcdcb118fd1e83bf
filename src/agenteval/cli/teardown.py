"""Ending the console script without tearing down what a command built.

When `agenteval score` has written its result, the interpreter would free the eval sets and the
result one object at a time (about 10^7 objects: 0.6 s at 10,000 cases) and then unload every
module. Instead, the command hands them to `keep`, and the console-script entry point leaves
with `os._exit` once stdout and stderr are flushed, as mypy does. Only `arm()`, called by that
entry point, enables this: in-process callers (click's CliRunner in tests, code calling `cli`)
keep ordinary returns and exceptions. The same fast exit is taken when threads the command gave
up on are still running (an agent call past its case timeout), which the interpreter would
otherwise wait for.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time

_armed = False
_kept: list[object] = []


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


def settle() -> None:
    """Moves every object alive now (the modules, the agent, the plan: what a command builds
    before its run) out of the cyclic GC's reach in an armed process, so the collector's full
    passes during the run scan only what the run allocates. Without it, each full pass walks
    the hundreds of thousands of objects the imports leave, and a resume of a 10,000-case run
    spent about a third of its CPU there. In-process callers keep an ordinary collector."""
    if _armed:
        gc.freeze()


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
    """Ends the process with `code` at once if a command kept its objects; otherwise, or when
    an output stream cannot be flushed (e.g. a closed pipe), returns for a normal exit."""
    if not _kept and not _abandoned_threads():
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)
