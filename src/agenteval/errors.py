"""Errors raised for bad input: each names the file and the JSON path at fault."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError


class AgentEvalError(Exception):
    """Base class of agenteval's own errors."""


class DataError(AgentEvalError):
    """Bad input data: `file: path: message` on one line."""

    def __init__(self, file: str | Path | None, path: str, message: str) -> None:
        self.file = str(file) if file is not None else None
        self.path = path
        self.message = message
        where = ": ".join(p for p in (self.file, path) if p)
        super().__init__(f"{where}: {message}" if where else message)


def json_path(loc: Sequence[int | str], prefix: str = "") -> str:
    """Renders a pydantic location as `eval_cases[3].conversation[0].user_content`.

    Union-member tags (class names such as `IntermediateData`, `function-after[...]`) are
    dropped: they name pydantic's internals, not keys of the file.
    """
    out = prefix
    for item in loc:
        if isinstance(item, int):
            out += f"[{item}]"
        elif item[:1].isupper() or "[" in item or item in {"str", "float", "int", "bool"}:
            continue
        else:
            out += f".{item}" if out else item
    return out


def from_validation_error(
    file: str | Path | None, err: ValidationError, prefix: str = ""
) -> DataError:
    """The first (most specific) problem of a validation error, as a DataError."""
    first = err.errors()[0]
    message = first["msg"]
    if first["type"] == "missing":
        message = "field required"
    elif first["type"] == "extra_forbidden":
        message = "unknown key"
    return DataError(file, json_path(first["loc"], prefix), message)
