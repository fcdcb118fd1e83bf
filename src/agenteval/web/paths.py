"""Names from URLs, and the one rule for turning them into paths.

A name taken from a URL (an app, an eval set id) becomes part of a path only if it is a plain
name (letters, digits, `_`, `-`, `.`; no separators, not `.` or `..`, nothing that decodes to
one), and the path it gives is used only if it is still inside its root once every symbolic
link is followed. Other ids (cases, runs) are never made into paths: they are looked up among
what exists.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")


def plain_name(name: str) -> bool:
    """True for a name that may be a file or folder name under a root."""
    return _NAME.fullmatch(name) is not None and ".." not in name


def inside(path: Path, root: Path) -> bool:
    """True when `path`, symbolic links followed, is `root` or under it (also followed)."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def child(root: Path, name: str, suffix: str = "") -> Path | None:
    """`root/<name><suffix>` when `name` is plain and the path stays inside `root`; else None.
    The path need not exist."""
    if not plain_name(name):
        return None
    path = root / f"{name}{suffix}"
    return path if inside(path, root) else None


__all__ = ["child", "inside", "plain_name"]
