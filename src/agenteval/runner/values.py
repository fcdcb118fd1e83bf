"""Values from the agent made safe to write as JSON, where they enter the runner.

An agent's tool arguments, tool results, events and session state may hold anything Python
can. Everything that enters a case's record goes through `make_safe`, so that writing the
result document can never fail for one case's value and lose the others. The representation:

- JSON values stay as they are (containers are copied; a tuple becomes a list);
- NaN and infinities become the strings `"NaN"`, `"Infinity"`, `"-Infinity"` (JSON has none);
- values with a standard JSON form take it (dates and times as ISO 8601 text, UUIDs, decimals
  and paths as text, bytes as UTF-8 text, enums as their value, sets as lists, dataclasses and
  pydantic models as objects), as pydantic writes them;
- text holding an unpaired UTF-16 surrogate (which UTF-8 cannot hold) gets U+FFFD in its place;
- anything else becomes the text `<unserialisable TYPE: repr>` (the repr cut at 200 characters),
  a container that contains itself `<cycle>`, and nesting past 100 levels
  `<nested deeper than 100 levels>`.

Every value that lost information (the last two rules, and non-finite numbers) is noted, with
where it was, in the case's `warnings`.
"""

from __future__ import annotations

import math
from typing import Any

import pydantic_core
from pydantic import BaseModel

from agenteval.schema.base import utf8_text

MAX_DEPTH = 100
_REPR_CHARS = 200


def _unserialisable(value: Any) -> str:
    kind = type(value)
    text = repr(value)
    if len(text) > _REPR_CHARS:
        text = text[:_REPR_CHARS] + "..."
    return f"<unserialisable {kind.__module__}.{kind.__qualname__}: {text}>"


def make_safe(value: Any, where: str, notes: list[str], depth: int = 0,
              path_ids: frozenset[int] = frozenset()) -> Any:
    """`value` as the module docstring says; what was lost is appended to `notes` with `where`."""
    if isinstance(value, str):
        text, replaced = utf8_text(value)
        if replaced:  # a lone surrogate: no UTF-8 (so no JSON file) can hold it
            notes.append(f"{where}: text with an unpaired surrogate; each written as U+FFFD")
        return text
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        notes.append(f"{where}: {text} is not a JSON number; written as the string {text!r}")
        return text
    if depth >= MAX_DEPTH:
        notes.append(f"{where}: nested deeper than {MAX_DEPTH} levels; cut there")
        return f"<nested deeper than {MAX_DEPTH} levels>"
    if isinstance(value, BaseModel):
        make_model_safe(value, where, notes, depth)
        return value
    if isinstance(value, (dict, list, tuple)):
        if id(value) in path_ids:
            notes.append(f"{where}: contains itself; written as '<cycle>'")
            return "<cycle>"
        inner = path_ids | {id(value)}
        if isinstance(value, dict):
            return {(k if isinstance(k, str) else str(k)):
                    make_safe(v, f"{where}.{k}", notes, depth + 1, inner) for k, v in value.items()}
        return [make_safe(v, f"{where}[{i}]", notes, depth + 1, inner) for i, v in enumerate(value)]
    try:
        plain = pydantic_core.to_jsonable_python(value)
    except (pydantic_core.PydanticSerializationError, ValueError, TypeError, RecursionError):
        text = _unserialisable(value)
        notes.append(f"{where}: {type(value).__name__} cannot be written as JSON; written as its repr")
        return text
    return make_safe(plain, where, notes, depth + 1, path_ids)


def make_model_safe(model: BaseModel, where: str, notes: list[str], depth: int = 0) -> None:
    """Makes every field and extra key of a (wire) model safe, in place."""
    for name, value in list(model.__dict__.items()):
        if value is not None and not isinstance(value, (bool, int)):
            model.__dict__[name] = make_safe(value, f"{where}.{name}", notes, depth + 1)
    extra = model.__pydantic_extra__
    if extra:
        for name, value in list(extra.items()):
            extra[name] = make_safe(value, f"{where}.{name}", notes, depth + 1)


__all__ = ["MAX_DEPTH", "make_model_safe", "make_safe"]
