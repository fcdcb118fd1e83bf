"""What a `score` worker needs to write a case by orjson (`store.fast_json.placed_json`): the
guarantee its caller gives on values that may hold any JSON, read from the case's items' bytes
(`plain_numbers`: no number that may be a float of 1e16 or more), which costs what looking into
the values as they are written costs (`store.fast_json.placed_checked`, ≈ 20 µs a case of the
bench corpus either way) but shares the bytes' shape with `datasets.stream.read_item`'s check.
"""

from __future__ import annotations

from agenteval.datasets.stream import BYTE_SHAPES, has_exponents
from agenteval.datasets.stream import a_value as _a_value

# Bytes shaped as `datasets.stream` shapes them for its checks: digits 0, `e`/`E` e, signs +,
# `.` kept, letters, quotes and non-ASCII a, anything else a space.
_NUMBER = b"0.+e"
# A number with an exponent, or with 16 digits or more before its point, may be a float of
# 1e16 or more (smaller ones are caught with the first, which only costs the fast path); an
# integer is written alike by both, however long.
_EXPONENT, _DIGITS = b"0e", b"0" * 16


def plain_numbers(raw: bytes, shape: bytes | None = None, exponents: bool | None = None) -> bool:
    """Whether the JSON `raw` (as read from a file) holds no number that may be a float orjson
    writes otherwise than pydantic: none with an exponent or 16 digits before its point. (Items
    that would parse to NaN or an infinity are refused by `datasets.stream.read_item`.) Runs
    of such characters inside a string (an id like "52e599", prose's "1e3 times") are not
    numbers; one that sits as a value would (`"x: 1e3, y"`) only costs the fast path.
    `shape`: `raw.translate(BYTE_SHAPES)`, `exponents`: `datasets.stream.has_exponents(raw, shape)`,
    when the caller has made them (the raw bytes must be valid JSON, as a validated item's are;
    where `has_exponents` is False the shape's `0e` are ids', not looked at one by one)."""
    if shape is None:
        shape = raw.translate(BYTE_SHAPES)
    if exponents is None:
        exponents = has_exponents(raw, shape)
    for pattern in (_EXPONENT, _DIGITS) if exponents else (_DIGITS,):
        at = shape.find(pattern)
        while at >= 0:
            start, end = at, at + len(pattern)
            while start and shape[start - 1] in _NUMBER:
                start -= 1
            while end < len(shape) and shape[end] in _NUMBER:
                end += 1
            if (pattern is _EXPONENT or b"." in shape[start:end]) and _a_value(raw, start, end):
                return False
            at = shape.find(pattern, end)
    return True


__all__ = ["plain_numbers"]
