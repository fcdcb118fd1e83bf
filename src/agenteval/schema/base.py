"""Base model shared by every wire-format model: camelCase or snake_case keys in, snake_case out."""


from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar, overload

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """Accepts both `user_content` and `userContent`; rejects unknown keys.

    Serialisation uses field names (snake_case), as ADK's file writers do.

    A model that `eval` never validates or writes on its own (one held only inside other models,
    or one only judges, simulators, legacy files or sequential verdicts use) sets
    `defer_build=True`: pydantic builds its validator and serialiser at its first direct use
    instead of at import (1.6% of `eval`'s start-up: bench/README.md, session 36). Its schema is
    built into the models that hold it either way; behaviour is the same.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        loc_by_alias=False,  # errors name fields by their snake_case names
        # JSON has no NaN or infinity; pydantic would write them as null, losing the value.
        ser_json_inf_nan="strings",
    )


class OpenWireModel(WireModel):
    """A wire model that keeps unknown keys so that they round-trip unchanged."""

    model_config = ConfigDict(extra="allow")


M = TypeVar("M", bound=BaseModel)


@cache
def _field_names(cls: type[BaseModel]) -> tuple[str, ...]:
    if cls.model_config.get("extra") == "allow" or cls.__private_attributes__:
        raise TypeError(f"{cls.__name__}: trusted() needs a model without extras or private "
                        "attributes")
    return tuple(cls.model_fields)


@cache
def _all_set(cls: type[BaseModel]) -> set[str]:
    """The one fields-set that every instance `trusted` and `maker` make of `cls` holds: its
    every field name. Shared, not copied: pydantic only ever adds a field's name to an
    instance's set (assignment, `model_copy(update=...)` on the copy's own copy), and a model
    without extras has no other name to add, so the set never changes; copies, deep copies and
    unpickled instances get their own. (A set made per instance was ≈ 27 set copies a case.)"""
    return set(_field_names(cls))


# Per class: its field names, their shared set, and how an instance is made without __init__.
# A plain dict read in `trusted` (a `functools.cache` call and `cls.__new__` lookup cost a third
# of it).
_LAYOUT: dict[type[BaseModel], tuple[tuple[str, ...], set[str], Callable[..., Any]]] = {}
# `BaseModel`'s four instance slots set through their own descriptors: what
# `object.__setattr__(obj, name, value)` ends in, without looking the name up on the type each
# time (a quarter of making a model: bench/README.md, session 29).
_slots = BaseModel.__dict__
_set_dict: Callable[[Any, dict[str, Any]], None] = _slots["__dict__"].__set__
_set_fields: Callable[[Any, set[str]], None] = _slots["__pydantic_fields_set__"].__set__
_set_extra: Callable[[Any, None], None] = _slots["__pydantic_extra__"].__set__
_set_private: Callable[[Any, None], None] = _slots["__pydantic_private__"].__set__


def _layout(cls: type[BaseModel]) -> tuple[tuple[str, ...], set[str], Callable[..., Any]]:
    layout = _LAYOUT[cls] = (_field_names(cls), _all_set(cls), cls.__new__)
    return layout


def trusted(cls: type[M], values: dict[str, Any]) -> M:
    """An instance of `cls` holding `values` as given: no validation, no defaults, no copy.

    For hot paths that build hundreds of thousands of results from values that are already of
    the declared types. `model_construct` does the same but runs a Python loop over fields and
    defaults (0.7 s for the 180,000 metric results of a 10,000-case run; this: 0.2 s).
    `values` must name every field; they are reordered into declaration order only when needed,
    since the serialiser writes keys in `__dict__` order.
    """
    layout = _LAYOUT.get(cls)
    names, fields, new = layout if layout is not None else _layout(cls)
    if tuple(values) != names:
        if sorted(values) != sorted(names):
            raise TypeError(f"{cls.__name__}: trusted() needs exactly the fields {names}, "
                            f"got {tuple(values)}")
        values = {name: values[name] for name in names}
    obj = new(cls)
    # The slots model_construct sets, set directly (BaseModel.__setattr__ would validate).
    _set_dict(obj, values)
    _set_fields(obj, fields)
    _set_extra(obj, None)
    _set_private(obj, None)
    result: M = obj
    return result


def maker(cls: type[M]) -> Callable[[dict[str, Any]], M]:
    """`trusted` for one class without its key check: the function made takes `values` holding
    every field of `cls` in declaration order, which it does not check. For the few sites that
    build tens of thousands of one model from a dict written out field by field (their tests
    compare what they make with `trusted`'s); the check was a sixth of `trusted`'s cost."""
    new, names = cls.__new__, _all_set(cls)
    set_dict, set_fields, set_extra, set_private = _set_dict, _set_fields, _set_extra, _set_private

    def make(values: dict[str, Any]) -> M:
        obj = new(cls)
        set_dict(obj, values)
        set_fields(obj, names)
        set_extra(obj, None)
        set_private(obj, None)
        result: M = obj
        return result

    return make


def utf8_text(text: str) -> tuple[str, bool]:
    """`text` as a UTF-8 file (so any JSON document) can hold it: each unpaired UTF-16
    surrogate, which UTF-8 cannot encode, replaced by U+FFFD; and whether one was."""
    if text.isascii():
        return text, False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text), True
    return text, False


SECONDS_DIGITS = 6


@overload
def measured_seconds(seconds: float) -> float: ...


@overload
def measured_seconds(seconds: float | None) -> float | None: ...


def measured_seconds(seconds: float | None) -> float | None:
    """A measured time (a duration, or a sum, difference or mean of durations) as it is written:
    to the microsecond, finer than any clock here resolves, so that float arithmetic on times
    writes no noise (`0.1 + 0.2` is `0.30000000000000004`). Never for a score: a score is
    written exactly as the criterion made it."""
    return None if seconds is None else round(seconds, SECONDS_DIGITS)
