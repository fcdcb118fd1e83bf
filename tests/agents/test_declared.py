"""The tools an agent declares (`agents.declared`), for the web's tool-aware case editor."""

from __future__ import annotations

from typing import Literal

import pytest

from agenteval.agents import Agent
from agenteval.agents.declared import DeclaredParam, declared_tools, json_schema


def roll_die(sides: int, label: str = "d") -> int:
    """Roll a die.

    Args:
        sides: The number of sides.
    """
    return 4


def test_a_builtin_agent_declares_its_tools_signatures() -> None:
    (tool,) = declared_tools(Agent(name="dice", model="scripted", tools=[roll_die]))
    assert tool.name == "roll_die" and tool.description.startswith("Roll a die") and tool.agent == "dice"
    assert tool.params == [
        DeclaredParam("sides", "integer", True, "The number of sides.",
                      {"type": "integer", "description": "The number of sides."}),
        DeclaredParam("label", "string", False, "", {"type": "string"})]


def test_a_parameters_json_schema_is_kept_for_typed_inputs() -> None:
    def book(unit: Literal["celsius", "fahrenheit"], guests: list[int], note: str | None = None) -> str:
        """Book."""
        return ""

    (tool,) = declared_tools(Agent(name="a", model="scripted", tools=[book]))
    assert [p.schema for p in tool.params] == [
        {"type": "string", "enum": ["celsius", "fahrenheit"]},
        {"type": "array", "items": {"type": "integer"}}, {"type": "string"}]
    genai = {"anyOf": [{"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]},
                       {"type": "null"}], "description": "where"}
    assert json_schema(genai) == {"type": "object", "properties": {"city": {"type": "string"}},
                                  "required": ["city"], "description": "where"}


def test_an_adk_agent_and_its_sub_agents_declare_their_tools() -> None:
    pytest.importorskip("google.adk")
    from google.adk.agents import LlmAgent

    def lookup(q: str) -> str:
        """Looks up q."""
        return q

    helper = LlmAgent(name="helper", model="gemini-2.0-flash", tools=[lookup])
    root = LlmAgent(name="root", model="gemini-2.0-flash", tools=[roll_die], sub_agents=[helper])
    tools = {t.name: t for t in declared_tools(root)}
    assert set(tools) == {"roll_die", "lookup"} and tools["lookup"].agent == "helper"
    assert [(p.name, p.type, p.required) for p in tools["roll_die"].params] == [
        ("sides", "integer", True), ("label", "string", False)]


def test_a_plain_callable_declares_nothing() -> None:
    assert declared_tools(lambda text: text) == []
