"""The items of a trusted eval-set file's case list, and their eval ids, found at C speed.

A resumed run reads its eval-set file again to reach the cases it has left. When the file's
bytes are those the run journaled (`StreamedCases.trusted`: checked whole when the run began),
nothing in it needs checking again: only each item's place and eval id are needed, to tell a
kept case from one to run. ijson built each item as Python values from its own events (≈ 6 µs
an item of the 10,000-case bench set); the standard library's C scanner, with this walk's
Python around it, takes ≈ 3.5 µs. The file is read as Latin-1, a window of blocks at a time
(memory stays a block or two, but for an item larger than a block), so that a character's
index is its byte's offset and the item's bytes are given back exactly; the caller parses an
item it runs from those bytes as before (ijson), so its values are what they were. An eval id
read this way is used only when it is ASCII (a UTF-8 character reads as two to four Latin-1
ones). Anything the walk does not read the way ijson does (a second case list, an item that is
not an object, bytes the scanner refuses: read to the file's end first) raises `Unread` where
it is met: the caller goes on with ijson from that item.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

_BLOCK = 1 << 20
_SPACE = re.compile(r"[ \t\n\r]*")
_NEXT = re.compile(r"[ \t\n\r]*([,\]])[ \t\n\r]*")  # after an item: the next one, or the list's end
# The decoder's scanner (C: `json.scanner.c_make_scanner`): the JSON value at an index of a str,
# and the index after it.
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


class Unread(Exception):
    """The walk met something it does not read as ijson does (see the module's docstring)."""


Item = tuple[str | None, str, int, int]
"""An item's eval id (None: not an ASCII string), the window it is in and its [start, end) there:
its bytes are `window[start:end].encode("latin-1")`."""


def walk(path: str | Path, list_key: str) -> Iterator[Item]:
    """Each item of the list at `list_key` of the JSON object in file `path`, in order (see
    `Item`); `Unread` where the file is not read as ijson reads it. Every item must be an object."""
    with open(path, "rb") as f:
        head = f.read(_BLOCK)
        at = len(codecs.BOM_UTF8) if head.startswith(codecs.BOM_UTF8) else 0
        buf, eof = head.decode("latin-1"), len(head) < _BLOCK

        def more(keep: int) -> bool:
            """Drops the window before `keep` and reads a block more (False at the file's end)."""
            nonlocal buf, eof
            if eof:
                return False
            block = f.read(_BLOCK)
            eof = len(block) < _BLOCK
            buf = buf[keep:] + block.decode("latin-1")
            return True

        def value(i: int) -> tuple[Any, int, int]:
            """The JSON value at `i`, where it starts and where it ends, in the window as it is
            then (blocks read while it is cut off, or ends where the window does)."""
            while True:
                try:
                    got, end = _scan(buf, i)
                    if end < len(buf) or eof:  # (a number that ends the window may go on after it)
                        return got, i, end
                except (StopIteration, ValueError):
                    if eof:
                        raise Unread from None
                more(i)
                i = 0

        def space(i: int) -> int:
            """The first non-space at or after `i` (blocks read as needed), or len(buf) at the end."""
            while True:
                i = _SPACE.match(buf, i).end()  # type: ignore[union-attr]
                if i < len(buf) or not more(i):
                    return i
                i = 0

        i = space(at)
        if buf[i:i + 1] != "{":
            raise Unread
        i = space(i + 1)
        seen = False
        while buf[i:i + 1] != "}":
            key, _, i = value(i)
            i = space(i)
            if not isinstance(key, str) or buf[i:i + 1] != ":":
                raise Unread
            i = space(i + 1)
            if key != list_key:
                _, _, i = value(i)
            else:
                if seen or buf[i:i + 1] != "[":
                    raise Unread  # (a second list's items follow the first's in ijson's reading)
                seen = True
                i = space(i + 1)
                if buf[i:i + 1] == "]":
                    i += 1
                else:
                    while True:
                        item, i, end = value(i)
                        if item.__class__ is not dict:
                            raise Unread
                        eval_id = item.get("eval_id")
                        ascii_id = eval_id if eval_id.__class__ is str and eval_id.isascii() else None
                        yield ascii_id, buf, i, end
                        m = _NEXT.match(buf, end)
                        while m is None or m.end() == len(buf):  # (the separator, and what follows it)
                            if not more(end):
                                break
                            end = 0
                            m = _NEXT.match(buf, end)
                        if m is None:
                            raise Unread
                        i = m.end()
                        if m.group(1) == "]":
                            break
            i = space(i)
            if buf[i:i + 1] == ",":
                i = space(i + 1)
                if buf[i:i + 1] == "}":
                    raise Unread
            elif buf[i:i + 1] != "}":
                raise Unread
        if not seen or space(i + 1) != len(buf):
            raise Unread
