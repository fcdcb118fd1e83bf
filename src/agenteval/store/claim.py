"""One process owns a run: an exclusive OS file lock (`flock`) held for as long as it runs.

The lock file is `<root>/.agenteval/journal.locks/<run id>.lock`. The kernel releases the lock
when its owner ends however it ends (`kill -9` included), so a dead owner never blocks a
resume, and a run whose lock is free is not running anywhere. The file holds the owner's pid and
host, for the message that refuses a second owner; it is removed (under the lock) when its run
is released, and a claimer that locked a file removed meanwhile tries again with the new one.

Without `fcntl` (Windows) no lock is taken: every claim succeeds and no run is seen as owned.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from agenteval.store.output import safe_name

try:
    import fcntl
except ImportError:  # pragma: no cover (Windows)
    fcntl = None  # type: ignore[assignment]

# A claim waits this long for a lock held only by a prober (`owned` takes it for an instant).
_CLAIM_WAIT_SECONDS = 1.0


def lock_path(root: str | Path, run_id: str) -> Path:
    """Where the lock of run `run_id` of a store root lives."""
    return Path(root) / ".agenteval" / "journal.locks" / f"{safe_name(run_id)}.lock"


class Claim:
    """A held claim on one run (its open, locked lock file); `release` gives it up."""

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self._fd = fd

    def release(self, remove: bool = False) -> None:
        """Gives up the run; with `remove`, deletes the lock file first (while still held, so
        that nobody holds a lock on a file that is gone without finding out)."""
        if self._fd is None:
            return
        if remove:
            with contextlib.suppress(OSError):
                self.path.unlink()
        os.close(self._fd)  # closing the last descriptor releases the lock
        self._fd = None


def claim(path: Path) -> Claim | None:
    """Takes the lock at `path` for this process; None when another live process holds it."""
    if fcntl is None:  # pragma: no cover (Windows)
        return Claim(path, None)
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + _CLAIM_WAIT_SECONDS
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)
            continue
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # its owner removed it as we opened it: lock the one there now
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {os.uname().nodename}\n".encode())
        return Claim(path, fd)


def owner(path: Path) -> str | None:
    """`pid N on HOST` of the live process holding the lock at `path`, or None when nobody
    holds it (no file, or its owner is gone)."""
    if fcntl is None:  # pragma: no cover (Windows)
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.read(fd, 200).decode(errors="replace").split()
            return f"pid {text[0]} on {text[1]}" if len(text) == 2 else "another process"
        return None
    finally:
        os.close(fd)  # also gives up the shared lock taken for the look


__all__ = ["Claim", "claim", "lock_path", "owner"]
