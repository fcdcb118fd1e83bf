"""Invocations: one user turn and what the agent did in it, in both ADK intermediate forms."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from agenteval.schema.base import OpenWireModel, WireModel
from agenteval.schema.content import Content, FunctionCall, FunctionResponse, Part
from agenteval.schema.rubric import Rubric


class IntermediateData(WireModel):
    """The legacy form: flat lists of tool uses, tool responses and sub-agent texts."""

    tool_uses: list[FunctionCall] = Field(default_factory=list)
    tool_responses: list[FunctionResponse] = Field(default_factory=list)
    intermediate_responses: list[tuple[str, list[Part]]] = Field(default_factory=list)


class UsageMetadata(OpenWireModel):
    """Token counts reported by one model call (genai's usage-metadata shape)."""

    prompt_token_count: int | None = None
    candidates_token_count: int | None = None
    total_token_count: int | None = None
    cached_content_token_count: int | None = None
    tool_use_prompt_token_count: int | None = None
    thoughts_token_count: int | None = None


class InvocationEvent(OpenWireModel):
    """One event inside an invocation: a model output, tool call or tool response."""

    author: str
    content: Content | None = None
    grounding_metadata: dict[str, Any] | None = None
    usage_metadata: UsageMetadata | None = None
    model_version: str | None = None


class InvocationEvents(WireModel):
    """The current form: the invocation's events in order."""

    invocation_events: list[InvocationEvent] = Field(default_factory=list)


class AgentDetails(WireModel):
    """An agent's instructions and tool declarations as seen during inference."""

    name: str
    instructions: str = ""
    tool_declarations: list[Any] = Field(default_factory=list)


class AppDetails(WireModel):
    """Per-agent details captured during inference, keyed by agent name."""

    agent_details: dict[str, AgentDetails] = Field(default_factory=dict)


class Invocation(WireModel):
    """One user turn: what the user said, what the agent finally answered, and how."""

    invocation_id: str = ""
    user_content: Content
    final_response: Content | None = None
    # Smart-mode union: both members forbid extra keys, so `tool_uses` selects the legacy form,
    # `invocation_events` the current one, and `{}` the legacy form (as ADK resolves it).
    intermediate_data: IntermediateData | InvocationEvents | None = None
    creation_timestamp: float = 0.0
    duration: float | None = None
    model_duration: float | None = None
    tool_duration: float | None = None
    rubrics: list[Rubric] | None = None
    app_details: AppDetails | None = None

    def tool_calls(self) -> list[FunctionCall]:
        """Every tool call of the turn, in order."""
        data = self.intermediate_data
        if data is None:
            return []
        if isinstance(data, IntermediateData):
            return data.tool_uses
        return [
            p.function_call
            for e in data.invocation_events
            if e.content and e.content.parts
            for p in e.content.parts
            if p.function_call
        ]

    def tool_responses(self) -> list[FunctionResponse]:
        """Every tool response of the turn, in order."""
        data = self.intermediate_data
        if data is None:
            return []
        if isinstance(data, IntermediateData):
            return data.tool_responses
        return [
            p.function_response
            for e in data.invocation_events
            if e.content and e.content.parts
            for p in e.content.parts
            if p.function_response
        ]

    def tool_calls_with_responses(self) -> list[tuple[FunctionCall, FunctionResponse | None]]:
        """Calls paired with their responses.

        Pairing is by id when ids are present; unlike ADK, id-less calls are paired with id-less
        responses by position instead of all sharing the last response.
        """
        responses = self.tool_responses()
        by_id = {r.id: r for r in responses if r.id}
        anonymous = iter([r for r in responses if not r.id])
        return [
            (c, by_id.get(c.id) if c.id else next(anonymous, None)) for c in self.tool_calls()
        ]

    def intermediate_texts(self) -> list[tuple[str, str]]:
        """Natural-language texts emitted before the final response, as (author, text)."""
        data = self.intermediate_data
        if data is None:
            return []
        if isinstance(data, IntermediateData):
            return [
                (author, "\n".join(p.text for p in parts if p.text))
                for author, parts in data.intermediate_responses
            ]
        return [
            (e.author, e.content.text())
            for e in data.invocation_events
            if e.content and e.content.text()
        ]

    def usage(self) -> list[UsageMetadata]:
        """Usage metadata of every event that reported it (none for the legacy form)."""
        data = self.intermediate_data
        if not isinstance(data, InvocationEvents):
            return []
        return [e.usage_metadata for e in data.invocation_events if e.usage_metadata]

    def model_call_count(self) -> int | None:
        """Model calls of the turn: events carrying usage metadata or a model version."""
        data = self.intermediate_data
        if not isinstance(data, InvocationEvents):
            return None
        return sum(1 for e in data.invocation_events if e.usage_metadata or e.model_version)
