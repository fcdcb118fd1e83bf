"""Agents under test: the built-in tool-calling agent and adapters for other agents."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

# Each name is imported when first asked for: importing one module of the package
# (`agents.mock_tools`, for `score`) does not import the built-in agent, its tools and the model
# clients.
_HOME = {
    "AgentAdapter": ("agenteval.agents.base", "AgentAdapter"),
    "AgentSession": ("agenteval.agents.base", "AgentSession"),
    "SessionSpec": ("agenteval.agents.base", "SessionSpec"),
    "TurnResult": ("agenteval.agents.base", "TurnResult"),
    "Agent": ("agenteval.agents.builtin", "Agent"),
    "BuiltinAdapter": ("agenteval.agents.builtin", "BuiltinAdapter"),
    "CallableAdapter": ("agenteval.agents.callable", "CallableAdapter"),
    "AgentLoadError": ("agenteval.agents.loader", "AgentLoadError"),
    "agent_home": ("agenteval.agents.loader", "agent_home"),
    "check_agent_path": ("agenteval.agents.loader", "check_agent_path"),
    "describe": ("agenteval.agents.loader", "describe"),
    "load_root_agent": ("agenteval.agents.loader", "load_root_agent"),
    "to_adapter": ("agenteval.agents.loader", "to_adapter"),
    "Tool": ("agenteval.agents.tools", "Tool"),
    "ToolContext": ("agenteval.agents.tools", "ToolContext"),
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'agenteval.agents' has no attribute {name!r}")
    module, attr = _HOME[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # asked once
    return value


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
