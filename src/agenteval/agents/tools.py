"""Python functions as tools: JSON schemas from signatures and docstrings, and invocation.

A parameter named `tool_context` is not part of the schema: it receives a `ToolContext` whose
`state` is the session state, which the tool may read and write (like ADK's ToolContext).
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_type_hints

import anyio
from pydantic import TypeAdapter, ValidationError, create_model

from agenteval.models.base import ToolSpec

CONTEXT_PARAM = "tool_context"


@dataclass
class ToolContext:
    """What a tool may see of the session: its mutable state."""

    state: dict[str, Any]


def _doc_parts(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """The summary paragraph and the per-argument descriptions of a Google-style docstring."""
    doc = inspect.getdoc(fn) or ""
    summary = doc.split("\n\n")[0].replace("\n", " ").strip()
    args: dict[str, str] = {}
    section = re.search(r"^(?:Args|Arguments|Parameters):\s*\n((?:[ \t]+.+\n?)+)", doc, re.M)
    if section:
        for m in re.finditer(r"^\s+(\w+)(?:\s*\([^)]*\))?:\s*(.+)$", section.group(1), re.M):
            args[m.group(1)] = m.group(2).strip()
    return summary, args


class Tool:
    """A callable tool: its declaration for the model, and argument validation on call."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.name: str = fn.__name__
        self.is_async = inspect.iscoroutinefunction(fn)
        summary, arg_docs = _doc_parts(fn)
        hints = get_type_hints(fn)
        fields: dict[str, Any] = {}
        self.wants_context = False
        for pname, param in inspect.signature(fn).parameters.items():
            if pname == CONTEXT_PARAM:
                self.wants_context = True
                continue
            annotation = hints.get(pname, Any)
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[pname] = (annotation, default)
        self._args_model = create_model(f"{self.name}_args", **fields)
        schema = self._args_model.model_json_schema()
        schema.pop("title", None)
        for pname, prop in schema.get("properties", {}).items():
            prop.pop("title", None)
            if pname in arg_docs:
                prop["description"] = arg_docs[pname]
        self.spec = ToolSpec(name=self.name, description=summary, parameters=schema)

    async def call(self, args: dict[str, Any], state: dict[str, Any]) -> Any:
        """Validates and coerces the arguments, then runs the tool (sync tools in a thread)."""
        try:
            parsed = self._args_model.model_validate(args)
        except ValidationError as e:
            raise ValueError(f"invalid arguments for {self.name}: {e.errors()[0]['msg']} "
                             f"at {'.'.join(map(str, e.errors()[0]['loc']))}") from None
        kwargs = {k: getattr(parsed, k) for k in type(parsed).model_fields}
        if self.wants_context:
            kwargs[CONTEXT_PARAM] = ToolContext(state)
        if self.is_async:
            return await self.fn(**kwargs)
        return await anyio.to_thread.run_sync(lambda: self.fn(**kwargs), abandon_on_cancel=True)


@functools.cache
def _dumper(kind: Any) -> TypeAdapter[Any]:
    # Made once per process: an adapter builds its schema when made (about 1 ms; per tool call
    # before, 2% of the event loop's CPU at 32 calls in flight: bench/README.md, session 34).
    return TypeAdapter(kind)


def as_response(value: Any) -> dict[str, Any]:
    """A tool's return value as a function-response dict (`{"result": value}` unless a dict)."""
    if isinstance(value, dict):
        dumped: dict[str, Any] = _dumper(dict[str, Any]).dump_python(value, mode="json")
        return dumped
    return {"result": _dumper(Any).dump_python(value, mode="json")}
