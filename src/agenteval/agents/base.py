"""One protocol for every agent under test: start a session with state, send a user turn,
get the turn's events.

Adapters (the built-in agent, plain callables, ADK agents, ...) implement `AgentAdapter`;
the runner only ever talks to this protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agenteval.schema import AppDetails, Content, InvocationEvent

if TYPE_CHECKING:
    from agenteval.agents.mock_tools import ToolServer


@dataclass
class TurnResult:
    """What the agent did in one turn.

    `events` are the intermediate events (tool calls, tool responses, intermediate texts, model
    usage) in order; `final_response` is the answer shown to the user. `model_seconds` and
    `tool_seconds` are busy time inside model calls and tools (None when not measured).
    """

    final_response: Content | None
    events: list[InvocationEvent] = field(default_factory=list)
    model_seconds: float | None = None
    tool_seconds: float | None = None
    app_details: AppDetails | None = None


@dataclass
class SessionSpec:
    """The session a case runs in; `tools`, when set, answers tool calls from the eval set
    (`mock_tools`): adapters ask it before running a tool (see `agents.mock_tools`)."""

    app_name: str
    user_id: str
    session_id: str
    state: dict[str, Any] = field(default_factory=dict)
    tools: ToolServer | None = None


class AgentSession(Protocol):
    """A live conversation with the agent."""

    async def send(self, message: Content) -> TurnResult:
        """Sends one user message and returns what the agent did in that turn."""
        ...

    def state(self) -> dict[str, Any]:
        """The session state now (for criteria that read it, and for the result document)."""
        ...

    async def close(self) -> None:
        """Releases the session's resources."""
        ...


class AgentAdapter(Protocol):
    """Something that can open sessions with an agent."""

    @property
    def name(self) -> str:
        """The agent's name, used as the app name when the case gives none."""
        ...

    async def start_session(self, spec: SessionSpec) -> AgentSession:
        """Opens a fresh session with the given initial state."""
        ...
