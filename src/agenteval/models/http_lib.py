"""httpx, imported without its command-line client.

`import httpx` also imports `httpx._main` (the `httpx` command) whenever click, rich and pygments
are installed, which agenteval's own dependencies make so: rich's progress, syntax and table
modules and pygments' lexer registry, about 40-60 ms of every HTTP run's start-up that no call
uses (bench/README.md, session 34). httpx's package only guards that import with an ImportError
(it then defines a `main` that asks for `httpx[cli]`), so while this module imports httpx the
command module is marked absent; the mark is removed at once, so a later `import httpx._main`
(anyone wanting the command) imports it as usual.
"""

from __future__ import annotations

import sys

_CLI = "httpx._main"

if "httpx" not in sys.modules and _CLI not in sys.modules:
    sys.modules[_CLI] = None  # type: ignore[assignment]  # `import` raises ImportError for None
    try:
        import httpx
    finally:
        del sys.modules[_CLI]
else:
    import httpx

__all__ = ["httpx"]
