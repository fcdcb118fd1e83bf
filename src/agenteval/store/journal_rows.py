"""A journaled run's case-run rows, kept out of SQLite: one append-only file per run.

`<root>/.agenteval/journal.rows/<run id>.rows` holds, for each case run appended, a frame: a
header (`MAGIC`, then the lengths of the key, the row and the digest), the case run's key
(`[eval set id, eval id, run index]` as JSON), its row (the result's JSON as a result document
holds it, placed in the document's list: `store.output.placed_json`), its digest
(`store.digest`; empty when its case was told soon after it: `store.journal_writer`), and last
a CRC-32 of all of the frame before it, header included; and for each case told, its summary's
JSON as the document holds it, placed too (a frame whose run index is
`journal_writer.SUMMARY`, without a digest). The journal's SQLite tables keep each case run's
key and status and each case's verdict (`store.kept`), with the offset and size of the frame.
A resume copies a placed row into its document as it is (indenting 10,000 rows again was
0.13 s of a resume). Writing 10 KB rows into SQLite (its WAL, then its file, then deleting them
once the run is recorded) was most of what the journal cost a run; here a row is written once,
read back by offset (a resume copies it into its document), and the whole file goes with one
`unlink` when the run is forgotten.

Older frames are read too, so that a run killed by an older agenteval resumes (a resume appends
this version's frames to its file): `MAGIC_V2`'s (sessions 13 to 24) and `MAGIC_UNPLACED`'s
(session 12: rows as `store.output.result_json` gives them, placed when read) have their CRC-32
after the lengths (bytes 16 to 20), over the key, row and digest only, so some damage to their
header passes unseen: two flipped bits turn `AEJ2` into `AEJ1`, whose row is then placed again
(indented twice). A frame of this version whose magic is damaged into an older one is still an
error, whatever else of its header is damaged: it is then read with the older layout, which
looks for the key 4 bytes later than this one puts it (byte 20, not 16), and no key matches
itself 4 bytes on (`_key`'s JSON: its 5th and 6th bytes would be `["`; that quote, after a `[`,
ends the set id's string, so its 7th and 8th are `,"`, and its 3rd and 4th would be `,"` too, an
unescaped quote inside that string). The same holds for an older frame damaged into this
version. So no version needs recording elsewhere (SQLite holds a frame's offset and size only):
only damage that also rewrote the key's bytes and met an old CRC-32 by chance could pass. An
agenteval of before this version reads its frames as damaged.

Durability is the journal's (`store.journal`): the run's writer thread writes a batch's frames,
then commits their offsets to SQLite, so a committed offset names bytes the operating system
already has (a process killed mid-write leaves at most a torn frame that nothing names). A
frame that does not reach past the file's end is whole; one that does (the file truncated, e.g.
after a machine lost power) is not kept (`Journal.finished_keys` leaves it out), and its case
runs again. A frame that is there but whose magic, lengths, key or checksum does not match is
damage nothing can repair here: a DataError naming the file and the case run.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import struct
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from agenteval.datasets.targets import write_all
from agenteval.errors import DataError
from agenteval.store.output import place, safe_name

MAGIC = b"AEJ3"
MAGIC_V2 = b"AEJ2"  # (placed rows; a CRC-32 of key + row + digest after the lengths)
MAGIC_UNPLACED = b"AEJ1"  # (as `MAGIC_V2`, rows as `store.output.result_json` gives: placed when read)
_HEAD = struct.Struct("<4sIII")  # magic, key, row and digest lengths
_CRC = struct.Struct("<I")  # a CRC-32: this version's last 4 bytes, an older frame's bytes 16 to 20
_FIXED = _HEAD.size + _CRC.size  # a frame's bytes besides its key, row and digest (in every version)
_RESIDUE = zlib.crc32(b"\0" + _CRC.pack(zlib.crc32(b"\0")))
"""`zlib.crc32` of any bytes followed by their own CRC-32 (little-endian): a frame of this
version checks whole in one call, its stored CRC-32 included."""

CaseKey = tuple[str, str, int]  # (eval set id, eval id, run index)


def rows_dir(root: str | Path) -> Path:
    return Path(root) / ".agenteval" / "journal.rows"


def rows_path(root: str | Path, run_id: str) -> Path:
    """The rows file of run `run_id` of a store root."""
    return rows_dir(root) / f"{safe_name(run_id)}.rows"


_string = json.encoder.encode_basestring_ascii  # (C: what `json.dumps` uses for a str)


def _key(key: CaseKey) -> bytes:
    """The key's JSON as `json.dumps(key, separators=(",", ":"))` spells it, made from its parts
    (an encoder's call cost 2-3.5 µs a frame, read or written)."""
    return _spelt_key(_string(key[0]), key[1], key[2])


def _spelt_key(set_id: str, eval_id: str, index: int) -> bytes:
    """`_key` of a key whose eval set id is spelt already (`_string`): a reader spells a run's
    set id once for all its frames."""
    return f"[{set_id},{_string(eval_id)},{int(index)}]".encode()


def frame(key: CaseKey, row: bytes, digest: str) -> list[bytes]:
    """The pieces of one case run's frame, `row` placed (see the module docstring): written
    together without being joined first (a copy of each 10 KB row)."""
    return _framed([(*key, row, digest)])[0]


Framed = tuple[str, str, int, bytes, str]
"""A frame to write (`RowsWriter.append_many`): its key's eval set id, eval id and run index,
its row (placed) and its digest ("": none)."""


def _framed(items: Sequence[Framed]) -> tuple[list[bytes], list[int]]:
    """The pieces of `frame` of each of `items`, in order and flattened (an empty digest left
    out), and each frame's size: made in one loop (a call of `frame` and of `_key` per frame,
    and a frame's list and sum, were two fifths of the writer thread's CPU)."""
    string, crc, head, tail = _string, zlib.crc32, _HEAD.pack, _CRC.pack
    pieces: list[bytes] = []
    sizes: list[int] = []
    last_set, spelt = None, ""
    for set_id, eval_id, index, row, digest in items:
        if set_id is not last_set:  # (a run's frames are of one eval set, or few)
            last_set, spelt = set_id, string(set_id)
        k = f"[{spelt},{string(eval_id)},{int(index)}]".encode()
        # (The header and key as one piece: a CRC-32 call and a piece fewer than apart.)
        if digest:
            d = digest.encode()
            hk = head(MAGIC, len(k), len(row), len(d)) + k
            pieces += (hk, row, d, tail(crc(d, crc(row, crc(hk)))))
            sizes.append(4 + len(hk) + len(row) + len(d))  # (4: the CRC-32)
        else:
            hk = head(MAGIC, len(k), len(row), 0) + k
            pieces += (hk, row, tail(crc(row, crc(hk))))
            sizes.append(4 + len(hk) + len(row))
    return pieces, sizes


class RowsWriter:
    """Appends frames to one run's rows file (one writer per run: its owner's journal writer
    thread). Opened on the first append; the file is created then."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._end = 0

    def append(self, frames: Sequence[list[bytes]]) -> list[tuple[int, int]]:
        """Writes `frames` (each as `frame`'s pieces) at the end of the file, in one system call
        where it can; returns each frame's (offset, size). A write that fails (a full disk)
        leaves the file as it was, as far as truncation can, and is a DataError naming the file."""
        return self._append(list(itertools.chain.from_iterable(frames)), [sum(map(len, f)) for f in frames])

    def append_many(self, items: Sequence[Framed]) -> list[tuple[int, int]]:
        """`append` of the frame of each of `items` (the same bytes as `frame` makes)."""
        return self._append(*_framed(items))

    def _append(self, pieces: list[bytes], sizes: list[int]) -> list[tuple[int, int]]:
        try:
            if self._fd is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_BINARY", 0)  # (Windows)
                self._fd = os.open(self.path, flags, 0o644)
            self._end = os.lseek(self._fd, 0, os.SEEK_END)  # (the file's end, whoever changed it)
            write_all(self._fd, pieces)
        except OSError as e:
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, self._end)
            why = e.strerror or e
            raise DataError(self.path, "", f"cannot write the run journal's rows: {why}") from None
        places = []
        at = self._end
        for size in sizes:
            places.append((at, size))
            at += size
        self._end = at
        return places

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


_OLDER = (MAGIC_V2, MAGIC_UNPLACED)
_PREAD = hasattr(os, "pread")
_PREADV = hasattr(os, "preadv")
_SPAN = 1 << 20  # bytes of a rows file read at once by `read_many`
_GAP = 1 << 16
"""Bytes between two frames asked together beyond which `read_many` reads them apart: a batch's
summaries follow its rows in the file, so a span of summaries read whole re-read the rows
between them (a resume of 10,000 trivial cases read 243.5 MB of a 139.5 MB file)."""


class RowsReader:
    """Reads frames of one run's rows file by offset (usable from one thread at a time)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: BinaryIO | None = None  # (a file object: closed when collected, as a fd is not)
        self._bytes = bytearray()  # `_pread_into`'s buffer, and a view of it
        self._buffer: memoryview | None = None

    def read(self, at: int, size: int, key: CaseKey) -> tuple[bytes, str | None] | None:
        """The row (placed) and digest of case run `key` (None: the frame holds none, its case was
        told soon after it), whose frame is `size` bytes at `at`; None when
        the frame reaches past the file's end (cut short). A DataError when the file cannot be
        read or the frame is not `key`'s, unchanged."""
        data = self._pread(at, size)
        if len(data) < size:
            return None
        got: list[tuple[bytes, str | None] | None] = self._frames(data, memoryview(data), size, at,
                                                                   [(at, size, key)])
        return got[0]

    def _frames(self, data: bytes | bytearray, view: memoryview, end_of: int, lo: int,
                frames: Sequence[tuple[int, int, CaseKey]], copy: bool = True) -> list[Any]:
        """The row and digest of each of `frames` (offset, size, key), read from the first `end_of`
        bytes of `data` (`view` of it), the file's bytes from offset `lo`: None for a frame that
        reaches past them (cut short); a
        DataError for one that is not its key's, unchanged. One loop over the frames, each
        looked at in place (a call, a key's encoder and three slices a frame were most of a
        resume's reading of its rows). Without `copy`, each row is a view of `view` (the digest
        not read) and a frame cut short, or whose row is not a document's JSON, is a DataError
        too (`views`)."""
        out: list[Any] = []
        unpack, crc_at, crc32, string = _HEAD.unpack_from, _CRC.unpack_from, zlib.crc32, _string
        spelt_key, fixed, residue = _spelt_key, _FIXED, _RESIDUE
        last_set, spelt = None, ""
        for at, size, key in frames:
            o = at - lo
            if o + size > end_of:
                if not copy:
                    raise DataError(self.path, "", f"the run journal's rows file ends before the row of case "
                                    f"{key[1]!r} (run {key[2]}); run the eval again without --resume")
                out.append(None)
                continue
            set_id, eval_id, index = key
            if set_id is not last_set:  # (a run's frames are of one eval set, or few)
                last_set, spelt = set_id, string(set_id)
            k = spelt_key(spelt, eval_id, index)
            if size >= fixed:
                magic, nk, nr, nd = unpack(data, o)
                new = magic == MAGIC
                # (The two layouts' keys are 4 bytes apart: a frame whose magic is damaged into
                # the other layout's never shows its key where looked for: the module docstring.)
                key_at = o + 16 if new else o + 20
                # (One CRC-32 of the key and the body, the key compared first; this version's
                # covers the whole frame, its stored CRC-32 last: `_RESIDUE`.)
                if nk == len(k) and fixed + nk + nr + nd == size and data.startswith(k, key_at) and (
                        crc32(view[o:o + size]) == residue if new else
                        magic in _OLDER and crc32(view[key_at:o + size]) == crc_at(data, o + 16)[0]):
                    start = key_at + nk
                    if not copy:  # (a view, not a copy: the caller writes it before the next span)
                        got = view[start:start + nr] if magic != MAGIC_UNPLACED else \
                            place(bytes(view[start:start + nr]))
                        if got[:2] == b"{\n":  # (every row a rows file holds is a document's JSON)
                            out.append(got)
                            continue
                    else:
                        row = bytes(view[start:start + nr])
                        if magic == MAGIC_UNPLACED:
                            row = place(row)
                        digest = str(view[start + nr:start + nr + nd], "utf-8") or None if nd else None
                        out.append((row, digest))
                        continue
            raise DataError(self.path, "", f"the run journal's row of case {eval_id!r} (run {index}) of eval "
                            f"set {set_id!r} at byte {at} is damaged; run the eval again without --resume")
        return out

    def read_many(self, frames: Sequence[tuple[int, int, CaseKey]]) -> list[tuple[bytes, str | None] | None]:
        """`read` of each (offset, size, key) of `frames`, in order; frames near one another (a
        resumed run's consecutive kept cases) read with one system call per `_SPAN` bytes, a
        span ending where the next frame lies more than `_GAP` bytes beyond it."""
        out: list[tuple[bytes, str | None] | None] = []
        for data, view, n, lo, part in self._spans(frames):
            out += self._frames(data, view, n, lo, part)
        return out

    def views(self, frames: Sequence[tuple[int, int, CaseKey]]) -> Iterator[list[bytes | memoryview]]:
        """The rows (placed) of `frames`, in order, read as `read_many` reads them and given a
        span at a time, each row a view of the span as read, valid until the next span is asked
        for: what a document's writer writes to its targets without a copy of each row
        (`store.output.DocumentWriter.add_read`). A frame cut short is a DataError here, as is
        a damaged one, and so is a row that is not a document's JSON (every row this version
        and older ones wrote to a rows file is)."""
        for data, view, n, lo, part in self._spans(frames):
            yield self._frames(data, view, n, lo, part, copy=False)

    def _spans(self, frames: Sequence[tuple[int, int, CaseKey]]) -> Iterator[
            tuple[bytes | bytearray, memoryview, int, int, Sequence[tuple[int, int, CaseKey]]]]:
        """The spans `read_many` reads `frames` by (see there), in order: each as the bytes read
        (this reader's buffer, overwritten by the next span), a view of them, how many were
        read, the file offset they start at, and the frames within them."""
        i = 0
        while i < len(frames):
            lo, hi, j = frames[i][0], frames[i][0] + frames[i][1], i + 1
            while j < len(frames):  # the frames whose span stays within `_SPAN`, without gaps
                at, size, _ = frames[j]
                low = at if at < lo else lo  # (not min and max: two calls for each frame)
                high = at + size if at + size > hi else hi
                if high - low > _SPAN or at - hi > _GAP or lo - at - size > _GAP:
                    break
                lo, hi, j = low, high, j + 1
            if j - i == 1:  # (its own read: a frame may be larger than the buffer)
                data = self._pread(lo, hi - lo)
                yield data, memoryview(data), len(data), lo, frames[i:j]
            else:
                n = self._pread_into(lo, hi - lo)
                assert self._buffer is not None
                yield self._bytes, self._buffer, n, lo, frames[i:j]
            i = j

    def _pread_into(self, at: int, size: int) -> int:
        """Reads up to `size` (<= `_SPAN`) bytes at `at` into the start of this reader's buffer
        (valid until the next call) and returns how many: a fresh megabyte each span cost a page
        fault per page, in system time more than the reads saved."""
        if self._buffer is None:
            self._bytes = bytearray(_SPAN)
            self._buffer = memoryview(self._bytes)
        if not _PREADV:  # (Windows, older macOS)
            data = self._pread(at, size)
            self._buffer[:len(data)] = data
            return len(data)
        try:
            n: int = os.preadv(self._opened().fileno(), [self._buffer[:size]], at)
        except OSError as e:
            raise self._unreadable(e) from None
        return n

    def _pread(self, at: int, size: int) -> bytes:
        """Up to `size` bytes at `at` (fewer past the file's end)."""
        try:
            f = self._opened()
            if _PREAD:  # one system call, not a seek and a read
                return os.pread(f.fileno(), size, at)
            f.seek(at)  # (Windows)
            return f.read(size)
        except OSError as e:
            raise self._unreadable(e) from None

    def _opened(self) -> BinaryIO:
        if self._file is None:
            self._file = open(self.path, "rb", buffering=0)  # noqa: SIM115 (closed by close)
        return self._file

    def _unreadable(self, e: OSError) -> DataError:
        return DataError(self.path, "", f"cannot read the run journal's rows: {e.strerror or e}")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


Scanned = tuple[CaseKey, memoryview, int, int]
"""A frame found by `scan`: its key, its row (placed; a view of the bytes read), offset and size."""


def scan(path: Path, start: int) -> tuple[list[Scanned], int]:
    """The frames of this version from offset `start` of the rows file at `path` to its end, one
    after another as the writer appends them, and the offset where the last whole one ends: the
    scan stops at the first frame that is cut short (a write a kill interrupted), damaged or of
    an older version, and what follows it is never named (`store.journal_tail`). A summary's
    frame (run index `SUMMARY`) is given as any other. An unreadable file is a DataError."""
    try:
        with open(path, "rb", buffering=0) as f:
            f.seek(start)
            data = f.read()
    except (FileNotFoundError, IsADirectoryError):  # (none written; a directory: none could be)
        return [], start
    except OSError as e:
        raise DataError(path, "", f"cannot read the run journal's rows: {e.strerror or e}") from None
    view, found, o = memoryview(data), [], 0
    while o + _FIXED <= len(data):
        magic, nk, nr, nd = _HEAD.unpack_from(data, o)
        size = _FIXED + nk + nr + nd
        if magic != MAGIC or o + size > len(data) or zlib.crc32(view[o:o + size]) != _RESIDUE:
            break
        try:
            set_id, eval_id, index = json.loads(bytes(view[o + 16:o + 16 + nk]))
        except ValueError:  # (a CRC-32 that matched by chance)
            break
        found.append(((set_id, eval_id, index), view[o + 16 + nk:o + 16 + nk + nr], start + o, size))
        o += size
    return found, start + o


def file_size(path: Path) -> int:
    """The size of a rows file (0: there is none), what `intact` compares frames with."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def remove(path: Path) -> None:
    """Removes a rows file (a forgotten run's), if there is one, its blocks freed here: it is
    emptied first, then unlinked. An unlinked file still open (the run's writer holds it until
    the journal is closed) is freed only at its last close, which for a 10,000-case run's 134 MB
    was 0.16-0.19 s of the command's last step (`Journal.close`, after everything else) at load
    14; emptied here, on `Journal.forget`'s thread beside, that close frees nothing. A reader
    still reading it (none once the run is recorded) finds it cut short."""
    with contextlib.suppress(FileNotFoundError):
        os.truncate(path, 0)
        path.unlink()


__all__ = ["MAGIC", "MAGIC_UNPLACED", "MAGIC_V2", "Framed", "RowsReader", "RowsWriter", "Scanned",
           "file_size", "frame", "remove", "rows_dir", "rows_path", "scan"]
