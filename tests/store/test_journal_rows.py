"""The rows file's frames (`store.journal_rows`): keys spelt as JSON, pieces written in order."""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path

import pytest

from agenteval.store import journal_rows
from agenteval.store.journal_rows import RowsReader, RowsWriter, frame

KEYS = [("s", "c0", 0), ("set é", 'q"\\\n\u2028\U0001f600', -1), ("", "x" * 300, 12)]


@pytest.mark.parametrize("key", KEYS)
def test_a_key_is_spelt_as_compact_json(key: tuple[str, str, int]) -> None:
    assert journal_rows._key(key) == json.dumps(list(key), separators=(",", ":")).encode()


def _spelt(key: tuple[str, str, int], row: bytes, digest: str) -> bytes:
    """A frame as the format describes it, spelt here on its own: the header (magic, the key's,
    row's and digest's lengths, CRC-32 of the three), the key as compact JSON, the row, the digest."""
    k, d = json.dumps(list(key), separators=(",", ":")).encode(), digest.encode()
    return struct.pack("<4sIIII", b"AEJ2", len(k), len(row), len(d), zlib.crc32(k + row + d)) + k + row + d


def test_frames_made_together_are_the_format_s_bytes(tmp_path: Path) -> None:
    """`append_many` writes each frame as the format spells it (keys of every spelling, with a
    digest and without one), at the places it returns; `frame` gives the same pieces."""
    items = [(*key, b"{\n    " + b"r" * (i * 11), digest)
             for i, (key, digest) in enumerate((k, d) for k in KEYS for d in ("", "d\u00e9gest"))]
    many = RowsWriter(tmp_path / "many.rows")
    want = b""
    for batch in (items, items[::-1]):
        spelt = [_spelt((s, e, i), row, d) for s, e, i, row, d in batch]
        at = len(want)
        places = many.append_many(batch)
        assert places == [(at + sum(map(len, spelt[:j])), len(f)) for j, f in enumerate(spelt)]
        assert [b"".join(frame((s, e, i), row, d)) for s, e, i, row, d in batch] == spelt
        want += b"".join(spelt)
    many.close()
    assert (tmp_path / "many.rows").read_bytes() == want


def test_frames_written_in_short_writes_read_back_whole(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`writev` may write less than it is given (and takes at most `_IOV_MAX` pieces): the rest
    follows in order, so each frame is where its place says."""
    real = os.writev
    calls: list[int] = []

    def short(fd: int, pieces: list[bytes]) -> int:
        calls.append(len(pieces))
        whole = b"".join(pieces)
        return real(fd, [whole[:max(1, len(whole) // 3 - 7)]])  # a third, cut mid-piece

    monkeypatch.setattr(journal_rows.os, "writev", short)
    monkeypatch.setattr(journal_rows, "_IOV_MAX", 5)
    rows = [(("s", f"c{i}", i % 2), b"{\n    " + b"x" * (i * 37), f"d{i}") for i in range(9)]
    writer = RowsWriter(tmp_path / "r.rows")
    places = writer.append([frame(k, row, d) for k, row, d in rows[:4]])
    places += writer.append([frame(k, row, d) for k, row, d in rows[4:]])
    writer.close()
    assert max(calls) <= 5 and len(calls) > 2
    reader = RowsReader(tmp_path / "r.rows")
    assert [reader.read(at, size, k) for (k, _, _), (at, size) in zip(rows, places, strict=True)] == \
        [(row, d) for _, row, d in rows]
    reader.close()
    assert (tmp_path / "r.rows").stat().st_size == sum(size for _, size in places)


def test_frames_read_together_are_those_read_one_by_one(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`read_many` reads near frames with one `pread` per span: in any order asked, the rows a
    frame-by-frame `read` gives, None for a frame cut off by the file's end, and a frame that is
    not its key's a DataError, as `read` says."""
    monkeypatch.setattr(journal_rows, "_SPAN", 600)  # spans of a few frames each
    rows = [(("s", f"c{i}", 0), b"{\n    " + b"y" * (i * 29), f"d{i}") for i in range(12)]
    writer = RowsWriter(tmp_path / "r.rows")
    places = writer.append([frame(k, row, d) for k, row, d in rows])
    writer.close()
    asked = [(at, size, k) for (k, _, _), (at, size) in zip(rows, places, strict=True)]
    asked = asked[5:] + asked[1::-1] + asked[2:5]  # out of file order, as a case's summary comes
    reads: list[int] = []
    real, real_v = os.pread, os.preadv
    monkeypatch.setattr(journal_rows.os, "pread", lambda fd, n, at: reads.append(n) or real(fd, n, at))
    monkeypatch.setattr(journal_rows.os, "preadv",
                        lambda fd, bufs, at: reads.append(len(bufs[0])) or real_v(fd, bufs, at))
    reader = RowsReader(tmp_path / "r.rows")
    got = reader.read_many(asked)
    assert len(reads) < len(asked) and max(reads) <= 600
    reads.clear()
    assert got == [reader.read(*a) for a in asked]
    assert len(reads) == len(asked)
    last_at, last_size = places[-1]
    with open(tmp_path / "r.rows", "r+b") as f:
        f.truncate(last_at + last_size // 2)
    assert reader.read_many([asked[0], (last_at, last_size, rows[-1][0])])[1] is None
    with pytest.raises(journal_rows.DataError, match="damaged"):
        reader.read_many([asked[0], (asked[1][0], asked[1][1], ("s", "other", 0))])
    reader.close()


@pytest.mark.parametrize("together", [False, True])
def test_every_flipped_bit_of_a_frame_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                together: bool) -> None:
    """A bit flipped anywhere in a frame (its header, key, row or digest) makes reading it a
    DataError, read on its own or with its neighbours in one span (`read_many`, which looks at
    the frames in place in its buffer); the frames around it still read back as written."""
    monkeypatch.setattr(journal_rows, "_SPAN", 1 << 12)
    rows = [(("s", f"c{i}", 0), b"{\n    " + bytes(range(40 + i)), f"d{i}" if i % 2 else "")
            for i in range(3)]
    path = tmp_path / "r.rows"
    writer = RowsWriter(path)
    places = writer.append([frame(k, row, d) for k, row, d in rows])
    writer.close()
    asked = [(at, size, k) for (k, _, _), (at, size) in zip(rows, places, strict=True)]
    whole = path.read_bytes()
    at, size = places[1]
    for i in range(at, at + size):
        for bit in range(8):
            damaged = bytearray(whole)
            damaged[i] ^= 1 << bit
            path.write_bytes(damaged)
            reader = RowsReader(path)
            with pytest.raises(journal_rows.DataError, match=r"c1.*damaged"):
                if together:
                    reader.read_many(asked)
                else:
                    reader.read(*asked[1])
            assert reader.read_many([asked[0]]) == [(rows[0][1], None)]
            assert reader.read(*asked[2]) == (rows[2][1], None)
            reader.close()
