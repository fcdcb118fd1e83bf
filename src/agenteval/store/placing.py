"""A model's JSON serialised at its place in a result document: the item of a list field.

A result document's lists (`eval_case_results`, `summary`) hold their items two levels deep,
so an item's indented JSON is indented again by four spaces after each newline. Re-indenting
a case result's bytes (tens of kilobytes) took about a tenth as long again as serialising it;
serialising the model as the item of a list inside a list writes it at that depth at once,
between a fixed head and tail, with the same bytes.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter

_HEAD = len(b"[\n  [\n    ")  # what the wrapping lists write before the item, and after it
_TAIL = len(b"\n  ]\n]")


@cache
def _nested(cls: type[BaseModel]) -> Any:
    # The model's JSON settings given to the wrapper too: values typed `Any` inside the model
    # are serialised by the outermost config (e.g. NaN as "NaN" under the wire models', null
    # under the default).
    config = ConfigDict(**{k: v for k, v in cls.model_config.items()  # type: ignore[typeddict-item]
                           if k.startswith("ser_json_")})
    return TypeAdapter(list[list[cls]], config=config).serializer  # type: ignore[valid-type]


def placed_model_json(model: BaseModel) -> bytes:
    """`model`'s JSON as a result document's list holds it (indented, None values kept): the
    bytes of its indented JSON with four spaces after each newline, without the separator that
    comes before an item."""
    wrapped: bytes = _nested(type(model)).to_json([[model]], indent=2, exclude_none=False)
    return wrapped[_HEAD:-_TAIL]


__all__ = ["placed_model_json"]
