"""Agents under test: the built-in tool-calling agent and adapters for other agents."""

from agenteval.agents.base import AgentAdapter, AgentSession, SessionSpec, TurnResult
from agenteval.agents.builtin import Agent, BuiltinAdapter
from agenteval.agents.callable import CallableAdapter
from agenteval.agents.loader import (
    AgentLoadError,
    agent_home,
    check_agent_path,
    describe,
    load_root_agent,
    to_adapter,
)
from agenteval.agents.tools import Tool, ToolContext

__all__ = [
    "Agent",
    "AgentAdapter",
    "AgentLoadError",
    "AgentSession",
    "BuiltinAdapter",
    "CallableAdapter",
    "SessionSpec",
    "Tool",
    "ToolContext",
    "TurnResult",
    "agent_home",
    "check_agent_path",
    "describe",
    "load_root_agent",
    "to_adapter",
]
