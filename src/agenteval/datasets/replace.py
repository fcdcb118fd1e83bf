"""A finished file put in place of an older one without waiting for the file system to free
the older one's blocks or to allocate the new one's.

`os.replace` over an existing file does both inside the rename on ext4: it frees the old
file's blocks (the rename drops its last link) and, with the file system's default
`auto_da_alloc`, starts the new file's delayed block allocation and writeback. Over a 260 MB
result document that was 110-230 ms of wall (16-21 ms of CPU) in the rename, after the last
case was scored (bench/README.md, "Session 22: `score`'s parent"). Exchanging the two names
instead (`renameat2` with RENAME_EXCHANGE, one atomic step) does neither: the old file, now
under the temporary name, is unlinked while a descriptor holds it, and a thread of its own
closes that descriptor, which frees its blocks beside whatever the caller does next.
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import sys
import threading
from collections.abc import Callable

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    """`os.replace(src, dst)` for a regular file `src`: `dst` names the whole old file until it
    names the whole new one, and `src` is gone. Where `dst` is an existing regular file on
    Linux, the two names are exchanged atomically, `src` (the old file now) is unlinked at once
    while an open descriptor keeps its blocks, and the descriptor is closed by a daemon thread,
    which frees them. A crash between the exchange and the unlink (two system calls) leaves the
    old file under the temporary name, as a crash while the new file was written leaves that
    one; any other crash leaves nothing behind (a descriptor is closed with its process).
    Elsewhere (no such `dst`, a symbolic link, a file system or libc that cannot exchange, a
    `dst` this process may not open): `os.replace`."""
    if sys.platform != "linux":
        os.replace(src, dst)
        return
    try:
        old = os.open(dst, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:  # none yet, a symbolic link, not readable: nothing to free later
        os.replace(src, dst)
        return
    try:
        exchanged = stat.S_ISREG(os.fstat(old).st_mode) and _exchange(src, dst)
    except BaseException:
        os.close(old)
        raise
    if not exchanged:
        os.close(old)
        os.replace(src, dst)
        return
    # (cannot fail but on a file system gone wrong: the new file is in place whatever happens
    # to the old one's name, which is then left as a crash leaves it)
    with contextlib.suppress(OSError):
        os.unlink(src)
    threading.Thread(target=os.close, args=(old,), name="agenteval-free", daemon=True).start()


def _exchange(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether the files at `a` and `b` swapped names, in one atomic step; False, with
    nothing changed, where it cannot be done."""
    call = _renameat2()
    if call is None:
        return False
    return call(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0


@functools.cache
def _renameat2() -> Callable[[int, bytes, int, bytes, int], int] | None:
    """libc's `renameat2` (glibc 2.28 and later), or None."""
    try:
        import ctypes  # (only here: 2 ms of import that nothing else needs)

        call = ctypes.CDLL(None, use_errno=True).renameat2
    except (ImportError, OSError, AttributeError):  # (a build without ctypes, a libc without it)
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    call.restype = ctypes.c_int
    function: Callable[[int, bytes, int, bytes, int], int] = call
    return function


__all__ = ["replace"]
