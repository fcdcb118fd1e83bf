"""Invocations: one user turn and what the agent did in it, in both ADK intermediate forms."""


from typing import Any, ClassVar

from pydantic import ConfigDict, Field, field_validator, model_validator

from agenteval.schema.base import OpenWireModel, WireModel
from agenteval.schema.content import Content, FunctionCall, FunctionResponse, GenaiModel, Part, both_cases
from agenteval.schema.rubric import Rubric, unique_rubric_ids

# The calls collected from an intermediate-data object (`IntermediateData`, `InvocationEvents`):
# (the list they came from, its length, the calls, their `(name, args)` keys), kept in a slot of
# the object. A slot is never validated, serialised, compared, copied or pickled (a copy
# collects its own when asked). Not a key of the object's `__dict__`: pydantic's serialiser
# reads every key there, and one that is not a field made serialising an invocation 40% slower;
# nor the invocation's, whose ten fields fill its dict (an eleventh key doubles it).
_MEMO = "_calls_memo"
# That slot's name, for a loop that reads the memo itself (`criteria.trajectory`): a memo is
# `(source list, its length, calls, keys)`, current while the source's length is the one kept.
CALLS_MEMO = _MEMO
_set = object.__setattr__


def _event_calls(events: list["InvocationEvent"]) -> tuple[list[FunctionCall], list[tuple[Any, Any]]]:
    """The function calls of the events' parts, in order, with ADK's truth tests (each event's
    content read once), and their `(name, args)` keys, made in the same walk (a second pass
    over the calls was an eighth of collecting them)."""
    calls: list[FunctionCall] = []
    keys: list[tuple[Any, Any]] = []
    for e in events:
        if (content := e.content) and (parts := content.parts):
            for p in parts:
                if c := p.function_call:
                    calls.append(c)
                    keys.append((c.name, c.args))
    return calls, keys


def _remember(data: "IntermediateData | InvocationEvents", source: list[Any],
              calls: list[FunctionCall], keys: list[tuple[Any, Any]] | None = None) -> tuple[Any, ...]:
    """Keeps (source, its length, calls, keys) on `data`; `keys` made from the calls if not given."""
    memo = (source, len(source), calls,
            tuple(keys) if keys is not None else tuple([(c.name, c.args) for c in calls]))
    _set(data, _MEMO, memo)
    return memo


def _collected(data: "IntermediateData | InvocationEvents") -> tuple[Any, ...]:
    """(source list, its length, calls, keys) for the data's current calls: those kept, or
    collected again when the list they came from changed length. (Assigning the list drops
    what was kept: `_CallsKept.__setattr__`, so a read checks only the length; the object's
    `__dict__`, cold in a pass over many invocations, was a third of reading the keys.)"""
    memo = getattr(data, _MEMO, None)  # unset on a copy and after an assignment
    if memo is not None and memo[1] == len(memo[0]):
        return memo  # type: ignore[no-any-return]
    source = data.__dict__[data.calls_from]
    if data.calls_from == "tool_uses":
        return _remember(data, source, source)
    return _remember(data, source, *_event_calls(source))


class _CallsKept(WireModel):
    """An intermediate-data form that keeps its calls in a slot (`_MEMO`), dropped when its
    field holding them (`calls_from`) is assigned."""

    model_config = ConfigDict(defer_build=True)

    calls_from: ClassVar[str]
    __slots__ = (_MEMO,)

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name == self.calls_from and hasattr(self, _MEMO):
            delattr(self, _MEMO)


class IntermediateData(_CallsKept):
    """The legacy form: flat lists of tool uses, tool responses and sub-agent texts."""

    model_config = ConfigDict(defer_build=True)

    tool_uses: list[FunctionCall] = Field(default_factory=list)
    tool_responses: list[FunctionResponse] = Field(default_factory=list)
    intermediate_responses: list[tuple[str, list[Part]]] = Field(default_factory=list)
    calls_from: ClassVar[str] = "tool_uses"  # the field the turn's calls are read from

    @model_validator(mode="after")
    def _collect_calls(self) -> "IntermediateData":
        # Collected as the object is validated, while its calls are in the CPU's caches:
        # a pass over the invocations later reads one tuple instead of walking them.
        _remember(self, self.tool_uses, self.tool_uses)
        return self


class UsageMetadata(GenaiModel):
    """Token counts reported by one model call (genai's usage-metadata shape; its per-modality
    details kept as extras, any other key refused: a mistyped count would read as none)."""

    known_extras: ClassVar[frozenset[str]] = both_cases(
        "cache_tokens_details", "candidates_tokens_details", "prompt_tokens_details",
        "tool_use_prompt_tokens_details", "traffic_type")

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


class InvocationEvents(_CallsKept):
    """The current form: the invocation's events in order."""

    invocation_events: list[InvocationEvent] = Field(default_factory=list)
    calls_from: ClassVar[str] = "invocation_events"  # the field the turn's calls are read from

    @model_validator(mode="after")
    def _collect_calls(self) -> "InvocationEvents":
        # As `IntermediateData`'s: the events are walked once, as they are validated.
        events = self.invocation_events
        _remember(self, events, *_event_calls(events))
        return self


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

    @field_validator("rubrics")
    @classmethod
    def _unique_rubric_ids(cls, rubrics: list[Rubric] | None) -> list[Rubric] | None:
        unique_rubric_ids(rubrics or ())  # as a case's (`EvalCase`); run only when given
        return rubrics

    def tool_calls(self) -> list[FunctionCall]:
        """Every tool call of the turn, in order (the list is shared: do not change it).

        Collected when the intermediate data is validated (a file read, an invocation built)
        and kept on it outside its fields (never serialised, compared or copied); collected
        again when `intermediate_data` is replaced or its list of events (or of tool uses) is
        replaced or changes length. A part or call changed in place inside an existing event
        is not seen: call `forget_tool_calls()` after such a change.
        """
        data = self.intermediate_data
        return [] if data is None else _collected(data)[2]

    def call_keys(self, ignore_args: bool) -> tuple[Any, ...]:
        """The turn's calls as comparable values, in order: `(name, args)` each, or the names
        with `ignore_args`. Two calls are equal as ADK compares them (see the trajectory
        criteria) exactly when their keys are equal, so a whole trajectory compares with one
        C-level tuple comparison. Kept with `tool_calls()`'s list, under the same rule."""
        data = self.intermediate_data
        if data is None:
            return ()
        # `_collected`'s check inlined: a trajectory pass calls this per invocation.
        memo = getattr(data, _MEMO, None)
        if memo is None or memo[1] != len(memo[0]):
            memo = _collected(data)
        keys: tuple[Any, ...] = memo[3]
        return tuple([k[0] for k in keys]) if ignore_args else keys

    def forget_tool_calls(self) -> None:
        """Drops the calls kept for `tool_calls()` and `call_keys()` (needed only after changing
        a part or a call in place)."""
        data = self.intermediate_data
        if data is not None and hasattr(data, _MEMO):
            delattr(data, _MEMO)

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
        return len([e for e in data.invocation_events if e.usage_metadata or e.model_version])
