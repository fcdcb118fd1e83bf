"""Replaying a recorded run: model replies and tool results served from its traces.

A run's traces hold, per case run, every model request (the messages sent, the tools offered)
with its reply, and every tool call with its result (see `agenteval.schema.trace`). A
`Recording` holds those of one recorded run, as one `Cassette` per case run (eval set id,
eval id, run index). While a case runs under replay (`replay_case`), a model call or tool call
made through a replaying layer (`ReplayModel`, and the agents' replay hooks in
`agenteval.agents.replay`) asks the case's cassette for the next recorded step of the current
invocation instead of calling the model or running the tool:

* a model request is compared with the recorded one (messages, system instruction, tools
  offered), normalised first: ids (UUIDs, long hex ids such as session ids) and timestamps
  (ISO 8601, epoch seconds) are masked, so that what differs between any two runs does not
  count; a tool call is compared by name and arguments (normalised alike). Within an
  invocation a call takes the first unserved recorded call with the same request (model) or
  name and arguments (tool): recorded order for one agent, while parallel tool calls and
  agents running side by side may come in another order. When none matches, the difference
  reported is the one from the first unserved recorded call;
* the first difference is the cassette's `Divergence` (case, invocation, step, what differed).
  With `then="stop"` the call raises it (`ReplayDiverged`): the case ends there, with the
  divergence as its error. With `then="live"` the call, and every later one of the case run,
  goes to the real model or tool ("what does the agent do from here?").

What cannot be replayed is a divergence too: a reply or tool result the recording cut (trace
attributes keep at most `MAX_VALUE_CHARS` characters), an invocation the recording lacks, or a
recorded invocation the agent ended with steps left unserved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

from agenteval.models.base import (
    LLM,
    Generation,
    ModelError,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    Usage,
)
from agenteval.schema import EvalSetResult
from agenteval.schema.trace import Span, Trace

__all__ = ["Cassette", "Divergence", "RecordedReply", "Recording", "ReplayDiverged", "ReplayModel",
           "ReplayThen", "current_cassette", "normalise", "recorded_user_turn", "replay_case", "replay_turn",
           "replaying"]

ReplayThen = Literal["stop", "live"]

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX_ID = re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{12,}\b")  # session ids, trace ids, tokens
_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_EPOCH = re.compile(r"\b1[5-9]\d{8}(?:\.\d+)?\b")  # epoch seconds, 2017 to 2033
_CUT = re.compile(r" …\[(\d+) characters cut\]… ")  # the mark `tracing.recorder.bounded` leaves


def normalise(text: str) -> str:
    """`text` with ids and timestamps masked (`<id>`, `<time>`): what may differ between two
    runs that did the same thing."""
    text = _UUID.sub("<id>", text)
    text = _ISO_TIME.sub("<time>", text)
    text = _EPOCH.sub("<time>", text)
    return _HEX_ID.sub("<id>", text)


def _json(value: Any) -> str:
    # As `tracing.recorder.as_attribute` writes structured values, so that texts compare.
    return json.dumps(value, ensure_ascii=False, default=repr)


@dataclass(frozen=True)
class Divergence:
    """Where a replay first departed from its recording, and how."""

    eval_id: str
    run_index: int
    invocation: int
    step: int  # the step of the invocation (model and tool calls, 0-based, recorded order)
    kind: str  # "model call" or "tool call"
    what: str
    agent: str | None = None  # the agent whose call diverged, when known

    def __str__(self) -> str:
        by = f" by agent {self.agent!r}" if self.agent is not None else ""
        return (f"replay diverged in case {self.eval_id!r} (run {self.run_index}), invocation "
                f"{self.invocation}, step {self.step} ({self.kind}{by}): {self.what}")


class ReplayDiverged(ModelError):
    """A replayed case run departed from its recording (see `Divergence`)."""

    def __init__(self, divergence: Divergence) -> None:
        super().__init__(str(divergence))
        self.divergence = divergence


@dataclass(frozen=True)
class RecordedReply:
    """A recorded model reply: text, tool calls, token counts, the model's name for itself."""

    text: str
    tool_calls: tuple[ToolCallRequest, ...]
    usage: Usage
    model: str

    def response(self) -> ModelResponse:
        finish = "tool_calls" if self.tool_calls else "stop"
        return ModelResponse((Generation(self.text, self.tool_calls, finish),), self.usage, self.model)


@dataclass
class _Step:
    """One recorded model or tool call of an invocation."""

    index: int
    span: Span
    system: AttributeText | None = None  # a model call's system instruction, recorded on its agent step
    served: bool = False
    agent: str | None = None  # the agent that made the call (its nearest agent span), when traced

    @property
    def is_model(self) -> bool:
        return self.span.kind == "llm"


@dataclass(frozen=True)
class AttributeText:
    """A recorded attribute's text, and whether the recording cut it (head and tail kept)."""

    text: str
    cut: bool

    @staticmethod
    def of(span: Span, key: str) -> AttributeText | None:
        value = span.attributes.get(key)
        if value is None:
            return None
        text = value if isinstance(value, str) else _json(value)
        return AttributeText(text, key in span.truncated)

    def differs_from(self, now: str) -> str | None:
        """None when `now` is what was recorded (normalised); else where they part."""
        if not self.cut:  # equal texts need no masking (the common case: regexes cost)
            return None if self.text == now else _first_difference(normalise(self.text), normalise(now))
        parts = _CUT.split(self.text)
        if len(parts) != 3:
            return _first_difference(normalise(self.text), normalise(now))
        head, tail = normalise(parts[0]), normalise(parts[2])
        n = normalise(now)
        if not n.startswith(head):
            return _first_difference(head, n[:len(head)])
        if not n.endswith(tail):
            return f"the end differs: recorded …{tail[-80:]!r}, now …{n[-80:]!r}"
        return None


def _first_difference(recorded: str, now: str) -> str | None:
    if recorded == now:
        return None
    i = next((k for k, (a, b) in enumerate(zip(recorded, now, strict=False)) if a != b),
             min(len(recorded), len(now)))
    start = max(0, i - 40)
    return (f"at character {i}: recorded {recorded[start:i + 60]!r}, now {now[start:i + 60]!r}")


class Cassette:
    """The recorded steps of one case run, served in order as the replay asks for them."""

    def __init__(self, eval_id: str, run_index: int, then: ReplayThen,
                 turns: Mapping[int, list[_Step]] | None, missing: str | None = None,
                 simulated: Mapping[int, str | None] | None = None) -> None:
        self.eval_id = eval_id
        self.run_index = run_index
        self.then: ReplayThen = then
        self._turns = dict(turns or {})
        self._missing = missing  # why there is nothing to replay (None: there is)
        self._simulated = dict(simulated or {})  # the user simulator's turns, by invocation
        self.invocation = 0
        self._next = 0  # the invocation's next step, in recorded order
        self.divergence: Divergence | None = None
        self.served_model = self.served_tools = 0
        self.run_tools = 0  # recorded calls matched by tools that run in a replay (`tool_step`)

    @property
    def live(self) -> bool:
        """Whether calls now go to the real model and tools (after a divergence, `then="live"`)."""
        return self.divergence is not None

    def begin(self, invocation: int) -> None:
        """Starts invocation `invocation` (its user turn is being sent)."""
        if invocation > 0 and not self.live:
            self._check_finished()
        self.invocation, self._next = invocation, 0

    def end(self) -> None:
        """The case run ended: a recorded step it never asked for is a divergence."""
        if not self.live:
            self._check_finished()

    def _check_finished(self) -> None:
        left = [s for s in self._turns.get(self.invocation, []) if not s.served]
        if left:
            s = left[0]
            self._diverge(s.index, "model call" if s.is_model else "tool call",
                          f"the agent ended the invocation; the recording has {len(left)} more "
                          f"step(s), next {s.span.name!r}", raise_it=False)

    def _steps(self) -> list[_Step]:
        return self._turns.get(self.invocation, [])

    def _diverge(self, step: int, kind: str, what: str, raise_it: bool = True,
                 invocation: int | None = None, agent: str | None = None) -> None:
        if self.divergence is None:
            where = self.invocation if invocation is None else invocation
            self.divergence = Divergence(self.eval_id, self.run_index, where, step, kind, what, agent)
        if raise_it and self.then == "stop":
            raise ReplayDiverged(self.divergence)

    def _no_recording(self, kind: str, agent: str | None) -> bool:
        """True (the call goes live) when the cassette is already live or has nothing here."""
        if self.live:
            return True
        if self._missing is not None:
            self._diverge(0, kind, self._missing, agent=agent)
            return True
        if self.invocation not in self._turns:
            self._diverge(0, kind, f"the recording has no invocation {self.invocation}", agent=agent)
            return True
        return False

    def user_turn(self, invocation: int) -> tuple[bool, str | None]:
        """(True, the user simulator's recorded message for `invocation`, None where it ended
        the conversation), or (False, None) when the simulator is to be asked live."""
        if self.live:
            return False, None
        if self._missing is not None or invocation not in self._simulated:
            self._diverge(0, "user simulator turn", self._missing or f"the recording has no simulated "
                          f"user turn {invocation}", invocation=invocation)
            return False, None
        return True, self._simulated[invocation]

    def model_step(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[str],
                   system: str | None = None, agent: str | None = None) -> RecordedReply | None:
        """The recorded reply to this request (messages as the trace records them, tool names;
        `system`: the system instruction when it is not among the messages), or None when the
        call is to go live; raises `ReplayDiverged` on a divergence under `then="stop"`.
        `agent`: the agent asking, when known: its own recorded calls are tried first, and a
        divergence names it and tells the difference from its own next recorded call."""
        if self._no_recording("model call", agent):
            return None
        steps = self._steps()
        candidates = _own_first([s for s in steps if s.is_model and not s.served], agent)
        if not candidates:
            self._diverge(len(steps), "model call", "a model call the recording does not have here",
                          agent=agent)
            return None
        # The first unserved recorded call with this request: in recorded order for one agent,
        # and agents running side by side (parallel branches) may ask in another order.
        differs: str | None = None
        for step in candidates:
            what = _request_difference(step, messages, tools, system)
            if what is None:
                reply, what = _recorded_reply(step.span)
                if reply is not None:
                    step.served = True
                    self._next = max(self._next, step.index + 1)
                    self.served_model += 1
                    return reply
            differs = differs or what
        self._diverge(candidates[0].index, "model call", differs or "", agent=agent)
        return None

    def tool_step(self, name: str, args: Mapping[str, Any], defaults: Mapping[str, Any] | None = None,
                  runs: bool = False, agent: str | None = None) -> tuple[dict[str, Any], str | None] | None:
        """The recorded result of this tool call (and the error the tool raised, if it did), or
        None when the call is to go live; raises `ReplayDiverged` under `then="stop"`. An
        argument in `defaults` (the tool's default values) may be absent on either side.
        `runs`: a tool that runs even in a replay (one acting on the agent app itself, such as
        a handoff): its recorded call is matched and taken, and None returned, whatever its
        recorded result. `agent`: the agent making the call, when known: its own recorded calls
        are matched first (agents side by side may call one tool in another order)."""
        if self._no_recording("tool call", agent):
            return None
        now = _json(dict(args))
        order = _own_first([s for s in self._steps() if not s.is_model and not s.served], agent)
        for s in order:  # the agent's own recorded calls first, each in recorded order
            if s.span.attributes.get("gen_ai.tool.name") != name:
                continue
            if not _args_match(AttributeText.of(s.span, "gen_ai.tool.call.arguments"), args, defaults or {}):
                continue
            if runs:
                s.served = True
                self._next = max(self._next, s.index + 1)
                self.run_tools += 1
                return None
            result = AttributeText.of(s.span, "gen_ai.tool.call.result")
            if result is None or result.cut:
                self._diverge(s.index, "tool call", f"the recording of {name}'s result is "
                              f"{'cut' if result else 'missing'}: it cannot be replayed", agent=agent)
                return None
            s.served = True
            self._next = max(self._next, s.index + 1)
            self.served_tools += 1
            return _tool_result(s.span.attributes["gen_ai.tool.call.result"]), s.span.error
        # Quoted: the agent's own recorded calls left when it has any (another agent's calls
        # would read as what this one was expected to do), else every call left.
        own = [s for s in order if agent is not None and s.agent == agent] or order
        index = own[0].index if own else len(self._steps())
        recorded_calls = ", ".join(f"{c.span.attributes.get('gen_ai.tool.name')}"
                                   f"({c.span.attributes.get('gen_ai.tool.call.arguments', '')})"
                                   for c in own[:3]) or "none"
        whose = f"{agent}'s" if own is not order else "the"
        self._diverge(index, "tool call", f"{name}({now}) is not among {whose} recorded calls left "
                      f"({recorded_calls})", agent=agent)
        return None


def _own_first(steps: list[_Step], agent: str | None) -> list[_Step]:
    """`steps` with `agent`'s own first, each group in recorded order."""
    return steps if agent is None else sorted(steps, key=lambda s: s.agent != agent)


def _tool_result(recorded: Any) -> dict[str, Any]:
    """A recorded tool result as the function response to serve: a dict is recorded as JSON text;
    any other value (an ADK tool's plain return value) as it was, which ADK sends as
    `{"result": value}`."""
    if isinstance(recorded, str) and recorded.startswith("{"):
        try:
            value = json.loads(recorded)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    return {"result": recorded}


def _args_match(recorded: AttributeText | None, now: Mapping[str, Any], defaults: Mapping[str, Any]) -> bool:
    if recorded is None:
        return True
    try:
        before = None if recorded.cut else json.loads(recorded.text)
    except ValueError:
        before = None
    if not isinstance(before, dict):
        return recorded.differs_from(_json(dict(now))) is None
    missing = object()
    for key in before.keys() | now.keys():
        a, b = before.get(key, defaults.get(key, missing)), now.get(key, defaults.get(key, missing))
        if a is missing or b is missing or (a != b and normalise(_json(a)) != normalise(_json(b))):
            return False
    return True


def _request_difference(step: _Step, messages: Sequence[Mapping[str, Any]], tools: Sequence[str],
                        system: str | None) -> str | None:
    span = step.span
    value = span.attributes.get("gen_ai.request.tools")
    recorded_tools = sorted(value) if isinstance(value, list) else []
    if recorded_tools != sorted(tools):  # first: the system text may list the tools too
        return f"the tools offered differ: recorded {recorded_tools}, now {sorted(tools)}"
    if system is not None and step.system is not None and (d := step.system.differs_from(system)):
        return f"the system instruction differs {d}"
    recorded = AttributeText.of(span, "gen_ai.input.messages")
    if recorded is None:
        return None
    now = _json([dict(m) for m in messages])
    if not recorded.cut:
        try:
            before = json.loads(recorded.text)
        except ValueError:
            before = None
        if isinstance(before, list):
            after = json.loads(now)
            for i, (a, b) in enumerate(zip(before, after, strict=False)):
                if a == b:
                    continue
                if (d := _first_difference(normalise(_json(a)), normalise(_json(b)))) is not None:
                    role = b.get("role") if isinstance(b, dict) else "?"
                    return f"message {i} ({role}) differs {d}"
            if len(before) != len(after):
                return f"{len(after)} messages sent, the recording has {len(before)}"
            return None
    d = recorded.differs_from(now)
    return None if d is None else f"the messages differ {d}"


def _recorded_reply(span: Span) -> tuple[RecordedReply | None, str | None]:
    out = AttributeText.of(span, "gen_ai.output.messages")
    if out is None or out.cut:
        return None, f"the recording of this reply is {'cut' if out else 'missing'}: it cannot be replayed"
    try:
        message = json.loads(out.text)[0]
        calls = tuple(ToolCallRequest(str(c["name"]), dict(c.get("arguments") or {}))
                      for c in message.get("tool_calls") or [])
        text = str(message.get("content") or "")
    except (ValueError, LookupError, TypeError, AttributeError):
        return None, "the recorded reply is not readable"

    def tokens(key: str) -> int:
        value = span.attributes.get(key)
        return int(value) if isinstance(value, (int, float)) else 0

    usage = Usage(tokens("gen_ai.usage.input_tokens"), tokens("gen_ai.usage.output_tokens"),
                  tokens("gen_ai.usage.cache_read.input_tokens"))
    model = span.attributes.get("gen_ai.response.model")
    return RecordedReply(text, calls, usage, model if isinstance(model, str) else ""), None


def _cassette_steps(trace: Trace) -> dict[int, list[_Step]]:
    """The model and tool calls under each invocation span of a case run's trace, in start order."""
    index = trace.children_index()
    by_id = {s.span_id: s for s in trace.spans}
    turns: dict[int, list[_Step]] = {}
    for inv in trace.spans:
        if inv.kind != "invocation":
            continue
        n = inv.attributes.get("agenteval.invocation_index")
        if not isinstance(n, int):
            continue
        below = sorted((s for s in trace.below(inv.span_id, index) if s.kind in ("llm", "tool")),
                       key=lambda s: s.start)
        steps = []
        for k, s in enumerate(below):
            parent = by_id.get(s.parent_id or "")
            system = (AttributeText.of(parent, "gen_ai.system_instructions")
                      if s.kind == "llm" and parent is not None and parent.kind == "agent" else None)
            steps.append(_Step(k, s, system, agent=_agent_of(s, by_id)))
        turns[n] = steps
    return turns


def _agent_of(span: Span, by_id: Mapping[str, Span]) -> str | None:
    """The name of the agent span nearest above `span` (None: none)."""
    parent = by_id.get(span.parent_id or "")
    while parent is not None and parent.kind != "agent":
        parent = by_id.get(parent.parent_id or "")
    name = parent.attributes.get("gen_ai.agent.name") if parent is not None else None
    return name if isinstance(name, str) else None


def _simulated_turns(trace: Trace) -> dict[int, str | None]:
    """The user simulator's messages of a case run's trace, by invocation (None: it ended the
    conversation there); a message the trace cut is left out (it cannot be served)."""
    out: dict[int, str | None] = {}
    for s in trace.spans:
        n = s.attributes.get("agenteval.invocation_index")
        if s.kind != "user_simulator" or not isinstance(n, int) or "output.value" in s.truncated:
            continue
        message = s.attributes.get("output.value")
        out[n] = None if s.attributes.get("agenteval.finished") is True else str(message or "")
    return out


class Recording:
    """The model and tool calls of a recorded run, per case run, to replay (see the module)."""

    def __init__(self, documents: Sequence[EvalSetResult], source: str, then: ReplayThen = "stop") -> None:
        """`documents`: the recorded run's result documents (with traces); `source` names the run
        in messages (its id or path)."""
        self.source = source
        self.then: ReplayThen = then
        self.run_id = next((d.run.run_id for d in documents if d.run is not None), None)
        self._traces: dict[tuple[str, str, int], Trace | None] = {}
        for document in documents:
            for r in document.eval_case_results:
                self._traces[(r.eval_set_id or document.eval_set_id, r.eval_id, r.run_index)] = r.trace
        self.cassettes: list[Cassette] = []

    @property
    def traced(self) -> int:
        """Recorded case runs that have a trace."""
        return sum(t is not None for t in self._traces.values())

    def cassette(self, eval_set_id: str, eval_id: str, run_index: int) -> Cassette:
        """A fresh cassette for one case run (one with nothing to replay when the run lacks it)."""
        key = (eval_set_id, eval_id, run_index)
        if key not in self._traces:
            missing: str | None = (f"the recorded run {self.source} has no run {run_index} of case "
                                   f"{eval_id!r} in eval set {eval_set_id!r}")
        elif self._traces[key] is None:
            missing = f"the recorded run {self.source} kept no trace of case {eval_id!r} (run {run_index})"
        else:
            missing = None
        trace = self._traces.get(key)
        cassette = Cassette(eval_id, run_index, self.then, _cassette_steps(trace) if trace else None, missing,
                            _simulated_turns(trace) if trace else None)
        self.cassettes.append(cassette)
        return cassette

    def divergences(self) -> list[Divergence]:
        """The divergences of the case runs replayed so far, in the order they started."""
        return [c.divergence for c in self.cassettes if c.divergence is not None]


_RECORDING: ContextVar[Recording | None] = ContextVar("agenteval_replay_recording", default=None)
_CASSETTE: ContextVar[Cassette | None] = ContextVar("agenteval_replay_cassette", default=None)


@contextmanager
def replaying(recording: Recording | None) -> Iterator[Recording | None]:
    """Case runs started inside the block (and tasks started in it) replay `recording`."""
    token = _RECORDING.set(recording)
    try:
        yield recording
    finally:
        _RECORDING.reset(token)


def current_recording() -> Recording | None:
    """The recording being replayed here (None: not a replay)."""
    return _RECORDING.get()


@contextmanager
def replay_case(eval_set_id: str, eval_id: str, run_index: int) -> Iterator[Cassette | None]:
    """Inside a replay (`replaying`), the block is the case run's: its calls take the case run's
    cassette; yields it (None outside a replay)."""
    recording = _RECORDING.get()
    if recording is None:
        yield None
        return
    token = _CASSETTE.set(recording.cassette(eval_set_id, eval_id, run_index))
    try:
        yield _CASSETTE.get()
    finally:
        _CASSETTE.reset(token)


def current_cassette() -> Cassette | None:
    """The cassette of the case run being replayed here (None: not replaying)."""
    return _CASSETTE.get()


def recorded_user_turn(invocation: int) -> tuple[bool, str | None]:
    """In a replayed case run, the user simulator's recorded message for `invocation` (see
    `Cassette.user_turn`); (False, None) outside a replay or once it went live."""
    cassette = _CASSETTE.get()
    if cassette is None or cassette.live:
        return False, None
    return cassette.user_turn(invocation)


def replay_turn(invocation: int) -> None:
    """Tells the case run's cassette (if any) that invocation `invocation` starts."""
    cassette = _CASSETTE.get()
    if cassette is not None:
        cassette.begin(invocation)


class ReplayModel:
    """An `LLM` that serves the recorded replies of the case run being replayed, and calls
    `inner` when there is no replay here or the replay went live. Requests are compared as the
    built-in agent's trace records them (messages but the system one; the system instruction
    as its agent step records it; tool names). `agent`: the name of the agent it serves, which
    a divergence names."""

    def __init__(self, inner: LLM, agent: str | None = None) -> None:
        self.inner = inner
        self.agent = agent

    @property
    def name(self) -> str:
        return self.inner.name

    async def generate(self, request: ModelRequest) -> ModelResponse:
        cassette = _CASSETTE.get()
        if cassette is not None and not cassette.live:
            system = "\n".join(m.content for m in request.messages if m.role == "system")
            reply = cassette.model_step(
                [{"role": m.role, "content": m.content} for m in request.messages if m.role != "system"],
                [t.name for t in request.tools], system, self.agent)
            if reply is not None:
                return reply.response()
        return await self.inner.generate(request)
