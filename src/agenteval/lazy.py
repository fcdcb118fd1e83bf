"""Names of a package imported when first asked for (PEP 562's module `__getattr__`), so that
importing one module of a package does not import its siblings (`score` needs neither the
evaluation loop, the agents nor the HTTP model client: a fifth of a second of its start); and
work a run needs later, done while its event loop first waits on a model (`while_waiting`)."""

from __future__ import annotations

import contextlib
import importlib
import re
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio


def names_from(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: `name` taken from its submodule `homes[name]` when
    first asked for, then kept on the package (asked once); any other name an AttributeError."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


def names_over_submodules(package: str, homes: Mapping[str, str]) -> None:
    """Makes `package` keep the names of `homes` for what its `__getattr__` gives, when a
    submodule of the same name is loaded: the import system sets a loaded submodule on its
    package (`runner.run`, `store.record`), which would replace the function the package gives
    by that name (eager imports used to overwrite it with the function at once)."""

    class _Package(types.ModuleType):
        def __setattr__(self, name: str, value: object) -> None:
            if name in homes and isinstance(value, types.ModuleType):
                return
            super().__setattr__(name, value)

    sys.modules[package].__class__ = _Package


class LazyPattern:
    """A regular expression compiled when first used, for modules that hold many long ones that
    only some runs use (the judge's screen: 15 patterns, 30-40 ms of every command's start-up,
    which a `score` of deterministic criteria never reads). Same results as the compiled one."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern, self._flags = pattern, flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled at the first call)."""
        if self._compiled is None:
            self._compiled = re.compile(self._pattern, self._flags)
        return self._compiled

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string, pos, endpos)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled.split(string, maxsplit)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)


# Work a run will need, kept for a moment when its event loop waits on a model (`waiting`).
_LOOK_EVERY = 0.005  # seconds between looks at the loop
_ON_TIME = 0.002  # a look this late or less found the loop waiting, not busy
_LOOKS_MAX = 60  # then the work is left to its first use (a loop that never waits)
_work: list[Callable[[], object]] = []
_looking: list[asyncio.AbstractEventLoop] = []  # the loop whose looks are scheduled, if any


def while_waiting(work: Callable[[], object]) -> None:
    """Keeps `work` (a no-argument callable whose result is not used, safe to run more than
    once: a module's deferred set-up) to be run by `waiting`, once. Its caller must still do it
    at first use, as without this: it may never run (a run that never waits on a model)."""
    if work not in _work:
        _work.append(work)


def waiting() -> None:
    """Says that the running event loop has sent a model request and waits on its reply: the
    work `while_waiting` kept is run on this loop, a piece at a time, when it finds the loop
    waiting (a look that comes on time), so that it takes a model's latency instead of a start-
    up's or a case's time (a run's start-up imports only what its first call needs). An
    exception of a piece is left to its first use to raise. Cheap when nothing is kept."""
    if not _work:
        return
    import asyncio  # (loaded: a loop is running; not imported by every command that imports this)

    loop = asyncio.get_running_loop()
    if _looking and _looking[0] is loop and not loop.is_closed():
        return
    _looking[:] = [loop]
    loop.call_later(_LOOK_EVERY, _look, loop, loop.time() + _LOOK_EVERY, _LOOKS_MAX)


def _look(loop: asyncio.AbstractEventLoop, due: float, left: int) -> None:
    if loop.time() - due <= _ON_TIME and _work:  # the loop was waiting: one piece
        work = _work.pop(0)
        with contextlib.suppress(Exception):  # raised again where the work is first used
            work()
    if _work and left > 1:
        loop.call_later(_LOOK_EVERY, _look, loop, loop.time() + _LOOK_EVERY, left - 1)
    else:
        _looking.clear()


__all__ = ["LazyPattern", "names_from", "names_over_submodules", "waiting", "while_waiting"]
