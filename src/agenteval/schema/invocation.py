"""Invocations: one user turn and what the agent did in it, in both ADK intermediate forms."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from agenteval.schema.base import OpenWireModel, WireModel
from agenteval.schema.content import Content, FunctionCall, FunctionResponse, Part
from agenteval.schema.rubric import Rubric

# The key of `Invocation.tool_calls()`'s memo in the instance `__dict__`: not a field name, so
# pydantic neither validates, serialises nor compares it.
_CALLS_MEMO = "_agenteval_tool_calls"


def _event_calls(events: list[InvocationEvent]) -> list[FunctionCall]:
    """The function calls of the events' parts, in order, with ADK's truth tests (each event's
    content read once)."""
    return [c for e in events if (content := e.content) and content.parts
            for p in content.parts if (c := p.function_call)]


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
        """Every tool call of the turn, in order (the list is shared: do not change it).

        Memoised for the events form, where building it walks every event's parts: several
        criteria (efficiency, precision and recall, the reasons of trajectory mismatches) ask
        for it per invocation. The memo is kept in `__dict__` under a name pydantic ignores
        (not a field: never serialised, copied or compared) and is rebuilt when
        `intermediate_data` is replaced or its event list is replaced or changes length; a part
        changed in place inside an existing event is not seen (call `forget_tool_calls()`).
        """
        data = self.intermediate_data
        if data is None:
            return []
        if isinstance(data, IntermediateData):
            return data.tool_uses
        events = data.invocation_events
        memo = self.__dict__.get(_CALLS_MEMO)
        if memo is not None and memo[0] is events and memo[1] == len(events):
            return memo[2]  # type: ignore[no-any-return]
        calls = _event_calls(events)
        self.__dict__[_CALLS_MEMO] = (events, len(events), calls)
        return calls

    def call_keys(self, ignore_args: bool) -> tuple[Any, ...]:
        """The turn's calls as comparable values, in order: `(name, args)` each, or the names
        with `ignore_args`. Two calls are equal as ADK compares them (see the trajectory
        criteria) exactly when their keys are equal, so a whole trajectory compares with one
        C-level tuple comparison.

        Not memoised: a criterion asks once per invocation, and a memo kept on each invocation
        (as `tool_calls()` keeps one) cost more than the walk it saved on a pass over invocations
        read once, the common case (the stores, and the collector walking what they keep)."""
        data = self.intermediate_data
        if data is None:
            return ()
        calls = data.tool_uses if isinstance(data, IntermediateData) else _event_calls(data.invocation_events)
        return tuple([c.name for c in calls] if ignore_args else [(c.name, c.args) for c in calls])

    def forget_tool_calls(self) -> None:
        """Drops the memo of `tool_calls()` (needed only after changing a part or a call in
        place)."""
        self.__dict__.pop(_CALLS_MEMO, None)

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
