"""The run journal's frames (`store.journal_rows`) made and read, counted in instructions.

    python bench/bench_frames.py [--src DIR ...] [--frames 10000] [--row 14000] [--write-only]
    python bench/bench_frames.py --convert STORE

For each tree (`--src`, compiled to bytecode first), `RowsWriter.append_many` of `--frames`
frames (rows of `--row` bytes, a digest on every other one, in batches of 64 as the journal's
writer thread writes them) into a fresh rows file, then `RowsReader.read_many` of all of them
in blocks of 256 (as a resume asks), each run under `valgrind --tool=cachegrind --cache-sim=no`
once doing the work and once only the set-up; the difference is printed, and per frame
(threads run one at a time under valgrind: the counts hold at any load). `--write-only`
counts the writing alone.

`--convert STORE` rewrites the rows files of a store root's journal (`STORE/.agenteval/
journal.rows/*.rows`) frame by frame from the format before 2026-11-27 (`AEJ2`: the CRC-32
after the lengths, over key, row and digest) into this one (`AEJ3`: the CRC-32 last, over the
whole frame). A frame keeps its size and offset, so the journal's SQLite rows still name it:
the same killed run, in either format, for an A/B of the reader (`bench_resume_instructions.py`).
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import tempfile
import zlib
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
import instructions  # noqa: E402
from bench_journal import compiled  # noqa: E402

_OLD = struct.Struct("<4sIIII")
_NEW = struct.Struct("<4sIII")


def convert(store: Path) -> None:
    """See the module docstring (`--convert`); a torn last frame is left as it is."""
    for path in sorted((store / ".agenteval" / "journal.rows").glob("*.rows")):
        data = bytearray(path.read_bytes())
        at = converted = 0
        while at + _OLD.size <= len(data):
            magic, nk, nr, nd, _ = _OLD.unpack_from(data, at)
            end = at + _OLD.size + nk + nr + nd
            if end > len(data):
                break
            if magic != b"AEJ2":
                raise SystemExit(f"{path}: a frame of magic {magic!r} at byte {at}")
            body = _NEW.pack(b"AEJ3", nk, nr, nd) + bytes(data[at + _OLD.size:end])
            data[at:end] = body + struct.pack("<I", zlib.crc32(body))
            at, converted = end, converted + 1
        path.write_bytes(bytes(data))
        print(f"{path}: {converted} frames converted, {len(data) - at} bytes after them left as they were")


def work(frames: int, row: int, do: bool, read: bool = True) -> None:
    """Writes the frames and, with `read`, reads them (with `do`; without it, only the imports
    and the items)."""
    from agenteval.store.journal_rows import RowsReader, RowsWriter

    body = b"{\n    " + b"x" * (row - 6)
    items = [("set", f"case_{i:05d}", 0, body, "d" * 300 if i % 2 else "") for i in range(frames)]
    if not do:
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.rows"
        writer = RowsWriter(path)
        places = []
        for i in range(0, frames, 64):
            places += writer.append_many(items[i:i + 64])
        writer.close()
        if not read:
            return
        reader = RowsReader(path)
        asked = [(at, size, item[:3]) for (at, size), item in zip(places, items, strict=True)]
        read = 0
        for i in range(0, frames, 256):
            read += sum(r is not None for r in reader.read_many(asked[i:i + 256]))
        reader.close()
        assert read == frames


def counted(src: str, frames: int, row: int, do: bool, read: bool) -> int:
    argv = [os.path.realpath(sys.executable), __file__, "--child", "work" if do else "base",
            "--frames", str(frames), "--row", str(row), *([] if read else ["--write-only"])]
    return instructions.count(argv, src)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", nargs="+", default=[str(BENCH_DIR.parent / "src")])
    ap.add_argument("--frames", type=int, default=10_000)
    ap.add_argument("--row", type=int, default=14_000)
    ap.add_argument("--write-only", action="store_true", help="count the writing alone")
    ap.add_argument("--convert", type=Path, metavar="STORE")
    ap.add_argument("--child", choices=["work", "base"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.convert:
        convert(args.convert)
        return
    if args.child:
        work(args.frames, args.row, args.child == "work", not args.write_only)
        return
    compiled(*args.src)
    for src in args.src:
        read = not args.write_only
        spent = counted(src, args.frames, args.row, True, read) - \
            counted(src, args.frames, args.row, False, read)
        print(f"{src}: {spent / 1e6:,.1f} M instructions, {spent / args.frames:,.0f} a frame "
              f"({args.frames} frames of {args.row} bytes, written{' and read' if read else ''})", flush=True)


if __name__ == "__main__":
    main()
