"""Reading a large eval set or result document one case at a time.

`CaseStream` reads a document's top-level list (`eval_cases` of an eval set,
`eval_case_results` of a result document) item by item and validates each item on its own, so
memory holds one case at a time however many the file has: an indented file's items from
their bytes (found by their lines, `datasets.split`), any other with ijson's C parser. The file
is first scanned for nesting deeper than the limit (`datasets.scan`). An invalid item is a
DataError naming the file and the item's JSON path (`eval_cases[7].conversation[0]...`), as
when the file is loaded whole.

The other top-level keys (`eval_set_id`, ...) are read before the list when they come first,
as every writer of these files puts them; one that comes after the list costs a second pass.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Generic, TypeVar

import ijson
from pydantic import BaseModel, ValidationError

from agenteval.datasets.files import parse_json, read_bytes
from agenteval.datasets.nesting import MAX_RESULT_DEPTH
from agenteval.datasets.scan import scan_file
from agenteval.datasets.split import ItemWalk
from agenteval.errors import DataError, from_validation_error

M = TypeVar("M", bound=BaseModel)

_SCALARS = ("string", "number", "boolean", "null")


def _open(path: str | Path) -> BinaryIO:
    f = open(path, "rb")  # noqa: SIM115 (closed by the caller)
    if f.read(len(codecs.BOM_UTF8)) != codecs.BOM_UTF8:
        f.seek(0)
    return f


def malformed(path: str | Path, e: Exception) -> DataError:
    """The error for a file ijson could not parse: the standard parser's, which names the line
    and column (bad input only, so reading it whole is fine), else ijson's message."""
    try:
        value = parse_json(path, read_bytes(path), MAX_RESULT_DEPTH)
    except DataError as located:
        return located
    where = big_integer(value, "")
    if where is not None:  # valid JSON that yajl's 64-bit integers cannot hold
        return DataError(path, where, "an integer beyond 64 bits, which the streaming reader cannot "
                         "take; write it as a string or a float")
    # Its first line, unquoted: yajl's message goes on with an excerpt of the text and a caret.
    text = str(e).strip()
    return DataError(path, "", f"malformed JSON: {text.splitlines()[0].strip(chr(39)) if text else repr(e)}")


def big_integer(value: Any, where: str) -> str | None:
    """The JSON path of the first integer outside 64 bits in `value`, else None."""
    if isinstance(value, dict):
        items: Any = ((f"{where}.{k}" if where else str(k), v) for k, v in value.items())
    elif isinstance(value, list):
        items = ((f"{where}[{i}]", v) for i, v in enumerate(value))
    else:
        return where if isinstance(value, int) and not -2**63 <= value < 2**63 else None
    return next((found for w, v in items if (found := big_integer(v, w)) is not None), None)


_KINDS = {"start_map": "an object", "string": "a string", "number": "a number",
          "boolean": "a boolean", "null": "null"}


def read_head(path: str | Path, list_key: str, wanted: tuple[str, ...] = (),
              what: str = "item") -> dict[str, Any]:
    """The top-level keys of the JSON object at `path` that come before `list_key`, and
    `wanted` keys wherever they are. A DataError naming `list_key` when the file is not a JSON
    object, or `list_key` is missing, is not an array, or is an empty one (a stream of nothing
    would otherwise look like a run where everything passed): a file of `what`s holds one at
    least."""
    head: dict[str, Any] = {}
    found_list = False
    with _open(path) as f:
        events = ijson.parse(f, use_float=True)
        try:
            prefix, event, value = next(events)
            if event != "start_map":
                raise DataError(path, "", "expected a JSON object")
            builder: Any = None
            key = ""
            for prefix, event, value in events:
                if builder is not None:  # inside a key's object or array value
                    builder.event(event, value)
                    if prefix == key and event in ("end_map", "end_array"):
                        head[key], builder = builder.value, None
                    continue
                if prefix == "" and event == "map_key":
                    if value == list_key:
                        _check_list(path, list_key, events, what)
                        found_list = True
                        break
                    key = value
                elif prefix == key and event in _SCALARS:
                    head[key] = value
                elif prefix == key and event in ("start_map", "start_array"):
                    builder = ijson.ObjectBuilder()
                    builder.event(event, value)
        except ijson.JSONError as e:
            raise malformed(path, e) from None
    if not found_list:
        raise DataError(path, list_key, f"field required (a list of at least one {what})")
    missing = [k for k in wanted if k not in head]
    if missing:  # after the list (ADK writes creation_timestamp there, agenteval its gating)
        head.update(_keys_after(path, list_key, missing))
    return head


def _keys_after(path: str | Path, list_key: str, keys: list[str]) -> dict[str, Any]:
    """Top-level `keys` of the JSON object at `path` found after the list `list_key`. An
    indented list is stepped over by its lines (`split.ItemWalk`, no parsing) and only what
    follows it is parsed (a 700 MB result document's tail: seconds, not a minute); otherwise
    the whole file is parsed once a key."""
    found: dict[str, Any] = {}
    with open(path, "rb") as f:
        walk = ItemWalk(f, list_key)
        for _ in walk:
            pass
        for k in keys:
            if walk.closed_at is None:
                source: Any = _open(path)
            else:
                f.seek(walk.closed_at)
                source = _Continued(b'{"":0', f)
            try:  # (the first value is the key's: a top-level key is not repeated in what we write)
                found[k] = next(ijson.items(source, k, use_float=True))
            except StopIteration:
                pass
            except ijson.JSONError as e:
                raise malformed(path, e) from None
            finally:
                if walk.closed_at is None:
                    source.close()
    return found


def _check_list(path: str | Path, list_key: str, events: Iterator[tuple[str, str, Any]],
                what: str) -> None:
    """Reads the start of `list_key`'s value: a DataError unless it is a non-empty array."""
    _, event, _ = next(events)
    if event != "start_array":
        raise DataError(path, list_key, f"must be a list of {what}s, not {_KINDS.get(event, event)}")
    _, event, _ = next(events)
    if event == "end_array":
        raise DataError(path, list_key, f"the list is empty: there is no {what}")


class CaseStream(Generic[M]):
    """The items of `list_key` in the JSON object at `path`, validated as `model`, with their
    index. The file's nesting is checked on construction (before anything else reads it);
    each item is parsed when iterated."""

    def __init__(self, path: str | Path, list_key: str, model: type[M], max_depth: int) -> None:
        self.path = path
        self.list_key = list_key
        self.model = model
        scan_file(path, max_depth)

    def __iter__(self) -> Iterator[tuple[int, M]]:
        where, model = self.list_key, self.model
        for i, data in enumerate(_items(self.path, self.list_key, model)):
            if data.__class__ is model:  # validated from its bytes
                yield i, data
                continue
            try:
                yield i, model.model_validate(data)
            except ValidationError as e:
                raise from_validation_error(self.path, e, f"{where}[{i}]") from None


def _items(path: str | Path, list_key: str, model: type[M]) -> Iterator[Any]:
    """The items of the list at `list_key` in the JSON file `path`, each validated as `model`
    where `read_item` takes its bytes, else parsed (for the caller to validate, and to give
    its error): what `raw_items` reads, at a lower cost. An indented file's items are found
    by their lines (`split.ItemWalk`) and validated by pydantic from their bytes (parsing them
    with ijson and validating the values cost a fifth more); the bytes before the list and
    after it are parsed by ijson, as `raw_items` parses them. Where the file stops being laid
    out so, the rest of its items are read by `raw_items`."""
    n = 0
    with open(path, "rb") as f:
        walk = ItemWalk(f, list_key)
        for span in walk:
            raw = walk.bytes_of(span)
            if n == 0:
                if walk.head is None:
                    break
                _parse_all(path, walk.head + b"]}", list_key)
            item: Any = read_item(model, raw)
            if item is None:  # invalid (its error is the caller's to give) or not one item
                try:
                    item = _one_value(raw)
                except ijson.JSONError:
                    break
            yield item
            n += 1
        else:
            if walk.closed_at is not None:
                # The rest of the document, parsed as the object's continuation (a key and
                # value after the list; another list of the same key, whose items follow).
                f.seek(walk.closed_at)
                yield from _parse_all(path, _Continued(b'{"":0', f), list_key)
                return
    for i, data in enumerate(raw_items(path, list_key)):
        if i >= n:
            yield data


class _Continued:
    """A file read from where it is, after `first`."""

    def __init__(self, first: bytes, f: BinaryIO) -> None:
        self.first, self.f = first, f

    def read(self, n: int) -> bytes:
        if self.first and n:  # (ijson reads 0 bytes to learn the type)
            first, self.first = self.first, b""
            return first
        return self.f.read(n)


def _parse_all(path: str | Path, source: bytes | _Continued, list_key: str) -> list[Any]:
    """The items of `list_key` in the JSON object `source`, parsed to its end; `malformed`'s
    DataError for `path` when it does not parse."""
    try:
        return list(ijson.items(source, f"{list_key}.item", use_float=True))
    except ijson.JSONError as e:
        raise malformed(path, e) from None


def _one_value(raw: bytes) -> Any:
    """The one JSON value `raw` holds (as `raw_items` parses it); ijson.JSONError if it does
    not hold exactly one."""
    values = ijson.items(raw, "", use_float=True, multiple_values=False)
    value = next(values)
    for _ in values:  # parsing to the end: trailing bytes are an error
        pass
    return value


def raw_items(path: str | Path, list_key: str) -> Iterator[Any]:
    """The items of the list at `list_key` in the JSON file `path`, parsed but not validated
    (numbers with a fraction as floats); a file ijson cannot parse raises `malformed`'s
    DataError when the parse reaches the fault."""
    with _open(path) as f:
        items = ijson.items(f, f"{list_key}.item", use_float=True)
        while True:
            try:
                data = next(items)
            except StopIteration:
                return
            except ijson.JSONError as e:
                raise malformed(path, e) from None
            yield data


# What pydantic's JSON parser reads where ijson refuses, checked for at C speed: a bare NaN or
# Infinity (after `:`, `[` or `,`), an integer beyond 64 bits (19 digits or more: ijson's
# "integer overflow") and an exponent of 3 digits or more (its "numeric overflow" from 1e309).
# On the item's shape: digits as 0, `e`/`E` as e, signs as +, `.` kept, other letters, quotes
# and non-ASCII bytes as a, anything else (spaces, punctuation) as a space.
_BARE_CONSTANT = re.compile(rb"[:\[,][ \t\r\n]*-?(?:NaN|Infinity)")
_N, _I = ord("N"), ord("I")


def _shape_of(b: int) -> int:
    c = chr(b)
    if c in "0123456789":
        return ord("0")
    if c in "eE+-.":
        return ord(c.lower().replace("-", "+"))
    return ord("a") if c.isalpha() or c == '"' or b >= 128 else ord(" ")


_SHAPE = bytes(_shape_of(b) for b in range(256))
BYTE_SHAPES = _SHAPE
"""The translation table of a JSON text's bytes to their shapes (above): digits 0, `e`/`E` e,
signs +, `.` kept, letters, quotes and non-ASCII a, anything else a space."""
_LONG_INTEGER = b"0" * 19
_EXPONENTS = (b"0e000", b"0e+000")  # after a digit of the mantissa
_NUMBER = b"0.+e"


_SPACE = b" \t\r\n"
# In the shape, a number written with an exponent holds a mantissa's digit, e, perhaps a sign and
# the exponent's digits, which end where the number does: at a space (whitespace or punctuation)
# or the text's end. An id's `52e599` ends at a letter or quote.
_EXPONENT_END = re.compile(rb"0e\+?0+(?![0a.+e])")


def a_value(raw: bytes, start: int, end: int) -> bool:
    """Whether raw[start:end] stands where JSON has a value (after `:`, `[` or `,` or at the
    text's start, before `,`, `]` or `}` or at its end, whitespace apart): a number there, unless
    a string holds those bytes."""
    i = start - 1
    while i >= 0 and raw[i] in _SPACE:
        i -= 1
    if i >= 0 and raw[i] not in b":[,":
        return False
    j = end
    while j < len(raw) and raw[j] in _SPACE:
        j += 1
    return j == len(raw) or raw[j] in b",]}"


def has_exponents(raw: bytes, shape: bytes | None = None) -> bool:
    """Whether the JSON text `raw` may hold a number written with an exponent (`1e5`, `-2.5E+3`);
    False: it holds none. `shape`: `raw.translate(BYTE_SHAPES)`, when the caller has made it.
    Such a number's shape holds `0e` and ends in digits at a space or the text's end, which is
    looked for at C speed; an id's `52e599` ends at a letter or quote, so only the few runs that
    end so (prose's `up 1e3 times`) are looked at in Python: a run of number characters that
    touches no letter, standing where JSON has a value (`a_value`). So the checks that look for
    such numbers digit by digit (`read_item`'s, `runner.placed_json`'s) run only on the few
    texts where this is True (a string's `x, 1e3, y` is taken for a number: it costs them their
    closer look only). For texts that are not valid JSON it decides nothing."""
    if shape is None:
        shape = raw.translate(_SHAPE)
    for match in _EXPONENT_END.finditer(shape):
        start, end = match.span()
        while start and shape[start - 1] in _NUMBER:
            start -= 1
        if (not start or shape[start - 1] != ord("a")) and a_value(raw, start, end):
            return True
    return False


def _alone(shape: bytes, at: int, end: int) -> bool:
    """Whether the run of number characters around shape[at:end] touches no letter or quote
    (a JSON number stands alone; a hex id's `52e599` does not)."""
    while at and shape[at - 1] in _NUMBER:
        at -= 1
    while end < len(shape) and shape[end] in _NUMBER:
        end += 1
    return (not at or shape[at - 1] != ord("a")) and (end == len(shape) or shape[end] != ord("a"))


def _unusual(raw: bytes, shape: bytes | None = None, exponents: bool | None = None) -> bool:
    """Whether ijson may read the JSON `raw` otherwise than pydantic's JSON parser does
    (`shape`: `raw.translate(BYTE_SHAPES)`, `exponents`: `has_exponents(raw, shape)`, when the
    caller has made them). For a text that is not valid JSON either answer is right: both parsers
    refuse it."""
    # (A word's search costs ≈ 1 ns a byte, a byte's (memchr) a tenth of that: a text with no N
    # or I skips them. `find` rather than `in`: `bytes in bytes` first tries its operand as an
    # integer, and formats the TypeError it then clears, ≈ 800 instructions a test.)
    if (((_N in raw and raw.find(b"NaN") >= 0) or (_I in raw and raw.find(b"Infinity") >= 0))
            and _BARE_CONSTANT.search(raw)):
        return True
    if shape is None:
        shape = raw.translate(_SHAPE)
    if exponents is None:
        exponents = has_exponents(raw, shape)
    # (An exponent's digits are looked for only where a number may have one: in most texts
    # the shape's `0e` are ids', and checking each was most of this function's cost.)
    for pattern in (_LONG_INTEGER, *_EXPONENTS) if exponents else (_LONG_INTEGER,):
        at = shape.find(pattern)
        while at >= 0:
            if _alone(shape, at, at + len(pattern)):
                return True
            at = shape.find(pattern, at + 1)
    return False


def read_item(model: type[M], raw: bytes, shape: bytes | None = None,
              exponents: bool | None = None) -> M | None:
    """The JSON object `raw` (one item of a file's list) validated as `model`, as `CaseStream`
    reads it from the file; None when it would refuse it (its error is then the stream's to
    give). Validated from the bytes by pydantic where its JSON parser reads them as ijson does;
    else (a bare NaN, an integer beyond 64 bits, a 3-digit exponent, perhaps inside a string)
    parsed by ijson and validated from the Python values, as the stream does. `shape`:
    `raw.translate(BYTE_SHAPES)`, `exponents`: `has_exponents(raw, shape)`, when the caller has made
    them for checks of its own."""
    if not _unusual(raw, shape, exponents):
        try:
            # (`model_validate_json` with its defaults, without the method's Python frame and
            # keyword arguments: ≈ 1% of reading an item of the bench corpus)
            return model.__pydantic_validator__.validate_json(raw)  # type: ignore[no-any-return]
        except ValidationError:
            return None
    try:
        return model.model_validate(_one_value(raw))
    except (ijson.JSONError, ValidationError, StopIteration):
        return None


__all__ = ["BYTE_SHAPES", "CaseStream", "a_value", "big_integer", "has_exponents", "malformed", "raw_items",
           "read_head", "read_item"]
