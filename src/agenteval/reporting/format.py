"""Values, tool calls and scores as short text: the one way every report writes them (console,
HTML, JUnit, Markdown, comparisons, the outcome of a case)."""

from __future__ import annotations

import json
from typing import Any

from agenteval.schema import FunctionCall, Invocation


def format_value(value: Any) -> str:
    """A compact, readable value: JSON for containers and strings, repr otherwise."""
    if isinstance(value, (dict, list, str)):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def format_call(call: FunctionCall) -> str:
    """`name(arg=value, ...)`."""
    args = ", ".join(f"{k}={format_value(v)}" for k, v in (call.args or {}).items())
    return f"{call.name}({args})"


def format_calls(inv: Invocation | None) -> str:
    """An invocation's tool calls, one `format_call` a line ("" for none)."""
    return "\n".join(format_call(c) for c in inv.tool_calls()) if inv else ""


def format_score(score: float | None) -> str:
    """A score to four significant digits; "-" for none."""
    if score is None:
        return "-"
    return f"{score:.4g}"


__all__ = ["format_call", "format_calls", "format_score", "format_value"]
