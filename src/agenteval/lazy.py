"""Names of a package imported when first asked for (PEP 562's module `__getattr__`), so that
importing one module of a package does not import its siblings (`score` needs neither the
evaluation loop, the agents nor the HTTP model client: a fifth of a second of its start)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


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


__all__ = ["names_from"]
