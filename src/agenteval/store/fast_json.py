"""A result document's models written as `store.placing.placed_model_json` writes them, by orjson
where it writes the same bytes (issue 29 item 4: about half the CPU of writing a case;
`bench/README.md`, sessions 21 and 22).

pydantic-core's serialiser walks a model's schema field by field; orjson writes the models'
`__dict__`s (handed to it one model at a time) in C. The two write the same bytes for the models
named below (plain fields, no serialiser of their own, JSON keys by field name, extras after the
fields) and for every JSON value, but for:

- a float of magnitude 1e16 or more (pydantic writes `1e+16`, orjson 3.8 `1e16`; a rule
  whatever the release), NaN and the infinities (pydantic writes strings,
  `ser_json_inf_nan="strings"`; orjson `null`, which cannot be told apart once written). A
  field typed `float` is checked as it is written. Values inside fields that may hold any JSON
  (a function call's args, a metric's criterion, extras) are checked by `placed_checked` (`plain`:
  JSON values only, their floats finite and below 1e16); `placed_json` leaves them to its caller
  (a `score` worker checks its items' bytes, `runner.placed_json.plain_numbers`);
- anything orjson does not write (an integer beyond 64 bits, a `Decimal`, a lone surrogate, a
  model not named here): it raises, and the model is written by pydantic.

Fields typed as models, strings, integers, booleans or enums are trusted to hold their type, as
a validated model or one the library built holds it.
"""

from __future__ import annotations

import contextlib
from enum import Enum
from types import UnionType
from typing import Any, Union, get_args, get_origin

import orjson
from pydantic import BaseModel
from pydantic_core import to_json

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
from agenteval.schema.trace import Span, Trace
from agenteval.store.placing import placed_model_json

# The models of a scored case's result and summary that orjson may write. Not here (written by
# pydantic): the judge's records and certificate notes, anything made elsewhere.
PLAIN: tuple[type[BaseModel], ...] = (
    EvalCaseResult, EvalMetricResult, EvalMetricResultDetails, RubricScore, TokenUsageDetails,
    DurationDetails, EvalMetricResultPerInvocation, MetricError, MetricReason, AgentVerdict,
    Invocation, Content, Part, FunctionCall, FunctionResponse, Blob, IntermediateData,
    InvocationEvents, InvocationEvent, UsageMetadata, Rubric, RubricContent, AppDetails,
    AgentDetails, CaseSummary, MetricSummary,
)
# Written by orjson only where every value is looked into (`placed_checked`): a case's trace,
# whose span attributes may come from elsewhere (an OTLP export), so `placed_json`'s caller
# cannot vouch for them. `eval` writes every case with its trace: without these, each went to
# pydantic whole (≈ 2.7 times the CPU; bench/README.md, session 36).
CHECKED: tuple[type[BaseModel], ...] = (Trace, Span)


class _Unlike(Exception):
    """orjson would not write this model as pydantic does."""


def _is_float(annotation: Any) -> bool:
    if annotation is float:
        return True
    origin = get_origin(annotation)
    return (origin is Union or origin is UnionType) and float in get_args(annotation)


def _floats(cls: type[BaseModel]) -> tuple[str, ...]:
    return tuple(name for name, f in cls.model_fields.items() if _is_float(f.annotation))


_CLOSED = (str, int, bool, type(None))


def _closed(annotation: Any) -> bool:
    """Whether a field so typed holds no JSON of the caller's: strings, integers, booleans,
    enums, models (written through the hook, which checks them) and lists, tuples, dicts or
    unions of those; not `Any` or `float` (checked on their own)."""
    if annotation in _CLOSED or (isinstance(annotation, type) and issubclass(annotation, (Enum, BaseModel))):
        return True
    origin = get_origin(annotation)
    if origin in (Union, UnionType, list, tuple, dict):
        return all(a is Ellipsis or _closed(a) for a in get_args(annotation))
    return False


def _open(cls: type[BaseModel]) -> tuple[str, ...]:
    return tuple(name for name, f in cls.model_fields.items()
                 if not _is_float(f.annotation) and not _closed(f.annotation))


_Layout = tuple[int, tuple[str, ...], bool, tuple[str, ...]]


def _layout(cls: type[BaseModel]) -> _Layout:
    """(number of fields, the float fields, whether it keeps extras, the fields that may hold
    any JSON) of a plain model; a
    TypeError when pydantic would write it otherwise than its `__dict__` (keys by field name:
    `placed_model_json` does not ask for aliases)."""
    d = cls.__pydantic_decorators__
    if (d.field_serializers or d.model_serializers or cls.__pydantic_computed_fields__
            or cls.model_config.get("serialize_by_alias")):
        raise TypeError(f"{cls.__name__} has a serialiser of its own, or writes its aliases")
    for name, f in cls.model_fields.items():
        if f.exclude or f.metadata:
            raise TypeError(f"{cls.__name__}.{name} is not written as its value under its name")
    return len(cls.model_fields), _floats(cls), cls.model_config.get("extra") == "allow", _open(cls)


# Filled by `_ready` on the first model written (not at import: `score`'s parent imports this
# module before its workers fork, and writes nothing itself; each worker makes it once).
_LAYOUTS: dict[type[BaseModel], _Layout] = {}
# The same models' layouts in short, for `_default`'s common case: the number of fields of a
# model with no float field, negated when it keeps extras; 0 for a model with float fields.
_SHORT: dict[type[BaseModel], int] = {}
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
        for cls in PLAIN + CHECKED:
            # A model pydantic writes otherwise (a field's metadata, a serialiser) gets no
            # layout: `_default` sends it to pydantic, rather than every write failing.
            with contextlib.suppress(TypeError):
                _LAYOUTS[cls] = layout = _layout(cls)
                fields, floats, extras, _ = layout
                if cls not in CHECKED:  # (`_default` knows a model by `_SHORT`)
                    _SHORT[cls] = 0 if floats else -fields if extras else fields
        _usable = _agrees()
    return _usable


# (`type(o)`, not `o.__class__`: pydantic's models define `__getattr__`, which sends every
# attribute read of theirs through a slower hook; `type` is a call that reads no attribute. About
# 250 instructions less a model, 5% of writing a case: bench/README.md, session 26.)


def _default(o: Any) -> dict[str, Any]:
    """A model's fields as orjson writes them: its `__dict__` (with its extras after); values
    that may hold any JSON not looked into (`placed_json`'s caller's)."""
    # (Three quarters of a case's models have no float field: one subscript, a signed field count,
    # tells them, rather than the layout's unpacking and loops; ≈ 500 instructions less a
    # model, 1.3% of a `score` worker's case with the float bounds below: bench/README.md,
    # session 34. A KeyError is only ever raised for a model not in `PLAIN`: pydantic's.)
    try:
        n = _SHORT[type(o)]
    except KeyError:
        raise _Unlike from None
    values: dict[str, Any] = o.__dict__
    if n > 0:
        if len(values) != n:  # a key that is not a field, or one missing (pydantic checks)
            raise _Unlike
        return values
    if n < 0:
        if len(values) != -n:
            raise _Unlike
        more = o.__pydantic_extra__
        return {**values, **more} if more else values
    fields, floats, extras, _ = _LAYOUTS[type(o)]
    if len(values) != fields:
        raise _Unlike
    for name in floats:
        v = values[name]
        # Not a float (an int in a float field is written as a float by pydantic), NaN, an
        # infinity or a large value: pydantic's to write. (±_BIG written out: constants, where
        # `-_BIG` made a float each time.)
        if v is not None and (type(v) is not float or not -1e16 < v < 1e16):
            raise _Unlike
    if extras:
        more = o.__pydantic_extra__
        if more:
            return {**values, **more}
    return values


def _checked(o: Any) -> dict[str, Any]:
    """`_default` with the values that may hold any JSON looked into (`plain`). (Written out
    again rather than calling `_default`: a call per model is a tenth of the writing.)"""
    layout = _LAYOUTS.get(type(o))
    if layout is None:
        raise _Unlike
    fields, floats, extras, open_ = layout
    values: dict[str, Any] = o.__dict__
    if len(values) != fields:
        raise _Unlike
    for name in floats:
        v = values[name]
        if v is not None and (type(v) is not float or not -_BIG < v < _BIG):
            raise _Unlike
    for name in open_:
        v = values[name]
        if v is not None and not plain(v):
            raise _Unlike
    if extras:
        more = o.__pydantic_extra__
        if more:
            if not plain(more):
                raise _Unlike
            return {**values, **more}
    return values


# The model as the item of a list inside a list, as `store.placing` serialises it: orjson
# indents it at its depth in the document (re-indenting the bytes after cost a tenth as much
# again as writing them).
_HEAD = len(b"[\n  [\n    ")
_TAIL = len(b"\n  ]\n]")


def fast_json(model: BaseModel, checked: bool = False) -> bytes | None:
    """`placed_model_json(model)`'s bytes written by orjson, or None where orjson would write
    others or cannot (see the module's docstring). Unless `checked`, the caller guarantees that
    values inside fields that may hold any JSON hold only floats that are `plain`: finite and
    below 1e16; `checked`, they are looked into here."""
    if not _ready():
        return None
    try:
        out: bytes = orjson.dumps([[model]], default=_checked if checked else _default,
                                  option=orjson.OPT_INDENT_2)
    except (_Unlike, TypeError):  # orjson raises a TypeError of its own (JSONEncodeError)
        return None
    return out[_HEAD:-_TAIL]


def placed_json(model: BaseModel) -> bytes:
    """`placed_model_json(model)`: by orjson where it writes the same bytes (`fast_json`; the
    same guarantee on values inside fields that may hold any JSON is the caller's), else by
    pydantic."""
    out = fast_json(model)
    return out if out is not None else placed_model_json(model)


def placed_checked(model: BaseModel) -> bytes:
    """`placed_model_json(model)`: by orjson where it writes the same bytes, every value
    checked here (`fast_json(model, checked=True)`), else by pydantic."""
    out = fast_json(model, checked=True)
    return out if out is not None else placed_model_json(model)


def plain(value: Any) -> bool:
    """Whether `value` is a JSON value (dicts with string keys, lists, tuples, strings, integers,
    booleans, None, floats) that orjson writes as pydantic does: its floats finite and below
    1e16, nothing else (a datetime, a set, bytes, an enum member: pydantic's to write)."""
    cls = type(value)
    if cls is str or cls is int or cls is bool or value is None:
        return True
    if cls is float:
        return bool(-_BIG < value < _BIG)
    if cls is dict:
        for k, v in value.items():
            if type(k) is not str:
                return False
            c = type(v)
            if not (c is str or c is int or c is bool or v is None) and not plain(v):
                return False
        return True
    if cls is list or cls is tuple:
        for v in value:
            c = type(v)
            if not (c is str or c is int or c is bool or v is None) and not plain(v):
                return False
        return True
    return False


__all__ = ["CHECKED", "PLAIN", "fast_json", "placed_checked", "placed_json", "plain"]
