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
_KEYS_MEMO = ("_agenteval_call_keys", "_agenteval_call_names")  # by ignore_args


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

        Memoised for the events form, where building it walks every event's parts: the
        trajectory and efficiency criteria ask for it once each per invocation, and it was
        ~40% of a trajectory pass. The memo is kept in `__dict__` under a name pydantic ignores
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
        calls = [
            p.function_call
            for e in events
            if e.content and e.content.parts
            for p in e.content.parts
            if p.function_call
        ]
        self.__dict__[_CALLS_MEMO] = (events, len(events), calls)
        return calls

    def call_keys(self, ignore_args: bool) -> tuple[Any, ...]:
        """The turn's calls as comparable values, in order: `(name, args)` each, or the names
        with `ignore_args`. Two calls are equal as ADK compares them (see the trajectory
        criteria) exactly when their keys are equal, so a whole trajectory compares with one
        C-level tuple comparison. Memoised like `tool_calls()` (the legacy form's list too)."""
        # Checked against the list the calls come from (the events, or the legacy form's calls)
        # without building `tool_calls()`: asked twice per invocation per trajectory criterion.
        data = self.intermediate_data
        if data is None:
            return ()
        source = data.tool_uses if isinstance(data, IntermediateData) else data.invocation_events
        slot = _KEYS_MEMO[ignore_args]
        memo = self.__dict__.get(slot)
        if memo is not None and memo[0] is source and memo[1] == len(source):
            return memo[2]  # type: ignore[no-any-return]
        calls = self.tool_calls()
        keys = tuple(c.name for c in calls) if ignore_args else tuple((c.name, c.args) for c in calls)
        self.__dict__[slot] = (source, len(source), keys)
        return keys

    def forget_tool_calls(self) -> None:
        """Drops the memos of `tool_calls()` and `call_keys()` (needed only after changing a
        part or a call in place)."""
        for slot in (_CALLS_MEMO, *_KEYS_MEMO):
            self.__dict__.pop(slot, None)

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
