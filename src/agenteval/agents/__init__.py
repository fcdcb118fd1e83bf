"""Agents under test: the built-in tool-calling agent and adapters for other agents."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenteval.lazy import names_from

if TYPE_CHECKING:
    from agenteval.agents.base import AgentAdapter, AgentSession, SessionSpec, TurnResult
    from agenteval.agents.builtin import Agent, BuiltinAdapter
    from agenteval.agents.callable import CallableAdapter
    from agenteval.agents.loader import (
        AgentLoadError,
        agent_home,
        agent_names,
        check_agent_path,
        describe,
        load_root_agent,
        to_adapter,
    )
    from agenteval.agents.tools import Tool, ToolContext

# Each name is imported when first asked for: importing one module of the package
# (`agents.mock_tools`, for `score`) does not import the built-in agent, its tools and the model
# clients.
__getattr__ = names_from(__name__, {
    **dict.fromkeys(["AgentAdapter", "AgentSession", "SessionSpec", "TurnResult"], "base"),
    **dict.fromkeys(["Agent", "BuiltinAdapter"], "builtin"),
    "CallableAdapter": "callable",
    **dict.fromkeys(["AgentLoadError", "agent_home", "agent_names", "check_agent_path", "describe",
                     "load_root_agent", "to_adapter"], "loader"),
    **dict.fromkeys(["Tool", "ToolContext"], "tools"),
})


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
    "agent_names",
    "check_agent_path",
    "describe",
    "load_root_agent",
    "to_adapter",
]
