"""The rows file's frames (`store.journal_rows`): keys spelt as JSON, pieces written in order,
older versions read, damage found."""

from __future__ import annotations

import itertools
import json
import os
import struct
import zlib
from pathlib import Path

import pytest

from agenteval.datasets import targets
from agenteval.store import journal_rows
from agenteval.store.journal_rows import RowsReader, RowsWriter, frame
from agenteval.store.output import unplace

KEYS = [("s", "c0", 0), ("set é", 'q"\\\n\u2028\U0001f600', -1), ("", "x" * 300, 12)]


@pytest.mark.parametrize("key", KEYS)
def test_a_key_is_spelt_as_compact_json(key: tuple[str, str, int]) -> None:
    assert journal_rows._key(key) == json.dumps(list(key), separators=(",", ":")).encode()


def _spelt(key: tuple[str, str, int], row: bytes, digest: str) -> bytes:
    """A frame as the format describes it, spelt here on its own: the header (magic, the key's,
    row's and digest's lengths), the key as compact JSON, the row, the digest, then the CRC-32 of
    all of them."""
    k, d = json.dumps(list(key), separators=(",", ":")).encode(), digest.encode()
    body = struct.pack("<4sIII", b"AEJ3", len(k), len(row), len(d)) + k + row + d
    return body + struct.pack("<I", zlib.crc32(body))


def _spelt_older(magic: bytes, key: tuple[str, str, int], row: bytes, digest: str) -> bytes:
    """A frame as agenteval wrote it before this version (`AEJ2`, `AEJ1`): the header (magic, the
    lengths, then the CRC-32 of the key, row and digest only), the key, the row, the digest."""
    k, d = json.dumps(list(key), separators=(",", ":")).encode(), digest.encode()
    return struct.pack("<4sIIII", magic, len(k), len(row), len(d), zlib.crc32(k + row + d)) + k + row + d


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
    monkeypatch.setattr(targets, "_IOV_MAX", 5)
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


def test_views_give_the_rows_read_many_gives_a_span_at_a_time_without_copies(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`views` reads as `read_many` does and gives each span's rows as views of what it read
    (no copy: a document's writer writes them before the next span); a frame cut short, a
    damaged one and a row that is not a document's JSON are DataErrors."""
    monkeypatch.setattr(journal_rows, "_SPAN", 600)  # spans of a few frames each
    rows = [(("s", f"c{i}", 0), b"{\n    " + b"y" * (i * 29), f"d{i}") for i in range(12)]
    rows.append((("s", "big", 0), b"{\n    " + b"z" * 900, ""))  # larger than a span: read alone
    rows.append((("s", "flat", 0), b'{"eval_id": "flat"}', ""))
    writer = RowsWriter(tmp_path / "r.rows")
    places = writer.append([frame(k, row, d) for k, row, d in rows])
    writer.close()
    asked = [(at, size, k) for (k, _, _), (at, size) in zip(rows, places, strict=True)]
    reader = RowsReader(tmp_path / "r.rows")
    spans = []
    for span in reader.views(asked[:-1]):
        assert all(isinstance(v, memoryview) for v in span)
        spans.append([bytes(v) for v in span])  # (copied here: the next span overwrites them)
    assert 2 < len(spans) < len(asked) - 1
    assert [row for span in spans for row in span] == [got[0] for got in reader.read_many(asked[:-1])]
    with pytest.raises(journal_rows.DataError, match=r"'flat'.* is damaged"):
        list(reader.views(asked[-2:]))  # a row of another form than the document's
    with pytest.raises(journal_rows.DataError, match=r"'c3'.* is damaged"):
        list(reader.views([asked[2], (asked[3][0], asked[3][1], ("s", "c3", 1))]))
    last_at, last_size = places[-3]
    with open(tmp_path / "r.rows", "r+b") as f:
        f.truncate(last_at + last_size // 2)
    with pytest.raises(journal_rows.DataError, match="ends before the row of case 'c11'"):
        list(reader.views(asked[8:12]))
    reader.close()


def test_frames_read_together_skip_the_bytes_between_them(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A span of `read_many` ends where the next frame asked lies more than `_GAP` bytes away,
    before or after it (a batch's summaries lie beyond its rows): the frames between are not
    read, and the frames come as `read` gives them."""
    monkeypatch.setattr(journal_rows, "_GAP", 100)
    rows = [(("s", f"c{i}", 0), b"{\n    " + b"y" * 200, "") for i in range(12)]
    writer = RowsWriter(tmp_path / "r.rows")
    places = writer.append([frame(k, row, d) for k, row, d in rows])
    writer.close()
    asked = [(at, size, k) for (k, _, _), (at, size) in zip(rows, places, strict=True)]
    asked = asked[6:8] + asked[0:2] + asked[10:12]  # two frames, then two before, two after
    read: list[int] = []
    real_v = os.preadv
    monkeypatch.setattr(journal_rows.os, "preadv",
                        lambda fd, bufs, at: read.append(len(bufs[0])) or real_v(fd, bufs, at))
    reader = RowsReader(tmp_path / "r.rows")
    got = reader.read_many(asked)
    assert sorted(read) == sorted([asked[0][1] + asked[1][1], asked[2][1] + asked[3][1],
                                   asked[4][1] + asked[5][1]])
    assert got == [reader.read(*a) for a in asked]
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


def test_frames_of_older_versions_read_back_among_this_version_s(tmp_path: Path) -> None:
    """A rows file an older agenteval began (`AEJ2` frames of placed rows, `AEJ1` of rows not
    placed), which a resume then appends this version's frames to: each frame reads back as its
    row placed, with its digest, read on its own or with the others (`read_many`)."""
    placed = [b"{\n    " + b'"n": %d' % i + b"\n    }" for i in range(6)]
    keys = [("s", f"c{i}", i % 3) for i in range(6)]
    older = [_spelt_older(b"AEJ2", keys[0], placed[0], "d0"),
             _spelt_older(b"AEJ1", keys[1], unplace(placed[1]), ""),
             _spelt_older(b"AEJ2", keys[2], placed[2], "")]
    path = tmp_path / "r.rows"
    path.write_bytes(b"".join(older))
    writer = RowsWriter(path)
    places = [(sum(map(len, older[:i])), len(f)) for i, f in enumerate(older)]
    places += writer.append([frame(keys[i], placed[i], f"d{i}" if i % 2 else "") for i in range(3, 6)])
    writer.close()
    want = [(row, f"d{i}" if i in (0, 3, 5) else None) for i, row in enumerate(placed)]
    asked = [(at, size, k) for (at, size), k in zip(places, keys, strict=True)]
    reader = RowsReader(path)
    assert [reader.read(*a) for a in asked] == want
    assert reader.read_many(asked) == want
    reader.close()


def test_no_key_matches_itself_four_bytes_on() -> None:
    """What keeps the layouts apart (the module docstring): a key, spelt as `_key` spells it,
    never equals itself moved 4 bytes, so a frame read with the other version's layout never
    shows its key where it is looked for. Keys of every set id and eval id of up to 3 characters
    among those that spell JSON's structure (quotes, brackets, commas, backslashes)."""
    names = ["".join(t) for n in range(4) for t in itertools.product('["],\\a', repeat=n)]
    for set_id in names:
        for eval_id in names:
            for index in (0, -1, 10):
                k = journal_rows._key((set_id, eval_id, index))
                assert k[4:] != k[:-4], k


def _damaged_at(path: Path, at: int, size: int, key: tuple[str, str, int],
                changes: list[tuple[int, int]]) -> None:
    """Reading the frame of `key` at `at` is a DataError naming its case, on its own and in a
    span with the frame before it, after each of `changes` (an offset and the byte XORed there,
    a change of several bytes given as several), the file restored after each."""
    reader = RowsReader(path)
    whole = path.read_bytes()
    with path.open("r+b", buffering=0) as f:
        for group in changes:
            for offset, mask in group:
                os.pwrite(f.fileno(), bytes([whole[offset] ^ mask]), offset)
            with pytest.raises(journal_rows.DataError, match=rf"r\.rows.*case '{key[1]}' \(run 0\).*damaged"):
                reader.read(at, size, key)
            with pytest.raises(journal_rows.DataError, match=rf"case '{key[1]}' \(run 0\).*damaged"):
                reader.read_many([(0, at, ("s", "c0", 0)), (at, size, key)])
            for offset, _ in group:
                os.pwrite(f.fileno(), whole[offset:offset + 1], offset)
    assert reader.read(at, size, key) is not None
    reader.close()


def test_every_pair_of_flipped_bits_in_a_frame_s_header_is_found(tmp_path: Path) -> None:
    """Two bits flipped anywhere in a frame's header (its magic and lengths) or its CRC-32, the
    magic damaged into an older version's (`AEJ2`, `AEJ1`: one bit each from `AEJ3`) included,
    and its magic replaced by each older one, the lengths intact: each is a DataError naming the
    case, never a row read back (as an `AEJ1` frame's, it would be placed twice)."""
    rows = [(("s", f"c{i}", 0), b"{\n    " + bytes(range(40 + i)), f"d{i}") for i in range(2)]
    path = tmp_path / "r.rows"
    writer = RowsWriter(path)
    (_, _), (at, size) = writer.append([frame(k, row, d) for k, row, d in rows])
    writer.close()
    head = [*range(at, at + 16), *range(at + size - 4, at + size)]
    bits = [(i, 1 << b) for i in head for b in range(8)]
    pairs: list[list[tuple[int, int]]] = []
    for (i, m), (j, n) in itertools.combinations(bits, 2):
        pairs.append([(i, m | n)] if i == j else [(i, m), (j, n)])
    assert len(pairs) == 160 * 159 // 2
    whole = path.read_bytes()
    older = [[(at + i, whole[at + i] ^ magic[i]) for i in range(4) if whole[at + i] != magic[i]]
             for magic in (b"AEJ2", b"AEJ1")]
    _damaged_at(path, at, size, rows[1][0], [[b] for b in bits] + pairs + older)


@pytest.mark.parametrize("magic", [b"AEJ2", b"AEJ1"])
def test_every_flipped_bit_of_an_older_frame_is_found(tmp_path: Path, magic: bytes) -> None:
    """An older version's frame (its header outside its CRC-32) with a bit flipped anywhere is
    a DataError too, its magic damaged into this version's (one bit) included."""
    key = ("s", "c1", 0)
    before = _spelt_older(b"AEJ2", ("s", "c0", 0), b"{\n    1", "")
    frame_ = _spelt_older(magic, key, b"{\n    " + bytes(range(50)), "d1")
    path = tmp_path / "r.rows"
    path.write_bytes(before + frame_)
    at, size = len(before), len(frame_)
    _damaged_at(path, at, size, key, [[(i, 1 << b)] for i in range(at, at + size) for b in range(8)])


def test_a_removed_rows_file_is_freed_though_still_open(tmp_path: Path) -> None:
    """`remove` (run beside by `Journal.forget`) frees the file's blocks itself: the run's writer
    holds it open until the journal is closed, and the last close of an unlinked file frees it
    (0.16-0.19 s for a 10,000-case run's 134 MB, on the command's last step)."""
    path = journal_rows.rows_path(tmp_path, "20250101-000000-aaaaaa")
    writer = RowsWriter(path)
    writer.append([frame(("s", "c0", 0), b"{\n  \"x\": 1\n}", "d") for _ in range(200)])
    held = os.open(path, os.O_RDONLY)
    try:
        assert os.fstat(held).st_size > 0
        journal_rows.remove(path)
        assert not path.exists()
        assert os.fstat(held).st_size == 0  # (freed now, not at the last close)
        journal_rows.remove(path)  # (gone already: nothing to do)
    finally:
        os.close(held)
        writer.close()
