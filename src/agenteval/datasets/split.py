"""Where each item of a JSON file's top-level list lies, found without parsing the file, so
that worker processes can each parse and score their own share of the items.

Only indented files are split (as ADK, agenteval and `json.dump(indent=...)` write them): a raw
newline is never inside a JSON string, so an item that opens with `{` at the start of a line
indented W spaces ends at the first later line that starts with W spaces and `}`. The spans
are a guess that the caller must confirm: each must parse as one JSON object, and the bytes
between them are only commas and whitespace (checked here), so a file laid out otherwise makes
an item fail to parse rather than be split wrongly. Anything unexpected gives None (read the
file as a stream instead), never an error: errors are the streaming reader's to report.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from agenteval.datasets.nesting import structure_of_few_escapes

Span = tuple[int, int]  # [start, end) byte offsets of one item in the file

_BLOCK = 1 << 20  # a reader holds about two (an item being read may straddle them)
_MARGIN = 256
_SPACE = b" \t\r\n"
_STRING = re.compile(rb'"[^"]*"')
# After an item: a comma, and the next item's `{` at the start of a line indented with spaces
# only, the line's start within `_MARGIN` bytes before it (as `ItemWalk` reads it step by step).
_NEXT = re.compile(rb"[ \t\r\n]*,[ \t\r\n]*\n( {0,%d})\{" % (_MARGIN - 1))


class _Window:
    """Bytes of a file around a moving position, read a block at a time (memory stays a block
    or two, whatever the file's size)."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        self.base = 0  # file offset of buf[0]
        self.buf = b""
        self.eof = False
        self.hold: int | None = None  # the first offset to keep, if any

    def _more(self, keep_from: int) -> bool:
        if self.eof:
            return False
        block = self.f.read(_BLOCK)
        if not block:
            self.eof = True
            return False
        # What comes before `keep_from` goes, but for a margin: an item's indentation is read
        # from the bytes just before it. Nothing from `hold` on goes (an item being read).
        if self.hold is not None:
            keep_from = min(keep_from, self.hold)
        drop = max(0, min(keep_from, self.base + len(self.buf)) - _MARGIN - self.base)
        self.buf = self.buf[drop:] + block
        self.base += drop
        return True

    def find(self, marker: bytes, start: int, pattern: re.Pattern[bytes] | None = None) -> int:
        """The file offset of the first `marker` at or after `start`; -1 if none. `pattern`:
        `marker` compiled as a literal, searched instead (`re` finds an item's end in indented
        JSON twice as fast as `bytes.find`, whose skip stops at every space of the indents)."""
        while True:
            if pattern is None:
                i = self.buf.find(marker, max(start - self.base, 0))
            else:
                m = pattern.search(self.buf, max(start - self.base, 0))
                i = -1 if m is None else m.start()
            if i >= 0:
                return self.base + i
            # A marker may straddle the end of the window: its start is kept.
            if not self._more(max(start, self.base + len(self.buf) - len(marker) + 1)):
                return -1

    def skip_space(self, at: int) -> tuple[int, bytes]:
        """The offset of the first byte at or after `at` that is not whitespace, and the byte
        (b"" at the end of the file)."""
        while True:
            i = at - self.base
            while i < len(self.buf) and self.buf[i] in _SPACE:
                i += 1
            if i < len(self.buf):
                return self.base + i, self.buf[i:i + 1]
            at = self.base + i
            if not self._more(at):
                return at, b""

    def before(self, at: int, n: int) -> bytes:
        """Up to `n` bytes before offset `at` (only those still in the window)."""
        i = at - self.base
        return self.buf[max(i - n, 0):max(i, 0)]


def item_spans(path: str | Path, list_key: str, max_head: int = 1 << 20) -> list[Span] | None:
    """The spans of the items of top-level `list_key` (a non-empty list of objects) in the
    indented JSON object at `path`; None when the file is not laid out so (compact, the list
    not found within `max_head` bytes, not at the top level, empty, an item not an object)."""
    with open(path, "rb") as f:
        walk = ItemWalk(f, list_key, max_head)
        spans = list(walk)
    return spans if walk.closed_at is not None else None


class ItemWalk:
    """The spans of the items of top-level `list_key` in the indented JSON object read from
    `f`, found one at a time as `item_spans` finds them (memory: a block or two). Iterating
    yields each span while its bytes are still in the window (`bytes_of`). `head` is the
    document's bytes up to the list's `[` included, once the list is found (None if they
    were no longer in the window then). When the iteration
    ends, `closed_at` is the offset just past the list's `]` if the whole list was laid out
    as expected, else None: the spans yielded are then only the first items' (none when the
    list was not found), and the rest of the file must be read otherwise."""

    def __init__(self, f: BinaryIO, list_key: str, max_head: int = 1 << 20) -> None:
        self.w = _Window(f)
        self.list_key = list_key
        self.max_head = max_head
        self.head: bytes | None = None
        self.closed_at: int | None = None

    def bytes_of(self, span: Span) -> bytes:
        """The bytes of the span just yielded (or of anything after it in the window)."""
        w = self.w
        return w.buf[span[0] - w.base:span[1] - w.base]

    def __iter__(self) -> Iterator[Span]:
        w, list_key = self.w, self.list_key
        if not w._more(0):
            return
        start = len(codecs.BOM_UTF8) if w.buf.startswith(codecs.BOM_UTF8) else 0
        key = w.find(b'"' + list_key.encode() + b'"', start)
        if key < 0 or key > self.max_head or not _top_level(w.buf[start:key - w.base]):
            return
        at, char = w.skip_space(key + len(list_key) + 2)
        if char != b":":
            return
        at, char = w.skip_space(at + 1)
        if char != b"[":
            return
        # (None if it has left the window: a head about a block long)
        self.head = w.buf[start - w.base:at + 1 - w.base] if w.base <= start else None
        end = at + 1
        close: bytes = b""
        pattern: re.Pattern[bytes] | None = None
        while True:
            at, char = w.skip_space(end)
            if char != b"{":
                return
            indent = w.before(at, _MARGIN)
            line = indent.rfind(b"\n")
            if line < 0 or indent[line + 1:].strip(b" "):
                return  # not at the start of an indented line
            spaces = indent[line + 1:]
            while True:
                if len(close) != len(spaces) + 2:  # (the items' indent: the same in a file)
                    close = b"\n" + spaces + b"}"
                    pattern = re.compile(re.escape(close))
                w.hold = at  # the item's bytes stay in the window until it is yielded
                found = w.find(close, at, pattern)
                w.hold = None
                if found < 0:
                    return
                end = found + len(close)
                yield at, end
                # The next item's start in one match where the window holds it (what the steps
                # below find, at C speed); else, and at the list's end, those steps.
                m = _NEXT.match(w.buf, end - w.base)
                if m is None:
                    break
                at, spaces = w.base + m.end() - 1, m.group(1)
            end, char = w.skip_space(end)
            if char == b"]":
                self.closed_at = end + 1
                return
            if char != b",":
                return
            end += 1


def _top_level(head: bytes) -> bool:
    """Whether the text before a key (from the document's start) leaves it directly inside
    the top-level object."""
    if head[:1] != b"{":
        return False
    s = structure_of_few_escapes(head)[0].replace(b'""', b"")
    s = _STRING.sub(b"", s)
    if b'"' in s:  # the key is inside a string
        return False
    depth = 0
    for char in s:
        depth += 1 if char in b"[{" else -1
    return depth == 1


__all__ = ["ItemWalk", "Span", "item_spans"]
