"""Checking a JSON file's nesting a chunk at a time, before a streaming parser reads it.

`nesting.too_deep` needs the whole text in memory; a file read as a stream (see
`datasets.stream`) is checked here instead, in chunks of `CHUNK` bytes, so that memory does not
grow with the file. The same C-speed steps apply to each chunk (escapes dropped, every byte but
brackets and quotes dropped, strings removed, innermost bracket pairs removed pass by pass),
with what a chunk leaves open (the depth, a string not yet closed, a trailing backslash)
carried into the next. A streaming parser must never see a nesting bomb: ijson's builder
takes time and memory without bound on one (measured: 100,000 levels did not finish in 60 s).
"""

from __future__ import annotations

import codecs
import os
import re
import stat
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from agenteval.datasets.files import parse_json, read_bytes, reading
from agenteval.datasets.nesting import NOT_STRUCTURE, NOT_STRUCTURE_OR_BACKSLASH, structure_of_few_escapes

CHUNK = 4 << 20

# A chunk with at most one escape in this many bytes drops them a step each; denser, and two
# bytes.replace passes are cheaper (16,384 escapes in a 4 MiB chunk; a `score` worker's chunk of
# 250 cases, ≈ 1 MB, was held to the same 16,384 and took the dearer way: bench/README.md, session 33).
_BYTES_AN_ESCAPE = 256
_ONE_BRACKET = bytes.maketrans(b"[{]}", b"(())")
_STRING = re.compile(rb'"[^"]*"')
# A \uD800-\uDFFF escape that is not half of a pair: JSON allows one alone, UTF-8 cannot hold
# it (see `files.parse_json`). ijson would replace it, so the file must not reach it unnoticed.
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_HIGH = re.compile(rb"\\u[dD][89abAB]")


class DepthScan:
    """Feeds a JSON text in pieces; `deepest` is an upper bound of how deep it nests (exact
    when it is fed whole; in chunks, at most the depth at a chunk's end too high, which errs on
    the side of refusing), and `surrogates` whether it may hold a
    surrogate escape that is not half of a pair (a chunk's last escape counts as lone)."""

    def __init__(self) -> None:
        self.depth = 0
        self.deepest = 0
        self.surrogates = False
        self._in_string = False
        self._carry = b""
        self._tail = b""  # the last bytes seen: a surrogate escape may straddle two chunks

    def feed(self, chunk: bytes, limit: int) -> None:
        data = self._carry + chunk if self._carry else chunk
        self._carry = b""
        if data.endswith(b"\\"):  # the escape's second byte is in the next chunk
            run = len(data) - len(data.rstrip(b"\\"))
            if run % 2:
                data, self._carry = data[:-1], b"\\"
        # The brackets, quotes and backslashes, whose backslashes are the text's escapes
        # (counted in these few bytes: counting them in the whole text took as long as this).
        kept = data.translate(None, NOT_STRUCTURE_OR_BACKSLASH)
        escapes = kept.count(b"\\")  # JSON text has few (a corpus: 4,000 in 37 MB)
        if not escapes:
            s = kept
            maybe_surrogate = b"\\" in self._tail  # an escape begun in the last chunk
        elif escapes * _BYTES_AN_ESCAPE <= len(data):
            s, maybe_surrogate = structure_of_few_escapes(data, kept)
            maybe_surrogate = maybe_surrogate or b"\\" in self._tail
        else:
            # Escaped backslashes, then escaped quotes: pairs are taken from the left, as a
            # parser reads them, and bytes.replace builds no object per escape (a regex sub
            # over an 8 MB chunk holding a million escapes briefly took 140 MB).
            maybe_surrogate = any(p in data for p in (b"\\ud", b"\\uD")) or b"\\" in self._tail
            if b"\\\\" in data:
                data = data.replace(b"\\\\", b"")
            if b'\\"' in data:
                data = data.replace(b'\\"', b"")
            s = data.translate(None, NOT_STRUCTURE)
        if maybe_surrogate and not self.surrogates:  # rare: the exact check, with the regex
            self.surrogates = _lone_surrogate(self._tail + chunk)
        self._tail = (self._tail + chunk)[-11:] if len(chunk) < 11 else chunk[-11:]
        if self._in_string:
            end = s.find(b'"')
            if end < 0:
                return
            s, self._in_string = s[end + 1:], False
        # Outside a string quotes alternate open/close: dropping adjacent pairs keeps that so.
        s = s.replace(b'""', b"")
        if b'"' in s:
            s = _STRING.sub(b"", s)
            if b'"' in s:  # a string left open at the chunk's end
                s, self._in_string = s[:s.index(b'"')], True
        t = s.translate(_ONE_BRACKET)
        passes = 0  # each removes the innermost pairs: one level of every branch
        while passes <= limit and len(shorter := t.replace(b"()", b"")) != len(t):
            t, passes = shorter, passes + 1
        # Left: `)` a times, then `(` b times. A point of the chunk is at most `passes` levels
        # inside pairs it closes itself, below at most b unclosed `(` before it: so at most
        # depth + b + passes deep (exact when the deepest pair is inside every unclosed one).
        closed = t.count(b")")
        opened = len(t) - closed
        self.deepest = max(self.deepest, self.depth + opened + passes)
        self.depth = max(self.depth - closed, 0) + opened  # too many closers: the parser says so


def _lone_surrogate(data: bytes) -> bool:
    """Whether `data` holds a surrogate escape that is not half of a high-low pair (an escape
    at its very end counts as lone: the scan then errs towards the careful path)."""
    escapes = [(m.start(), m.group()) for m in _SURROGATE.finditer(data)]  # rare: a loop is fine
    i = 0
    while i < len(escapes):
        at, escape = escapes[i]
        if not _HIGH.match(escape):
            return True  # a low half with no high one before it
        if i + 1 == len(escapes) or escapes[i + 1][0] != at + 6 or _HIGH.match(escapes[i + 1][1]):
            return True
        i += 2
    return False


def chunks(f: BinaryIO, size: int = CHUNK) -> Iterator[bytes]:
    first = True
    while block := f.read(size):
        if first and block.startswith(codecs.BOM_UTF8):
            block = block[len(codecs.BOM_UTF8):]
        first = False
        yield block


_PASSED: OrderedDict[tuple[int, int, int, int, int], DepthScan] = OrderedDict()
_PASSED_MAX = 16
_passed_lock = threading.Lock()


def _identity(f: BinaryIO, limit: int) -> tuple[int, int, int, int, int] | None:
    """What tells an unchanged regular file apart (None for pipes and devices)."""
    st = os.fstat(f.fileno())
    if not stat.S_ISREG(st.st_mode):
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, limit


def scan_file(path: str | Path, limit: int) -> DepthScan:
    """Scans the file at `path` without holding it: a DataError naming it (and, as
    `files.parse_json` does, the JSON path) when it nests deeper than `limit` or holds a lone
    surrogate escape. A regular file that passed with this limit and has not changed since
    (device, inode, size, modification time) is not scanned again: a command reads the head of
    a large set before streaming it, each read checking it first."""
    scan = DepthScan()
    with reading(path), open(path, "rb") as f:
        key = _identity(f, limit)
        with _passed_lock:
            passed = _PASSED.get(key) if key is not None else None
        if passed is not None:
            return passed
        for block in chunks(f):
            scan.feed(block, limit)
            if scan.deepest > limit:
                break
    if scan.deepest > limit or scan.surrogates:
        # Bad input only: read whole, by the standard parser, to name the place.
        parse_json(path, read_bytes(path), limit)
    if key is not None:
        with _passed_lock:
            _PASSED[key] = scan
            while len(_PASSED) > _PASSED_MAX:
                _PASSED.popitem(last=False)
    return scan


__all__ = ["CHUNK", "DepthScan", "chunks", "scan_file"]
