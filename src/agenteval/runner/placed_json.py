"""A case's result and summary written as `store.placing.placed_model_json` writes them, by
orjson where it writes the same bytes (issue 29 item 4: about half the CPU of writing a case;
`bench/README.md`, session 21).

pydantic-core's serialiser walks a model's schema field by field; orjson writes the models'
`__dict__`s (handed to it one model at a time) in C. The two write the same bytes for the models
named below (plain fields, no serialiser of their own, JSON keys by field name, extras after the
fields) and for every JSON value, but for:

- a float of magnitude 1e16 or more (pydantic writes `1e+16`, orjson 3.8 `1e16`; a rule
  whatever the release), NaN and the infinities (pydantic writes strings,
  `ser_json_inf_nan="strings"`; orjson `null`, which cannot be told apart once written). A
  field typed `float` is checked as it is written; values inside fields typed `Any` (a function
  call's args, a metric's criterion) are not walked: they are the caller's to guarantee
  (`plain`, `plain_numbers`);
- anything orjson does not write (an integer beyond 64 bits, a `Decimal`, a lone surrogate, a
  model not named here): it raises, and the model is written by pydantic.
"""

from __future__ import annotations

from types import UnionType
from typing import Any, Union, get_args, get_origin

import orjson
from pydantic import BaseModel
from pydantic_core import to_json

from agenteval.datasets.stream import BYTE_SHAPES
from agenteval.schema import (
    AgentDetails,
    AgentVerdict,
    AppDetails,
    Blob,
    CaseSummary,
    Content,
    DurationDetails,
    EvalCaseResult,
    EvalMetricResult,
    EvalMetricResultDetails,
    EvalMetricResultPerInvocation,
    FunctionCall,
    FunctionResponse,
    IntermediateData,
    Invocation,
    InvocationEvent,
    InvocationEvents,
    MetricError,
    MetricReason,
    MetricSummary,
    Part,
    Rubric,
    RubricContent,
    RubricScore,
    TokenUsageDetails,
    UsageMetadata,
)
from agenteval.store.placing import placed_model_json

# The models of a scored case's result and summary that orjson may write. Not here (written by
# pydantic): the judge's records and certificate notes, traces, anything made elsewhere.
PLAIN: tuple[type[BaseModel], ...] = (
    EvalCaseResult, EvalMetricResult, EvalMetricResultDetails, RubricScore, TokenUsageDetails,
    DurationDetails, EvalMetricResultPerInvocation, MetricError, MetricReason, AgentVerdict,
    Invocation, Content, Part, FunctionCall, FunctionResponse, Blob, IntermediateData,
    InvocationEvents, InvocationEvent, UsageMetadata, Rubric, RubricContent, AppDetails,
    AgentDetails, CaseSummary, MetricSummary,
)


class _Unlike(Exception):
    """orjson would not write this model as pydantic does."""


def _is_float(annotation: Any) -> bool:
    if annotation is float:
        return True
    origin = get_origin(annotation)
    return (origin is Union or origin is UnionType) and float in get_args(annotation)


def _floats(cls: type[BaseModel]) -> tuple[str, ...]:
    return tuple(name for name, f in cls.model_fields.items() if _is_float(f.annotation))


def _layout(cls: type[BaseModel]) -> tuple[int, tuple[str, ...], bool]:
    """(number of fields, the float fields, whether it keeps extras) of a plain model; a
    TypeError when pydantic would write it otherwise than its `__dict__` (keys by field name:
    `placed_model_json` does not ask for aliases)."""
    d = cls.__pydantic_decorators__
    if (d.field_serializers or d.model_serializers or cls.__pydantic_computed_fields__
            or cls.model_config.get("serialize_by_alias")):
        raise TypeError(f"{cls.__name__} has a serialiser of its own, or writes its aliases")
    for name, f in cls.model_fields.items():
        if f.exclude or f.metadata:
            raise TypeError(f"{cls.__name__}.{name} is not written as its value under its name")
    return len(cls.model_fields), _floats(cls), cls.model_config.get("extra") == "allow"


# Filled by `_ready` on the first model written (not at import: `score`'s parent imports this
# module before its workers fork, and writes nothing itself; each worker makes it once).
_LAYOUTS: dict[type[BaseModel], tuple[int, tuple[str, ...], bool]] = {}
_BIG = 1e16  # from here on pydantic writes an exponent's sign, orjson 3.8 did not (3.13 does)

# Values whose JSON the two libraries must agree on for orjson to be used at all: floats of
# every magnitude below 1e16 (shortest round-trip digits, `.0`, small exponents), escapes and
# non-ASCII text, empty and nested containers at indent 2. Checked once, before the first model
# is written, so that an orjson release that writes them otherwise is not used.
_PROBE: list[Any] = [
    [0.0, -0.0, 1.0, 0.1, 1 / 3, 2.5e-7, 5e-324, 123456.789, 9999999999999998.0, -1e15, 1e-5, 1e-4],
    {"s": "\u0000\u001f\"\\/\n\t\u007f\u2028\u00e9\U0001f600", "e": {}, "l": [], "n": None,
     "b": [True, False], "i": [0, -1, 2**63 - 1, -(2**63), 2**64 - 1], "d": [{"x": [[]]}]},
]


def _agrees() -> bool:
    try:
        return all(orjson.dumps(v, option=orjson.OPT_INDENT_2) == to_json(v, indent=2) for v in _PROBE)
    except TypeError:
        return False


_usable: bool | None = None  # (None: not checked yet)


def _ready() -> bool:
    """Whether orjson may be used: the models' table made and the probe passed (once)."""
    global _usable
    if _usable is None:
        _LAYOUTS.update((cls, _layout(cls)) for cls in PLAIN)
        _usable = _agrees()
    return _usable


def _default(o: Any) -> dict[str, Any]:
    """A model's fields as orjson writes them: its `__dict__` (with its extras after)."""
    layout = _LAYOUTS.get(o.__class__)
    if layout is None:
        raise _Unlike
    fields, floats, extras = layout
    values: dict[str, Any] = o.__dict__
    if len(values) != fields:  # a key that is not a field, or one missing (pydantic checks)
        raise _Unlike
    for name in floats:
        v = values[name]
        # Not a float (an int in a float field is written as a float by pydantic), NaN, an
        # infinity or a large value: pydantic's to write.
        if v is not None and (v.__class__ is not float or not -_BIG < v < _BIG):
            raise _Unlike
    if extras:
        more = o.__pydantic_extra__
        if more:
            return {**values, **more}
    return values


# Bytes shaped as `datasets.stream` shapes them for its checks: digits 0, `e`/`E` e, signs +,
# `.` kept, letters, quotes and non-ASCII a, anything else a space.
_SHAPE = BYTE_SHAPES
_NUMBER = b"0.+e"
_SPACE = b" \t\r\n"
# A number with an exponent, or with 16 digits or more before its point, may be a float of
# 1e16 or more (smaller ones are caught with the first, which only costs the fast path); an
# integer is written alike by both, however long.
_EXPONENT, _DIGITS = b"0e", b"0" * 16


def _a_value(raw: bytes, start: int, end: int) -> bool:
    """Whether raw[start:end] stands where JSON has a value (after `:`, `[` or `,`, before `,`,
    `]` or `}`, spaces apart): a number, unless a string holds those bytes."""
    i = start - 1
    while i >= 0 and raw[i] in _SPACE:
        i -= 1
    if i < 0 or raw[i] not in b":[,":
        return False
    j = end
    while j < len(raw) and raw[j] in _SPACE:
        j += 1
    return j == len(raw) or raw[j] in b",]}"


def plain_numbers(raw: bytes) -> bool:
    """Whether the JSON `raw` (as read from a file) holds no number that may be a float orjson
    writes otherwise than pydantic: none with an exponent or 16 digits before its point. (Items
    that would parse to NaN or an infinity are refused by `datasets.stream.read_item`.) Runs
    of such characters inside a string (an id like "52e599", prose's "1e3 times") are not
    numbers; one that sits as a value would (`"x: 1e3, y"`) only costs the fast path."""
    shape = raw.translate(_SHAPE)
    for pattern in (_EXPONENT, _DIGITS):
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


# The model as the item of a list inside a list, as `store.placing` serialises it: orjson
# indents it at its depth in the document (re-indenting the bytes after cost a tenth as much
# again as writing them).
_HEAD = len(b"[\n  [\n    ")
_TAIL = len(b"\n  ]\n]")


def fast_json(model: BaseModel) -> bytes | None:
    """`placed_model_json(model)`'s bytes written by orjson, or None where orjson would write
    others or cannot (see the module's docstring). The caller guarantees that values inside
    fields typed `Any` hold only floats that are `plain`: finite and below 1e16."""
    if not _ready():
        return None
    try:
        out: bytes = orjson.dumps([[model]], default=_default, option=orjson.OPT_INDENT_2)
    except (_Unlike, TypeError):  # orjson raises a TypeError of its own (JSONEncodeError)
        return None
    return out[_HEAD:-_TAIL]


def placed_json(model: BaseModel) -> bytes:
    """`placed_model_json(model)`: by orjson where it writes the same bytes (`fast_json`; the
    same guarantee on values inside fields typed `Any` is the caller's), else by pydantic."""
    out = fast_json(model)
    return out if out is not None else placed_model_json(model)


def plain(value: Any) -> bool:
    """Whether the JSON value `value` (dicts, lists, tuples, scalars) holds only floats that
    orjson writes as pydantic does (finite, below 1e16): what `placed_json` needs of values
    inside fields typed `Any`."""
    if value.__class__ is float:
        return bool(-_BIG < value < _BIG)
    if isinstance(value, dict):
        return all(plain(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(plain(v) for v in value)
    return True


__all__ = ["PLAIN", "fast_json", "placed_json", "plain", "plain_numbers"]
