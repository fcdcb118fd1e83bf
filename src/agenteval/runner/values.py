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
    # Imported here: the loader is needed only on this rare path.
    from agenteval.agents.loader import shown_module_name

    kind = type(value)
    module = shown_module_name(kind.__module__)
    # the default repr names the module too (`<agenteval_agent_123.Odd object at 0x...>`)
    text = repr(value).replace(f"{kind.__module__}.", f"{module}.")
    if len(text) > _REPR_CHARS:
        text = text[:_REPR_CHARS] + "..."
    return f"<unserialisable {module}.{kind.__qualname__}: {text}>"


# Where a value is, as the notes say it (`invocation 0.args.q`, `calls[1]`): the text of the
# top-level value, or (the container's place, ".", key) for a dict's key or a model's field and
# (the container's place, "[]", index) for a list's item. The text is made only for a note: a
# turn's record holds about sixty values, and formatting each one's path, with the other
# per-value work skipped here, was a sixth of making it safe (bench/README.md, session 41).
_At = str | tuple["_At", str, object]


def _where(at: _At) -> str:
    parts: list[str] = []
    while not isinstance(at, str):
        at, sep, key = at
        parts.append(f"[{key}]" if sep == "[]" else f".{key}")
    return at + "".join(reversed(parts))


def _plain(value: Any) -> bool:
    """Whether `_safe` would give `value` itself back at once and note nothing: None, an int, a
    bool or ASCII text, of exactly those types (most of a turn's values; tested before a call)."""
    kind = value.__class__
    return value is None or kind is int or kind is bool or (kind is str and value.isascii())


def make_safe(value: Any, where: str, notes: list[str], depth: int = 0,
              path_ids: frozenset[int] = frozenset()) -> Any:
    """`value` as the module docstring says; what was lost is appended to `notes` with `where`."""
    return _safe(value, where, notes, depth, set(path_ids))


def _safe(value: Any, at: _At, notes: list[str], depth: int, path_ids: set[int]) -> Any:
    # `path_ids`: the ids of the containers holding `value` (a cycle is a container inside
    # itself; the same container twice side by side is not one), added and removed around each.
    if isinstance(value, str):
        if value.isascii():  # (`utf8_text`'s first test: most text)
            return value
        text, replaced = utf8_text(value)
        if replaced:  # a lone surrogate: no UTF-8 (so no JSON file) can hold it
            notes.append(f"{_where(at)}: text with an unpaired surrogate; each written as U+FFFD")
        return text
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        notes.append(f"{_where(at)}: {text} is not a JSON number; written as the string {text!r}")
        return text
    if depth >= MAX_DEPTH:
        notes.append(f"{_where(at)}: nested deeper than {MAX_DEPTH} levels; cut there")
        return f"<nested deeper than {MAX_DEPTH} levels>"
    if isinstance(value, BaseModel):
        _model_safe(value, at, notes, depth, set())  # (a model's fields start a path of their own)
        return value
    if isinstance(value, (dict, list, tuple)):
        key = id(value)
        if key in path_ids:
            notes.append(f"{_where(at)}: contains itself; written as '<cycle>'")
            return "<cycle>"
        path_ids.add(key)
        depth += 1
        out: Any
        if isinstance(value, dict):
            out = {(k if isinstance(k, str) else str(k)):
                   v if _plain(v) else _safe(v, (at, ".", k), notes, depth, path_ids)
                   for k, v in value.items()}
        else:
            out = [v if _plain(v) else _safe(v, (at, "[]", i), notes, depth, path_ids)
                   for i, v in enumerate(value)]
        path_ids.discard(key)
        return out
    try:
        plain = pydantic_core.to_jsonable_python(value)
    except (pydantic_core.PydanticSerializationError, ValueError, TypeError, RecursionError):
        text = _unserialisable(value)
        notes.append(f"{_where(at)}: {type(value).__name__} cannot be written as JSON; written as its repr")
        return text
    return _safe(plain, at, notes, depth + 1, path_ids)


def make_model_safe(model: BaseModel, where: str, notes: list[str], depth: int = 0) -> None:
    """Makes every field and extra key of a (wire) model safe, in place."""
    _model_safe(model, where, notes, depth, set())


def _model_safe(model: BaseModel, at: _At, notes: list[str], depth: int, path_ids: set[int]) -> None:
    fields = model.__dict__
    depth += 1
    for name, value in fields.items():  # (values replaced in place: the keys stay as they are)
        if not (value is None or isinstance(value, (bool, int)) or _plain(value)):
            fields[name] = _safe(value, (at, ".", name), notes, depth, path_ids)
    extra = model.__pydantic_extra__
    if extra:
        for name, value in list(extra.items()):
            extra[name] = _safe(value, (at, ".", name), notes, depth, path_ids)


__all__ = ["MAX_DEPTH", "make_model_safe", "make_safe"]
