"""The tools an agent declares, read from the agent object without running it (for the web's
case editor: tool names, argument names, types and which are required).

Built-in agents (`agents.Agent`) declare what their tools' signatures give; ADK agents what
ADK's own declarations give (`FunctionTool`, or a plain function it wraps), over the agent and
its sub-agents; other agents (plain callables) declare nothing. A tool ADK cannot declare
without a model call or a connection (toolsets, MCP) is left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agenteval.agents.builtin import Agent


@dataclass(frozen=True)
class DeclaredParam:
    """One argument of a declared tool."""

    name: str
    type: str  # the JSON schema type ("string", "integer", …; "any" when none is given)
    required: bool
    description: str = ""
    schema: dict[str, Any] = field(default_factory=dict)  # its JSON schema (`json_schema`)


@dataclass(frozen=True)
class DeclaredTool:
    """A tool an agent declares: its name, description and arguments (declaration order)."""

    name: str
    description: str
    params: list[DeclaredParam]
    agent: str = ""


def _type(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind.lower()
    options = [_type(s) for s in schema.get("anyOf", []) if s.get("type") != "null"]
    return options[0] if len(options) == 1 else "any"


_KEPT = ("type", "enum", "items", "properties", "required", "description", "minimum", "maximum", "format")


def json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A parameter's schema as plain JSON schema for an editor: types lower case (genai writes
    `STRING`), an optional value's `anyOf [X, null]` as X, only the keys that shape an input
    (type, enum, items, properties, required, description, bounds, format)."""
    options = [s for s in schema.get("anyOf", []) if isinstance(s, dict) and s.get("type") != "null"]
    if "type" not in schema and len(options) == 1:
        schema = {**options[0], **{k: v for k, v in schema.items() if k != "anyOf"}}
    out: dict[str, Any] = {k: schema[k] for k in _KEPT if schema.get(k) is not None}
    if isinstance(out.get("type"), str):
        out["type"] = out["type"].lower()
    if isinstance(out.get("items"), dict):
        out["items"] = json_schema(out["items"])
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: json_schema(v or {}) for k, v in out["properties"].items()}
    return out


def params_of(schema: dict[str, Any] | None) -> list[DeclaredParam]:
    """The arguments of a JSON (or genai) object schema."""
    if not schema:
        return []
    required = set(schema.get("required") or [])
    return [DeclaredParam(name, _type(prop or {}), name in required, str((prop or {}).get("description", "")),
                          json_schema(prop or {}))
            for name, prop in (schema.get("properties") or {}).items()]


def _adk_tools(agent: Any) -> list[DeclaredTool]:
    from google.adk.tools.base_tool import BaseTool
    from google.adk.tools.function_tool import FunctionTool

    out: list[DeclaredTool] = []
    seen: set[int] = set()
    todo = [agent]
    while todo:
        a = todo.pop(0)
        if id(a) in seen:
            continue
        seen.add(id(a))
        for tool in getattr(a, "tools", None) or []:
            if not isinstance(tool, BaseTool):
                if not callable(tool):
                    continue
                tool = FunctionTool(tool)
            try:
                declaration = tool._get_declaration()
            except Exception:  # a tool ADK cannot declare offline: left out (see the docstring)
                continue
            if declaration is None:
                continue
            data = declaration.model_dump(mode="json", exclude_none=True)
            schema = data.get("parameters_json_schema") or data.get("parameters")
            out.append(DeclaredTool(str(data.get("name", tool.name)), str(data.get("description", "")),
                                    params_of(schema), str(getattr(a, "name", ""))))
        todo += list(getattr(a, "sub_agents", None) or [])
    return out


def declared_tools(agent: Any) -> list[DeclaredTool]:
    """The tools `agent` declares (see the module docstring)."""
    if isinstance(agent, Agent):
        return [DeclaredTool(t.spec.name, t.spec.description, params_of(t.spec.parameters), agent.name)
                for t in agent._tools.values()]
    if type(agent).__module__.startswith("google.adk"):
        return _adk_tools(agent)
    return []


__all__ = ["DeclaredParam", "DeclaredTool", "declared_tools", "json_schema", "params_of"]
