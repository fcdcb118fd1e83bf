"""The nesting limit of JSON input: how deep a document may nest, checked before it is parsed.

Python's `json` recurses once per level and ends in a RecursionError near 1,000 levels;
pydantic-core parses at most about 200 and serialises at most about 250. A limit below all of
them, checked on the raw bytes, makes too deep input a located error instead of a traceback (or
of a run that only fails when its result is written).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from agenteval.errors import DataError

MAX_DEPTH = 100
"""How deep objects and arrays may nest in the files a user writes: eval sets (every format),
configs and session files. Real eval sets nest about 15 levels, tool-call arguments included."""

MAX_RESULT_DEPTH = 128
"""The limit for result documents (and the default for other JSON): they hold an eval set's
invocations, and the config, one or two levels deeper than those files do, so whatever passed
`MAX_DEPTH` can be read back."""

# Every byte but the structural ones (brackets, and quotes that delimit strings) is dropped.
NOT_STRUCTURE = bytes(range(256)).translate(None, b'[]{}"')
NOT_STRUCTURE_OR_BACKSLASH = bytes(range(256)).translate(None, b'[]{}"\\')
"""The bytes `bytes.translate` drops to keep a JSON text's brackets, quotes and backslashes."""
_ONE_BRACKET = bytes.maketrans(b"[{]}", b"(())")
_STRING = re.compile(rb'"[^"]*"')
_ESCAPE = re.compile(rb"\\.", re.S)
_TOKEN = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{},:]', re.S)
_MANY_ESCAPES = 1 << 16


def too_deep(data: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text `data` nests objects and arrays more than `limit` deep.

    Runs at C speed (bytes.translate and bytes.replace, no Python loop per character): about
    1.3 ms per MB. For malformed JSON the answer errs on the side of True, so that a parser
    never recurses past `limit` before it finds the mistake (`deepest_path` tells).
    """
    s = _structure(data)
    # Quotes now alternate open/close, so removing two adjacent ones keeps that true: what is
    # left between a pair is brackets written inside strings, removed next (rarely present).
    s = s.replace(b'""', b"")
    if b'"' in s:
        s = _STRING.sub(b"", s)
    s = s.translate(_ONE_BRACKET)
    # Each pass removes every innermost pair `()`, i.e. exactly one level of every branch.
    for passes in range(limit + 1):
        shorter = s.replace(b"()", b"")
        if len(shorter) == len(s):
            # Only unmatched brackets are left, `)...)(...(` (none in well-formed JSON). A parser
            # goes one level deeper for each unmatched `(` before it fails, so they count too.
            return passes + s.count(b"(") > limit
        s = shorter
    return True


def _structure(data: bytes) -> bytes:
    """The brackets of `data` and the quotes that delimit its strings, in order."""
    if data.count(b"\\") > _MANY_ESCAPES:  # a Python step per escape stops paying off: one regex pass
        return _ESCAPE.sub(b"  ", data).translate(None, NOT_STRUCTURE)
    return structure_of_few_escapes(data)[0]


def structure_of_few_escapes(data: bytes, kept: bytes | None = None) -> tuple[bytes, bool]:
    """The brackets and string-delimiting quotes of `data` (whose escapes all end inside it),
    and whether it may hold a surrogate escape (`\\uD...`). A Python step per escape on top of
    C-speed passes over the whole: for text whose escapes are few, as JSON's are. `kept`:
    `data.translate(None, NOT_STRUCTURE_OR_BACKSLASH)`, when the caller has made it."""
    # Each backslash is looked at to find the escaped quotes, which are then dropped from the
    # translated text (its k-th backslash is the k-th here).
    quoted: list[int] = []  # indices, among all backslashes, of those escaping a quote
    maybe_surrogate = False
    count = 0
    i = data.find(b"\\")
    while i >= 0:
        escaped = data[i + 1:i + 2]
        if escaped == b'"':
            quoted.append(count)
        elif escaped == b"\\":
            count += 1  # the escaped backslash is one too
        elif escaped == b"u" and data[i + 2:i + 3] in (b"d", b"D", b""):
            maybe_surrogate = True
        count += 1
        i = data.find(b"\\", i + 2)
    if kept is None:
        kept = data.translate(None, NOT_STRUCTURE_OR_BACKSLASH)
    if not quoted:
        return kept.replace(b"\\", b""), maybe_surrogate
    parts = kept.split(b"\\")
    for k in quoted:
        parts[k + 1] = parts[k + 1][1:]  # the escaped quote right after backslash k
    return b"".join(parts), maybe_surrogate


def check_depth(file: str | Path | None, data: bytes, limit: int) -> None:
    """Raises a DataError naming the JSON path where `data` nests deeper than `limit`. Returns
    if it does not, and if it is malformed before it does (the parser reports that, having
    recursed at most `limit` levels)."""
    if not too_deep(data, limit):
        return
    where = deepest_path(data, limit)
    if where is not None:
        raise DataError(file, where, f"nested more than {limit} levels deep, the most "
                        "agenteval reads")


def deepest_path(data: bytes, limit: int) -> str | None:
    """The JSON path of the first object or array at depth `limit + 1` (the container
    holding it), e.g. `eval_cases[0].session_input.state.a`; None if there is none before the
    text turns out malformed (a closing bracket too many, a bad key). A Python-level scan that
    counts the brackets a parser would have entered, used only once input may be too deep."""
    path: list[str | int | None] = []  # per open container: the key or index being read
    key: bytes | None = None
    for match in _TOKEN.finditer(data):
        token = match.group()
        char = token[:1]
        if char == b'"':
            key = token
        elif char in (b"[", b"{"):
            if len(path) == limit:
                return _render(path)
            path.append(0 if char == b"[" else None)
        elif char in (b"]", b"}"):
            if not path:
                return None
            path.pop()
        elif char == b"," and path and isinstance(path[-1], int):
            path[-1] += 1
        elif char == b":" and path and key is not None:
            try:
                path[-1] = json.loads(key)
            except ValueError:
                return None
    return None


def _render(path: list[str | int | None]) -> str:
    out = ""
    for item in path:
        if isinstance(item, int):
            out += f"[{item}]"
        elif item is not None:
            out += f".{item}" if out else item
    return out
