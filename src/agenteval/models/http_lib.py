"""httpx and httpcore, imported without what an asyncio run never uses.

`import httpx` also imports `httpx._main` (the `httpx` command) whenever click, rich and pygments
are installed, which agenteval's own dependencies make so: rich's progress, syntax and table
modules and pygments' lexer registry, about 40-60 ms of every HTTP run's start-up that no call
uses (bench/README.md, session 34). httpx's package only guards that import with an ImportError
(it then defines a `main` that asks for `httpx[cli]`), so while this module imports httpx the
command module is marked absent; the mark is removed at once, so a later `import httpx._main`
(anyone wanting the command) imports it as usual.

httpcore (imported by httpx's first client) imports trio, when it is installed, for its locks
under a trio loop: about 130 ms of CPU (trio, attrs, outcome, sortedcontainers) that an asyncio
run never uses (bench/README.md, session 35). This module imports httpcore with trio marked
absent the same way, then hands httpcore's lock module a stand-in that imports trio at its first
use, so a client under a trio loop works as before (`_DeferredTrio`).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

_CLI = "httpx._main"
_TRIO = "trio"
_LOCKS = "httpcore._synchronization"  # where httpcore keeps `trio` (None when not installed)


class _DeferredTrio:
    """trio, imported at the first attribute httpcore asks of it (only under a trio loop, where
    trio is imported already)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module(_TRIO), name)


def _import_httpcore() -> None:
    if "httpcore" in sys.modules or _TRIO in sys.modules or importlib.util.find_spec(_TRIO) is None:
        importlib.import_module("httpcore")  # as it comes: nothing to defer
        return
    sys.modules[_TRIO] = None  # type: ignore[assignment]  # `import` raises ImportError for None
    try:
        importlib.import_module("httpcore")
    finally:
        del sys.modules[_TRIO]
    locks = sys.modules.get(_LOCKS)
    if locks is not None and getattr(locks, _TRIO, False) is None:
        setattr(locks, _TRIO, _DeferredTrio())


if "httpx" not in sys.modules and _CLI not in sys.modules:
    sys.modules[_CLI] = None  # type: ignore[assignment]
    try:
        import httpx
    finally:
        del sys.modules[_CLI]
else:
    import httpx

_import_httpcore()

import httpcore  # noqa: E402  (imported just above, as that function says; this names it)
from httpcore._utils import is_socket_readable  # noqa: E402

__all__ = ["httpcore", "httpx", "is_socket_readable"]
