"""Output targets: checked before a run, written in one way after it.

Every file agenteval writes for the user (result documents, reports, migrated eval sets, the
run history's documents) goes through `write_target`, and the front ends check every target
the user named with `check_targets` before any case runs, so a run is never lost to an output
path that could not have been written.

What a target may be:
- a regular file, or a path that does not exist yet (missing folders are created): written
  atomically, to a temporary file beside it then renamed over it, so a reader never sees half
  a file and a failed write leaves the old file as it was;
- a symbolic link: written through. The file the link points to is replaced (atomically, as
  above) and the link stays a link; a dangling link creates its target.
- a FIFO or a character device (`/dev/stdout`, a named pipe, `/dev/null`): written as a stream,
  never replaced by a regular file;
- anything else (a directory, a socket, a block device, a file that refuses writing such as
  `/proc/version`, a path under a regular file) is refused before the run.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from agenteval.datasets.replace import replace
from agenteval.errors import DataError


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return candidate
    return Path(".")


TEMP_SUFFIX = ".tmp"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(folder: str | Path) -> list[Path]:
    """Removes the temporary files that writers killed mid-write left in `folder` (those whose
    writer process is gone); returns them."""
    removed = []
    for path in Path(folder).glob(f".*{TEMP_SUFFIX}"):
        parts = path.name.rsplit(".", 3)  # .NAME . PID . RANDOM .tmp
        if len(parts) == 4 and parts[1].isdigit() and not _pid_alive(int(parts[1])):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def check_target(path: str | Path, what: str) -> None:
    """DataError(path, what, why) unless `path` can be written as described above. Nothing is
    created or changed (a probe file in the folder is removed again)."""
    p = Path(os.path.realpath(path))  # a link is checked as the file it points to
    try:
        # stat through the name given: /dev/stdout resolves to /proc/self/fd/1, whose real path
        # ("pipe:[123]") cannot be opened by name.
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError as e:
        raise DataError(path, what, f"cannot be written: {e.strerror}") from None
    if mode is not None:
        if stat.S_ISDIR(mode):
            raise DataError(path, what, "is a directory")
        if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or (stat.S_ISSOCK(mode) and _is_std_stream(path)):
            return  # written as a stream
        if not stat.S_ISREG(mode):
            raise DataError(path, what, "is neither a regular file, a FIFO nor a character device")
        try:  # append mode opens without truncating: the file is left as it is
            with open(p, "ab"):
                pass
        except OSError as e:
            raise DataError(path, what, f"cannot be written: {e.strerror}") from None
        folder = p.parent
    else:
        existing = _nearest_existing(p.parent)
        if not existing.is_dir():
            raise DataError(path, what, f"cannot be created: {existing} is not a directory")
        folder = existing
    try:  # the rename needs a file of our own in the folder
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".agenteval-probe-")
    except OSError as e:
        raise DataError(path, what, f"cannot be written: cannot create files in {folder}: "
                        f"{e.strerror}") from None
    os.close(fd)
    os.unlink(probe)


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether `a` and `b` name one file (through links, hard links included)."""
    if Path(a).resolve() == Path(b).resolve():
        return True
    try:  # hard links, and names that resolve() cannot equate (case-insensitive file systems)
        return os.path.samefile(a, b)
    except OSError:  # either does not exist
        return False


def check_targets(targets: Mapping[str, str | Path | None],
                  inputs: Mapping[str, str | Path | None] | None = None) -> None:
    """Checks every named target (option name → path; None skipped); two options naming one
    file are refused too, and so is a target naming one of the run's `inputs` (what it is →
    path): written after the run, it would replace what the run was made from."""
    seen: dict[str, str] = {}
    for what, path in targets.items():
        if path is None:
            continue
        for source, input_path in (inputs or {}).items():
            if input_path is not None and not is_stream(path) and same_file(path, input_path):
                raise DataError(path, what, f"is also an input of the run ({source})")
        real = os.path.realpath(path)
        if real in seen and not is_stream(real):
            raise DataError(path, what, f"is also the target of {seen[real]}")
        seen[real] = what
        check_target(path, what)


def _is_std_stream(path: str | Path) -> bool:
    # /dev/stdout and /dev/stderr may be sockets (a service's log): written as streams too.
    return str(path) in ("/dev/stdout", "/dev/stderr")


def is_stream(path: str | Path) -> bool:
    """Whether `path` is a pipe, a terminal or standard output/error (written in place, not
    through a temporary file)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or (stat.S_ISSOCK(mode) and _is_std_stream(path))


class TargetWriter:
    """Writes one target as the module docstring says, a piece at a time: `write` pieces as
    they come, then `commit` (the temporary file replaces the target) or `abort` (it is
    removed; the old content, if any, stays). An OSError is a DataError naming the file."""

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self._tmp: str | None = None
        try:
            if is_stream(path):
                self._file = open(path, "wb")  # noqa: SIM115 (closed by commit or abort)
                return
            target = Path(os.path.realpath(path))
            target.parent.mkdir(parents=True, exist_ok=True)
            # The writer's pid is in the name, so a temporary file left by a killed writer can
            # be told apart from one being written (see `remove_stale_temporaries`).
            fd, self._tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.{os.getpid()}.",
                                             suffix=TEMP_SUFFIX)
            self._target = target
            self._file = os.fdopen(fd, "wb")
        except OSError as e:
            raise self._error(e) from None

    def _error(self, e: OSError) -> DataError:
        return DataError(self.path, "", f"cannot be written: {e.strerror or e}")

    def write(self, chunk: bytes) -> None:
        try:
            self._file.write(chunk)
        except OSError as e:
            self.abort()
            raise self._error(e) from None

    def write_many(self, pieces: Sequence[bytes | memoryview]) -> None:
        """`write` of each of `pieces`, in order, gathered into few system calls (`write_all`)
        and not joined first: a copy of them fewer."""
        try:
            self._file.flush()
            write_all(self._file.fileno(), pieces)
        except OSError as e:
            self.abort()
            raise self._error(e) from None

    def commit(self) -> None:
        try:
            self._file.close()
            if self._tmp is not None:
                # mkstemp creates 0600; give the file the permissions an ordinary write would.
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(self._tmp, 0o666 & ~umask)
                # (not `os.replace`: over an existing file, the rename itself frees its blocks)
                replace(self._tmp, self._target)
                self._tmp = None
        except OSError as e:
            self.abort()
            raise self._error(e) from None

    def abort(self) -> None:
        """Discards what was written; safe to call twice. Closing may fail again (a full disk
        fails the flush of what is still buffered): that is the error already being reported,
        so it is not raised a second time."""
        with contextlib.suppress(OSError):
            self._file.close()
        if self._tmp is not None:
            Path(self._tmp).unlink(missing_ok=True)
            self._tmp = None


_IOV_MAX = 1024  # pieces a `writev` takes at most (POSIX's least IOV_MAX is 16; Linux's 1,024)


def write_all(fd: int, pieces: Sequence[bytes | memoryview]) -> None:
    """Writes `pieces` to file descriptor `fd` in order, gathered (`os.writev`) where the
    system has it; a short write goes on where it stopped."""
    if not hasattr(os, "writev"):  # (Windows)
        data = memoryview(b"".join(pieces))
        written = 0
        while written < len(data):
            written += os.write(fd, data[written:])
        return
    i = 0
    while i < len(pieces):
        chunk = pieces[i:i + _IOV_MAX]
        written = os.writev(fd, chunk)
        if written == sum(map(len, chunk)):  # (the usual case: all of it, counted without a loop)
            i += len(chunk)
            continue
        while i < len(pieces) and written >= len(pieces[i]):  # the pieces written whole
            written -= len(pieces[i])
            i += 1
        if written:  # (a short write) the rest of the piece written in part
            rest = memoryview(pieces[i])[written:]
            while rest:
                rest = rest[os.write(fd, rest):]
            i += 1


def write_target(path: str | Path, chunks: Iterable[bytes]) -> None:
    """Writes the bytes of `chunks` to `path` with a `TargetWriter`."""
    writer = TargetWriter(path)
    try:
        for chunk in chunks:
            writer.write(chunk)
    except BaseException:
        writer.abort()
        raise
    writer.commit()


__all__ = ["TargetWriter", "check_target", "check_targets", "remove_stale_temporaries", "write_all",
           "write_target"]
