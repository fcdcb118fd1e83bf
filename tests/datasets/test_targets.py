"""A target's copy of another target's bytes: by the kernel, or read back where it cannot."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from agenteval.datasets.targets import TargetWriter
from agenteval.errors import DataError

PIECES = [bytes(range(256)) * 4099, b"tail \xff\x00", b"x" * (3 << 20)]  # over several MiB, odd sizes


def _copied(tmp_path: Path) -> tuple[Path, Path]:
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    source, copy = TargetWriter(first), TargetWriter(second)
    for piece in PIECES:
        source.write(piece)
    copy.copy_from(source)
    copy.write(b" and after")  # a write after the copy lands after the copied bytes
    source.commit()
    copy.commit()
    return first, second


def test_a_copy_has_the_bytes_written_to_its_source(tmp_path: Path) -> None:
    first, second = _copied(tmp_path)
    assert first.read_bytes() == b"".join(PIECES)
    assert second.read_bytes() == b"".join(PIECES) + b" and after"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first.json", "second.json"]


@pytest.mark.parametrize("code", [errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP])
def test_where_the_kernel_cannot_copy_the_bytes_are_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                code: int) -> None:
    real = os.copy_file_range
    calls = []

    def once_then_refuse(src: int, dst: int, count: int) -> int:
        calls.append(count)
        if len(calls) == 1:  # part copied by the kernel, then refused: the rest is read back
            return real(src, dst, 1000)
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "copy_file_range", once_then_refuse)
    first, second = _copied(tmp_path)
    assert len(calls) == 2
    assert second.read_bytes() == first.read_bytes() + b" and after"


def test_a_failed_copy_is_a_data_error_naming_the_target_and_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(src: int, dst: int, count: int) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "copy_file_range", full)
    source, copy = TargetWriter(tmp_path / "first.json"), TargetWriter(tmp_path / "second.json")
    source.write(b"document")
    with pytest.raises(DataError, match=r"second\.json.*No space left"):
        copy.copy_from(source)
    source.abort()
    assert list(tmp_path.iterdir()) == []


def test_a_stream_cannot_be_a_copys_source(tmp_path: Path) -> None:
    stream = TargetWriter("/dev/null")
    with pytest.raises(ValueError, match="stream"):
        TargetWriter(tmp_path / "copy.json").copy_from(stream)
