"""Tool responses from the eval set (`mock_tools`): the one place that decides, for each tool
call an agent makes, whether it gets an expected call's recorded response or runs for real.

Rule: a call in turn *i* of a case is compared with the expected calls of the case's
invocation *i* (the calls recorded in its `intermediate_data`, with their responses), in their
recorded order; it is served the response of the **first expected call not yet used in this
turn** whose tool name is the same and whose arguments are equal under the run's argument
matching (`equal`: the trajectory criterion's `args_match` / `ignore_args`, else exact
equality). Each expected call serves at most once per turn, so a call repeated more often than
expected is unmatched the extra times. An expected call whose response was not recorded never
serves. A tool in `live` mode always runs, and so does a tool acting on the agent app itself
(an ADK `AgentTool`, handoff or loop exit: the adapter says so with `ToolServer.runs`; the calls
it leads to are served as any). An unmatched call to a tool in `expected` mode runs
for real, or with `strict` raises `UnmatchedToolCall` naming it (and the case fails with it,
even if the agent catches the exception: the runner checks `ToolServer.refused` after each
turn).

Adapters ask `ToolServer.serve` before running a tool (ADK agents through a plugin's
`before_tool_callback`, the built-in agent in its tool loop, plain callables through
`ToolCalls`, the hook handed to a callable that takes a `tools` parameter). After each turn the
runner marks the recorded tool-response events: an agenteval-only `served` field on the
event, one entry per function response of the event in order, `"expected"` or `"live"`, or
null for a response the server was never asked about (a plugin of the app's own answered it);
ADK's readers ignore unknown event fields.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from agenteval.agents.tools import as_response
from agenteval.errors import AgentEvalError
from agenteval.schema import (
    EvalCase,
    FunctionCall,
    FunctionResponse,
    Invocation,
    InvocationEvent,
    InvocationEvents,
)

if TYPE_CHECKING:
    from agenteval.agents.base import AgentAdapter, AgentSession, SessionSpec

Mode = Literal["expected", "live"]
MODES: tuple[str, ...] = get_args(Mode)
ANY_TOOL = "*"
Equality = Callable[[FunctionCall, FunctionCall], bool]


def exact_call(actual: FunctionCall, expected: FunctionCall) -> bool:
    """Same tool, equal arguments (as ADK compares them: values, key order aside)."""
    return actual.name == expected.name and (actual.args or {}) == (expected.args or {})


def call_text(name: str, args: Mapping[str, Any]) -> str:
    """A call as people read it: `get_time({"tz": "UTC"})`."""
    return f"{name}({json.dumps(dict(args), sort_keys=True, default=str)})"


class UnmatchedToolCall(AgentEvalError):
    """A call that matched no expected call, refused under `mock_tools_strict`."""


@dataclass(frozen=True)
class MockTools:
    """How a run serves tool calls: each tool's mode (`modes[name]`, else `modes["*"]`, else
    live), whether an unmatched `expected`-mode call fails the case (`strict`), and how
    arguments compare (`equal`)."""

    modes: Mapping[str, Mode]
    strict: bool = False
    equal: Equality = exact_call

    @classmethod
    def from_setting(cls, setting: str | Mapping[str, str] | None, strict: bool = False,
                     equal: Equality | None = None) -> MockTools | None:
        """The settings for a config's `mock_tools` (a mode for every tool, or a mode per tool
        with `*` for the others); None when no tool is served from the eval set."""
        if setting is None:
            return None
        modes = {ANY_TOOL: setting} if isinstance(setting, str) else dict(setting)
        bad = next((f"{k}: {v!r}" for k, v in modes.items() if v not in MODES), None)
        if bad is not None:
            raise ValueError(f"mock_tools modes are {' or '.join(MODES)} ({bad})")
        if "expected" not in modes.values():
            return None
        return cls(modes={k: v for k, v in modes.items() if v in MODES},  # type: ignore[misc]
                   strict=strict, equal=equal or exact_call)

    def mode(self, tool: str) -> Mode:
        """The mode of one tool."""
        return self.modes.get(tool, self.modes.get(ANY_TOOL, "live"))

    def for_case(self, case: EvalCase) -> ToolServer:
        """A server for one run of `case` (its expected invocations, one per turn)."""
        return ToolServer(self, list(case.conversation or []))


@dataclass
class ServedCall:
    """One decision: the call (its id when the agent gave one), how it was answered, and
    which expected call (its position in the turn's expected calls) answered it."""

    name: str
    args: dict[str, Any]
    call_id: str | None
    served: Mode
    expected_index: int | None = None


@dataclass(eq=False, repr=False)  # compared by identity: two fewer methods compiled at import
class ToolServer:
    """Serves one case run's tool calls, turn by turn (see the module docstring)."""

    settings: MockTools
    expected: Sequence[Invocation]
    turn: int = 0
    log: list[ServedCall] = field(default_factory=list)
    refused: UnmatchedToolCall | None = None
    _pool: list[tuple[FunctionCall, FunctionResponse | None]] = field(default_factory=list)
    _authors: list[str | None] = field(default_factory=list)  # each pool call's agent, if named
    _used: set[int] = field(default_factory=set)

    def begin_turn(self, index: int) -> None:
        """Starts turn `index`: its expected calls are the pool, none used, nothing logged."""
        self.turn = index
        self.log = []
        self._used = set()
        turn = self.expected[index] if index < len(self.expected) else None
        self._pool = turn.tool_calls_with_responses() if turn is not None else []
        self._authors = _call_authors(turn) if turn is not None else []

    def serve(self, name: str, args: Mapping[str, Any] | None,
              call_id: str | None = None, agent: str | None = None) -> dict[str, Any] | None:
        """The response to give instead of running the tool, or None: run it. Raises
        `UnmatchedToolCall` for an unmatched `expected`-mode call under `strict`. `agent`: the
        agent making the call, when known: an expected call it authored answers first (agents
        running side by side may call one tool in another order than recorded), then any."""
        args = dict(args or {})
        if self.settings.mode(name) == "live":
            self.log.append(ServedCall(name, args, call_id, "live"))
            return None
        actual = FunctionCall(id=call_id, name=name, args=args)
        order: Sequence[int] = range(len(self._pool))
        if agent is not None and agent in self._authors:
            order = sorted(order, key=lambda i: self._authors[i] != agent)  # stable: own calls first
        for i in order:
            expected, response = self._pool[i]
            if i in self._used or response is None or response.response is None:
                continue
            if self.settings.equal(actual, expected):
                self._used.add(i)
                self.log.append(ServedCall(name, args, call_id, "expected", i))
                return as_response(response.response)
        if self.settings.strict:
            by = f" by agent {agent!r}" if agent is not None else ""
            refusal = UnmatchedToolCall(
                f"{call_text(name, args)}{by} in invocation {self.turn} matches no expected call "
                f"with a recorded response (mock_tools strict: the tool was not run)")
            # The first refusal is the case's error: an agent running side by side may be
            # refused after it, and its call is not where the run left the eval set.
            self.refused = self.refused or refusal
            raise refusal
        self.log.append(ServedCall(name, args, call_id, "live"))
        return None

    def expects_from(self, agent: str) -> bool:
        """Whether the turn's expected calls name `agent` as the author of one of them."""
        return agent in self._authors

    def runs(self, name: str, args: Mapping[str, Any] | None, call_id: str | None = None) -> None:
        """A call the agent's framework always runs (one acting on the agent app itself, such as
        a handoff): logged as live, whatever its tool's mode, and never refused."""
        self.log.append(ServedCall(name, dict(args or {}), call_id, "live"))

    def how(self, response: FunctionResponse, taken: set[int]) -> Mode | None:
        """How the call `response` answers was served (None: it was not asked about): by call
        id, else the first logged call of that tool not yet `taken`."""
        for i, entry in enumerate(self.log):
            if i in taken:
                continue
            if (entry.call_id is not None and entry.call_id == response.id) or (
                    (entry.call_id is None or response.id is None) and entry.name == response.name):
                taken.add(i)
                return entry.served
        return None

    def mark(self, events: Sequence[InvocationEvent]) -> None:
        """Marks the turn's tool-response events with how each response was served."""
        taken: set[int] = set()
        for event in events:
            parts = event.content.parts if event.content is not None else None
            responses = [p.function_response for p in parts or [] if p.function_response]
            marks = [self.how(r, taken) for r in responses]
            # None: never asked (something else answered). An extra field (InvocationEvent keeps
            # extras), which ADK's InvocationEvent ignores.
            if any(m is not None for m in marks) and event.__pydantic_extra__ is not None:
                event.__pydantic_extra__["served"] = marks


def _call_authors(turn: Invocation) -> list[str | None]:
    """The agent (its event's author) of each of the turn's tool calls, in `tool_calls()`'s
    order; None each in the legacy form, which names no agent."""
    data = turn.intermediate_data
    if not isinstance(data, InvocationEvents):
        return [None] * len(turn.tool_calls())
    return [e.author for e in data.invocation_events if e.content and e.content.parts
            for p in e.content.parts if p.function_call]


def _unwrapped(response: dict[str, Any]) -> Any:
    """A served response as the tool would have returned it (`as_response`'s inverse)."""
    return response["result"] if set(response) == {"result"} else response


@dataclass
class ToolCalls:
    """The hook a plain callable agent uses for its tool calls: `call` (sync) or `acall`
    (async) runs `fn(**args)`, or returns the eval set's response instead when `mock_tools`
    serves the call; either way the call and its response are recorded as the turn's events
    (so the callable need not report them in `tool_calls`)."""

    server: ToolServer | None
    calls: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = field(default_factory=list)

    def _before(self, name: str, args: Mapping[str, Any]) -> tuple[str, dict[str, Any] | None]:
        call_id = f"tool_call_{len(self.calls) + 1}"
        served = self.server.serve(name, args, call_id) if self.server is not None else None
        return call_id, served

    def call(self, name: str, args: Mapping[str, Any], fn: Callable[..., Any]) -> Any:
        """The tool's result: `fn(**args)`, or the served response (a recorded `{"result": x}`
        as `x`, the way a tool returning `x` is recorded)."""
        call_id, served = self._before(name, args)
        result = _unwrapped(served) if served is not None else fn(**args)
        self.calls.append((name, dict(args), call_id, as_response(result)))
        return result

    async def acall(self, name: str, args: Mapping[str, Any], fn: Callable[..., Any]) -> Any:
        """`call` for async agents: `fn` may be sync or async."""
        call_id, served = self._before(name, args)
        if served is not None:
            result: Any = _unwrapped(served)
        else:
            result = fn(**args)
            if inspect.isawaitable(result):
                result = await result
        self.calls.append((name, dict(args), call_id, as_response(result)))
        return result


class ServedToolsAdapter:
    """An adapter whose case runs have their tool calls served under `mock_tools`: the runner
    (`infer_case`) gives each run of a case its own `ToolServer`, on the session spec the
    wrapped adapter receives."""

    def __init__(self, adapter: AgentAdapter, mock_tools: MockTools) -> None:
        self.adapter = adapter
        self.mock_tools = mock_tools

    @property
    def name(self) -> str:
        return self.adapter.name

    async def start_session(self, spec: SessionSpec) -> AgentSession:
        return await self.adapter.start_session(spec)


def with_mock_tools(adapter: AgentAdapter, mock_tools: MockTools | None) -> AgentAdapter:
    """`adapter` serving tool calls under `mock_tools` (itself when None)."""
    return adapter if mock_tools is None else ServedToolsAdapter(adapter, mock_tools)


__all__ = ["ANY_TOOL", "MODES", "Equality", "MockTools", "Mode", "ServedCall", "ServedToolsAdapter",
           "ToolCalls", "ToolServer", "UnmatchedToolCall", "call_text", "exact_call", "with_mock_tools"]
