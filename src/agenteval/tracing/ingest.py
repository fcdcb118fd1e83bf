"""Traces in: what an agent of any framework did, read from the OpenTelemetry spans it exported.

The rule, for every file (OTLP/JSON, `agenteval.tracing.otlp_json`):

1. **Turns.** Each trace is one user turn (ADK, the OpenAI Agents SDK, LangGraph and pydantic-ai
   export one trace per run), except agenteval's own traces, whose `invocation` spans are the
   turns, and a trace holding several runs (the OpenAI Agents SDK's several `Runner.run` in one
   `trace(...)`, each under its own task span; an agent run again inside an app's own span): a
   new turn where the outermost agent runs change parent or the same agent runs again.
2. **Conversations.** Turns with the same session id (`session.id` (OpenInference),
   `gen_ai.conversation.id` (GenAI conventions), `gcp.vertex.agent.session_id` (ADK's legacy
   spans), `agenteval.eval_id`) form one conversation, in start order; so do the turns of one
   trace. A turn without either is a conversation of its own. A conversation whose spans carry
   no messages is refused (content capture off) before any matching.
3. **Matching to eval cases.** A conversation whose session id is an `eval_id` of the expected
   set is that case; otherwise the case whose first user message is the conversation's first
   user message (when exactly one is). Anything left unmatched on either side is an error
   naming it.
4. **Content of a turn.** Model calls are the LLM spans (`openinference.span.kind` LLM, or
   `gen_ai.operation.name` chat / generate_content / text_completion, or ADK's `call_llm`),
   without the ones nested in another model call. The user message is the last user message of
   the first model call's input; the tool calls are those the model calls asked for, in order;
   their results come from the tool spans (`gen_ai.tool.call.result`, ADK's
   `gcp.vertex.agent.tool_response`, OpenInference TOOL `output.value`), paired by order and
   name; the final response is the text of the last model call's output. Token counts come
   from `gen_ai.usage.*` or `llm.token_count.*`. ADK's `execute_tool (merged)` span around
   parallel calls is no call. Without a model call, agenteval's own invocation span gives the
   user message and answer (`input.value`, `output.value`: a plain-callable agent). The turn's
   duration is its spans' extent; its model and tool seconds are covered by its model and tool
   spans, as `agenteval.tracing.figures` counts them (`invocation_duration_v1`). Tool spans
   keep their arguments and result under the GenAI names in the kept trace, whoever wrote them.

5. **Agents.** Each call's author is the agent whose model asked for it (the nearest agent run
   above the model call; see `agenteval.tracing.agents` for which spans are agent runs, per
   framework); a handoff (the OpenAI Agents SDK's handoff spans, or a call `transfer_to_NAME`
   to an agent NAME that runs in the turn) is the call `transfer_to_agent(agent_name=NAME)` by
   the agent handing off, ADK's form. A conversation in which more than one agent acted in some
   turn, or whose expected case names authors, is recorded as ADK's events
   (`invocation_events`, each with its `author`); any other keeps the flat form (`tool_uses`,
   `tool_responses`), as before. In the kept trace, agent runs are `agent` spans
   named `invoke_agent NAME` with `gen_ai.agent.name`, where the source nests them.

Spans that carry no messages at all (an exporter left content capture off) are an error that
says so, never empty answers. The spans themselves are kept, as the case's trace.

**The tree.** Within a trace, a span whose parent id names no span of that trace is a root
(partial exports are common: it is kept, under the turn's invocation span in the kept trace).
A span id used twice in one trace by two different spans, or a span that is its own ancestor
(parent ids forming a cycle), is a DataError naming the file and the span; a span written twice
as it was (an exporter's retry) is read once. Reading is O(spans) and never recursive:
100,000 spans under one parent, or a chain 100,000 parents deep, read in seconds.
"""

from __future__ import annotations

import json
import re
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenteval.errors import DataError
from agenteval.schema import (
    Content,
    EvalCase,
    EvalSet,
    FunctionCall,
    FunctionResponse,
    IntermediateData,
    Invocation,
)
from agenteval.schema.content import Part
from agenteval.schema.invocation import InvocationEvent, InvocationEvents
from agenteval.schema.trace import Span, Trace
from agenteval.tracing.agents import HANDOFF_TOOL, AgentTree, Handoff, agent_tree
from agenteval.tracing.figures import union_seconds
from agenteval.tracing.otlp_json import OtlpSpan, read_otlp_json, same_span
from agenteval.tracing.recorder import as_attribute, new_span_id
from agenteval.tracing.span_content import is_model, is_tool, model_io, tool_args, tool_name, tool_result

SESSION_KEYS = ("session.id", "gen_ai.conversation.id", "gcp.vertex.agent.session_id", "agenteval.eval_id")
_KIND = {"LLM": "llm", "TOOL": "tool", "AGENT": "agent", "CHAIN": "other", "EVALUATOR": "judge"}


@dataclass
class Call:
    """A tool call of a turn: by `author` (the agent whose model asked for it), at `at`."""

    id: str | None
    name: str
    args: dict[str, Any]
    author: str | None = None
    at: float = 0.0


@dataclass
class Result:
    """A tool's result, returned at `at`."""

    name: str
    value: Any
    at: float = 0.0


@dataclass
class Turn:
    """One user turn read from spans."""

    spans: list[OtlpSpan]
    session: str | None
    start: float
    user_text: str = ""
    final_text: str = ""
    calls: list[Call] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    texts: list[tuple[str | None, str, float]] = field(default_factory=list)  # (author, text, at), not final
    has_content: bool = False
    model_ids: set[str] = field(default_factory=set)  # the spans counted as model calls
    agents: AgentTree = field(default_factory=AgentTree)
    end: float = 0.0
    model_seconds: float | None = None  # time covered by its model calls, overlaps once
    tool_seconds: float | None = None  # time covered by its tool calls and no model call
    group: str | None = None  # the trace it shares with other turns (one conversation)
    own: bool = False  # from agenteval's own export (recorded as events, as the run recorded it)

    @property
    def multi_agent(self) -> bool:
        """Whether more than one agent acted (then its conversation is recorded as authored events)."""
        return len(self.agents.agents()) > 1


@dataclass
class _Tree:
    """One trace's spans as a tree: children by parent id (spans whose parent is not in the
    trace are roots), and the ids of the spans nested inside a model call."""

    kids: dict[str | None, list[OtlpSpan]]
    in_model: set[str]


_CYCLE_IDS_SHOWN = 6


def _tree(spans: list[OtlpSpan], source: str) -> _Tree:
    """Indexes one trace's spans in O(spans), without recursion (any depth). A span id used
    twice in the trace, or a span that is its own ancestor (a cycle of parent ids), is a
    DataError naming the file and the span; a parent id that names no span of the trace is
    tolerated: that span is a root (exports are often partial)."""
    ids: dict[str, OtlpSpan] = {}
    for s in spans:
        other = ids.setdefault(s.span_id, s)
        if other is not s:
            raise DataError(source, f"{s.where}.spanId", f"span id {s.span_id} is used twice in trace "
                            f"{s.trace_id} (also {other.where})")
    kids: dict[str | None, list[OtlpSpan]] = {}
    for s in spans:
        kids.setdefault(s.parent_id if s.parent_id in ids else None, []).append(s)
    # in_model[id]: whether some ancestor of the span is a model call; each span is settled
    # once, walking up from it to the first settled ancestor (or a root).
    in_model: dict[str, bool] = {}
    for s in spans:
        path: list[OtlpSpan] = []
        on_path: set[str] = set()
        cur: OtlpSpan | None = s
        while cur is not None and cur.span_id not in in_model:
            if cur.span_id in on_path:
                cycle = [p.span_id for p in path[next(i for i, p in enumerate(path) if p is cur):]]
                shown = " → ".join(cycle[:_CYCLE_IDS_SHOWN] + (["…"] if len(cycle) > _CYCLE_IDS_SHOWN else [])
                                   + [cur.span_id])
                raise DataError(source, f"{cur.where}.parentSpanId", f"span {cur.name!r} ({cur.span_id}) "
                                f"is its own ancestor: the parent ids {shown} form a cycle "
                                f"of {len(cycle)} span{'s' if len(cycle) > 1 else ''}")
            on_path.add(cur.span_id)
            path.append(cur)
            cur = ids.get(cur.parent_id) if cur.parent_id is not None else None
        inside = cur is not None and (in_model[cur.span_id] or is_model(cur))
        for p in reversed(path):
            in_model[p.span_id] = inside
            inside = inside or is_model(p)
    return _Tree(kids, {k for k, v in in_model.items() if v})


def _below(tree: _Tree, root: OtlpSpan) -> list[OtlpSpan]:
    """`root` and every span under it; iterative, O(spans under it)."""
    out, stack = [root], [root]
    while stack:
        for k in tree.kids.get(stack.pop().span_id, ()):
            out.append(k)
            stack.append(k)
    return out


def _handoff_name(agent: str) -> str:
    """The OpenAI Agents SDK's default name of the tool that hands off to `agent`."""
    return "transfer_to_" + re.sub(r"[^a-z0-9_]", "_", agent.lower())


def _record_handoffs(turn: Turn) -> None:
    """Each handoff as ADK records one: the call `transfer_to_agent(agent_name=TO)` by the agent
    handing off (the model's own handoff call, renamed, when it was recorded) and its result."""
    from_spans: set[int] = set()  # the calls made from handoff spans
    for h in turn.agents.handoffs:
        mine = [c for c in turn.calls if c.name != HANDOFF_TOOL and c.at <= h.start
                and (h.from_agent is None or c.author == h.from_agent)]
        call = (next((c for c in mine if c.name == _handoff_name(h.to_agent)), None)
                or next((c for c in reversed(mine) if c.name.startswith("transfer_to")), None))
        if call is None:
            turn.calls.append(Call(None, HANDOFF_TOOL, {}, h.from_agent, h.start))
            call = turn.calls[-1]
        call.name, call.args = HANDOFF_TOOL, {"agent_name": h.to_agent}
        call.author = call.author or h.from_agent
        from_spans.add(id(call))
        turn.results.append(Result(HANDOFF_TOOL, None, h.start))
    # no handoff span (LangGraph): a call `transfer_to_NAME` (the OpenAI Agents SDK's and
    # langgraph-supervisor's handoff tools) to an agent NAME that runs in the turn is a handoff
    runs = {_handoff_name(name): name for name in turn.agents.names.values()}
    for c in turn.calls:
        if c.name == HANDOFF_TOOL and id(c) not in from_spans and isinstance(c.args.get("agent_name"), str):
            turn.agents.handoffs.append(Handoff(None, c.author, c.args["agent_name"], c.at))  # ADK's own
        to = runs.get(c.name)
        if to is None or to == c.author:
            continue
        turn.agents.handoffs.append(Handoff(None, c.author, to, c.at))
        result = next((r for r in turn.results if r.name == c.name), None)
        if result is None:
            turn.results.append(Result(HANDOFF_TOOL, None, c.at))
        else:
            result.name = HANDOFF_TOOL
        c.name, c.args = HANDOFF_TOOL, {"agent_name": to}
    turn.calls.sort(key=lambda c: c.at)  # stable: a model's calls keep their order


def _turn(spans: list[OtlpSpan], tree: _Tree, roots: Sequence[OtlpSpan]) -> Turn:
    spans = sorted(spans, key=lambda s: s.start)
    turn = Turn(spans, _session(spans), spans[0].start, agents=agent_tree(roots, tree.kids, is_tool))
    author = turn.agents.author
    # a model span inside another model call (ADK's call_llm) is not a call of its own
    models = [s for s in spans if is_model(s) and s.span_id not in tree.in_model]
    turn.model_ids = {s.span_id for s in models}
    io = [(s, x) for s in models if (x := model_io(s)) is not None]
    turn.has_content = bool(io)
    own = next((r for r in roots if "agenteval.invocation_index" in r.attributes), None)
    turn.own = own is not None
    if not io and own is not None and own.attributes.get("input.value") is not None:
        # agenteval's own export of an agent that calls no model through it (a plain callable):
        # the invocation span carries the user's message and the answer
        turn.has_content = True
        turn.user_text = str(own.attributes["input.value"])
        turn.final_text = str(own.attributes.get("output.value") or "")
    if io:
        users = [m for m in io[0][1][0] if m.role == "user" and m.text]
        turn.user_text = users[-1].text if users else ""
        turn.final_text = "".join(m.text for m in io[-1][1][1] if m.role == "assistant")
        turn.calls = [Call(i, n, a, author(s.span_id), s.start)
                      for s, (_, out) in io for m in out for i, n, a in m.tool_calls]
        turn.texts = [(author(s.span_id), text, s.end or s.start) for s, (_, out) in io[:-1]
                      if (text := "".join(m.text for m in out if m.role == "assistant"))]
    handoffs = {h.span_id for h in turn.agents.handoffs}
    tools = [s for s in spans if is_tool(s) and s.span_id not in handoffs]
    if not turn.calls:  # the model's requests were not recorded: the tool spans say what ran
        turn.calls = [Call(None, tool_name(s), tool_args(s) or {}, author(s.span_id), s.start)
                      for s in tools]
    turn.results = [Result(tool_name(s), tool_result(s), s.end or s.start) for s in tools]
    _record_handoffs(turn)
    turn.end = max(s.end or s.start for s in spans)
    model_times = [(s.start, s.end) for s in models if s.end is not None]
    tool_times = [(s.start, s.end) for s in tools if s.end is not None]
    turn.model_seconds = union_seconds(model_times) if model_times else None
    if tool_times:  # a tool waiting on a model (an agent as a tool) is model time, as ADK counts
        turn.tool_seconds = union_seconds(model_times + tool_times) - (turn.model_seconds or 0.0)
    return turn


def turns(spans: Sequence[OtlpSpan], source: str = "") -> list[Turn]:
    """The turns of a file's spans, in start order (see the module docstring); O(spans).
    `source` (the file) names the file in the DataError for a malformed tree (see `_tree`)."""
    by_trace: dict[str, list[OtlpSpan]] = {}
    first: dict[tuple[str, str], OtlpSpan] = {}
    for s in spans:
        held = first.setdefault((s.trace_id, s.span_id), s)
        if held is not s and same_span(held, s):
            continue  # sent again (an exporter's retry written twice): read once, as `collect` does
        by_trace.setdefault(s.trace_id, []).append(s)
    try:
        return _turns(by_trace, source)
    except DataError as e:  # a span's content read without the file (span_content): name it
        if e.file is not None or not source:
            raise
        raise DataError(source, e.path, e.message) from None


def _turns(by_trace: dict[str, list[OtlpSpan]], source: str) -> list[Turn]:
    out = []
    for trace_spans in by_trace.values():
        tree = _tree(trace_spans, source)
        invocations = [s for s in trace_spans if "agenteval.invocation_index" in s.attributes
                       and s.name.startswith("invocation")]
        if invocations:  # agenteval's own export: one trace per case run, turns inside it
            case = next((s for s in trace_spans if "agenteval.eval_id" in s.attributes), None)
            for inv in invocations:
                t = _turn(_below(tree, inv), tree, [inv])
                t.session = str(case.attributes["agenteval.eval_id"]) if case else t.session
                out.append(t)
        else:
            parts = _runs_per_turn(trace_spans, tree)
            if len(parts) < 2:
                out.append(_turn(trace_spans, tree, tree.kids.get(None, [])))
                continue
            session = _session(trace_spans)
            for runs in parts:  # one trace, several turns: one conversation
                t = _turn([s for r in runs for s in _below(tree, r)], tree, runs)
                t.session, t.group = t.session or session, f"trace {trace_spans[0].trace_id}"
                out.append(t)
    return sorted(out, key=lambda t: t.start)


def _runs_per_turn(spans: list[OtlpSpan], tree: _Tree) -> list[list[OtlpSpan]]:
    """The turns of a trace that holds several, in start order; [] for one. Its outermost agent
    runs begin a new turn where their parent span changes (the OpenAI Agents SDK's task span of
    each `Runner.run` inside one `trace(...)`), or where the same agent runs again after its run
    ended (several runs inside an app's own span, e.g. pydantic-ai's `agent.run` per message).
    Another agent taking over (a handoff, ADK's transfer) stays in the turn. A turn's roots are
    its parent span when no other turn shares it, else its runs."""
    agents = agent_tree(tree.kids.get(None, []), tree.kids, is_tool)
    by_id = {s.span_id: s for s in spans}
    top = sorted((by_id[r] for r in agents.names if by_id[r].parent_id not in agents.agent_of),
                 key=lambda s: s.start)
    groups: list[list[OtlpSpan]] = []
    for run in top:
        last = groups[-1][-1] if groups else None
        again = last is not None and agents.names[last.span_id] == agents.names[run.span_id]
        if last is None or last.parent_id != run.parent_id or (again and run.start >= (last.end or 0)):
            groups.append([run])
        else:
            groups[-1].append(run)
    if len(groups) < 2:
        return []
    parents = Counter(g[0].parent_id for g in groups)
    return [[by_id[g[0].parent_id]] if g[0].parent_id in by_id and parents[g[0].parent_id] == 1 else g
            for g in groups]


def _session(spans: Sequence[OtlpSpan]) -> str | None:
    return next((str(s.attributes[k]) for s in spans for k in SESSION_KEYS if s.attributes.get(k)), None)


def _events(t: Turn, responses: list[tuple[Call, FunctionResponse, float]]) -> InvocationEvents:
    """A multi-agent turn as ADK's events, each by its agent, in time order: the calls of one
    model response in one event, each response in one, the texts before the final response."""
    timed: list[tuple[float, int, InvocationEvent]] = []
    for c in t.calls:
        part = Part(function_call=FunctionCall(id=c.id, name=c.name, args=c.args))
        last = timed[-1] if timed else None
        if (last is not None and last[1] == 0 and last[0] == c.at and last[2].author == (c.author or "")
                and last[2].content is not None and last[2].content.parts is not None):
            last[2].content.parts.append(part)
            continue
        timed.append((c.at, 0, InvocationEvent(author=c.author or "",
                                               content=Content(role="model", parts=[part]))))
    for c, response, at in responses:
        part = Part(function_response=response)
        event = InvocationEvent(author=c.author or "", content=Content(role="user", parts=[part]))
        timed.append((at, 1, event))
    for author, text, at in t.texts:
        timed.append((at, 2, InvocationEvent(author=author or "", content=Content.from_text(text))))
    return InvocationEvents(invocation_events=[e for _, _, e in sorted(timed, key=lambda x: (x[0], x[1]))])


def _authored(expected: EvalCase) -> bool:
    """Whether an expected case records who did what (events with an author)."""
    return any(isinstance(inv.intermediate_data, InvocationEvents)
               and any(e.author for e in inv.intermediate_data.invocation_events)
               for inv in expected.conversation or ())


def _invocation(t: Turn, authored: bool) -> Invocation:
    results: dict[str, deque[Result]] = {}
    for r in t.results:
        results.setdefault(r.name, deque()).append(r)
    responses: list[tuple[Call, FunctionResponse, float]] = []
    for c in t.calls:  # pair results with calls by name, in order
        if results.get(c.name):
            result = results[c.name].popleft()
            value = result.value if isinstance(result.value, dict) else {"result": result.value}
            responses.append((c, FunctionResponse(id=c.id, name=c.name, response=value), result.at))
    data: IntermediateData | InvocationEvents = (
        _events(t, responses) if authored else IntermediateData(
            tool_uses=[FunctionCall(id=c.id, name=c.name, args=c.args) for c in t.calls],
            tool_responses=[r for _, r, _ in responses]))
    return Invocation(user_content=Content.from_text(t.user_text, role="user"),
                      final_response=Content.from_text(t.final_text), intermediate_data=data,
                      duration=round(t.end - t.start, 3), model_duration=_rounded(t.model_seconds),
                      tool_duration=_rounded(t.tool_seconds))


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 3)


def _trace(t: Turn, index: int) -> list[Span]:
    """A turn's spans in agenteval's form, under an invocation span of its own."""
    root = Span(span_id=new_span_id(), name=f"invocation {index}", kind="invocation", start=t.start,
                end=max((s.end or s.start) for s in t.spans),
                attributes={"agenteval.invocation_index": index, "input.value": t.user_text,
                            "output.value": t.final_text})
    ids = {s.span_id for s in t.spans}
    handoffs = {h.span_id: h for h in t.agents.handoffs}
    out = [root]
    for s in t.spans:
        a = dict(s.attributes)
        if "llm.token_count.prompt" in a:  # OpenInference's counts under the GenAI names
            a.setdefault("gen_ai.usage.input_tokens", a["llm.token_count.prompt"])
            a.setdefault("gen_ai.usage.output_tokens", a.get("llm.token_count.completion"))
        name = s.name
        kind = ("llm" if s.span_id in t.model_ids else "tool" if is_tool(s)
                else _KIND.get(str(a.get("openinference.span.kind")), "other"))
        if kind == "agent" or (kind == "llm" and s.span_id not in t.model_ids):
            kind = "other"  # agents are the agent tree's runs; model calls, the ones counted
        if s.span_id in t.agents.names:
            kind, name = "agent", f"invoke_agent {t.agents.names[s.span_id]}"
            a["gen_ai.agent.name"] = t.agents.names[s.span_id]
            if s.span_id in t.agents.as_tool:
                a["agenteval.agent.as_tool"] = True
        if kind == "tool":  # the arguments and result under the GenAI names, whoever wrote them
            if "gen_ai.tool.call.arguments" not in a and (args := tool_args(s)) is not None:
                a["gen_ai.tool.call.arguments"] = json.dumps(args, ensure_ascii=False)
            if "gen_ai.tool.call.result" not in a and (value := tool_result(s)) is not None:
                a["gen_ai.tool.call.result"] = value if isinstance(value, str) else json.dumps(
                    value, ensure_ascii=False)
        handoff = handoffs.get(s.span_id)
        if handoff is not None:
            a.update({"gen_ai.tool.name": HANDOFF_TOOL, "agenteval.handoff.to": handoff.to_agent,
                      "agenteval.handoff.from": handoff.from_agent,
                      "gen_ai.tool.call.arguments": json.dumps({"agent_name": handoff.to_agent})})
        attrs: dict[str, Any] = {}
        truncated = []
        for k, v in a.items():
            if v is None:
                continue
            attrs[k], cut = as_attribute(v)
            if cut:
                truncated.append(k)
        out.append(Span(span_id=s.span_id, parent_id=s.parent_id if s.parent_id in ids else root.span_id,
                        name=name, kind=kind, start=s.start, end=s.end,
                        status="error" if s.status == "error" else "ok", error=s.error,
                        attributes=attrs, truncated=truncated))
    return out


def _conversation_trace(conv: list[Turn]) -> Trace:
    return Trace(trace_id=conv[0].spans[0].trace_id,
                 spans=[s for i, t in enumerate(conv) for s in _trace(t, i)])


@dataclass
class TraceConversations:
    """What a trace file says the agent did, by conversation, before matching to eval cases."""

    source: str
    conversations: dict[str, list[Turn]]

    def _check_content(self, key: str, conv: list[Turn]) -> None:
        if not all(t.has_content for t in conv):
            raise DataError(self.source, f"conversation {key!r}", "the spans carry no messages: "
                            "the exporter did not capture content (for Google ADK set "
                            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY: "
                            "EVENT_ONLY or NO_CONTENT keep messages off the spans)")

    def invocations(self, key: str) -> list[Invocation]:
        """The conversation `key` as invocations, unmatched: what the agent said and did in each
        turn (as ADK's events when several agents acted, or it is agenteval's own export)."""
        conv = self.conversations[key]
        self._check_content(key, conv)
        return [_invocation(t, any(u.multi_agent or u.own for u in conv)) for t in conv]

    def expectable(self, key: str) -> None:
        """Refuses (DataError naming the turn and its span) a conversation that cannot be an eval
        case's expected turns: a turn without a user message (nothing to send the agent) or
        without a final response (nothing to compare an answer with: the agent ended on a tool
        call, or its reply was not recorded)."""
        for n, t in enumerate(self.conversations[key], 1):
            models = [s for s in t.spans if s.span_id in t.model_ids] or t.spans
            for missing, span, why in (
                    (not t.user_text.strip(), models[0], "no user message: the first model call's "
                     "input holds no user text"),
                    (not t.final_text.strip(), models[-1], "no final response: the last model "
                     "call's output holds no text (the agent ended on a tool call, or its reply "
                     "was not recorded)")):
                if missing:
                    raise DataError(self.source, f"conversation {key!r} turn {n} ({span.where}, "
                                    f"span {span.name!r})", f"{why}; an eval case needs both")

    def _pairing(self, expected: EvalSet) -> tuple[dict[str, list[Turn]], dict[str, str]]:
        """The conversations matched, by eval id, and those that match no case, by key with why
        (see `match`)."""
        cases = {c.eval_id: c for c in expected.eval_cases}
        first: dict[str, list[str]] = {}
        for c in expected.eval_cases:
            if c.conversation:
                first.setdefault(c.conversation[0].user_content.text(), []).append(c.eval_id)
        for key, conv in self.conversations.items():
            self._check_content(key, conv)  # before matching: without content every first message is ''
        matched: dict[str, list[Turn]] = {}
        unmatched: dict[str, str] = {}
        for key, conv in self.conversations.items():
            eval_id = key if key in cases else None
            if eval_id is None:
                candidates = first.get(conv[0].user_text, [])
                eval_id = candidates[0] if len(candidates) == 1 else None
            if eval_id is None:
                unmatched[key] = ("matches no eval case: its session id is no eval_id and its first "
                                  f"user message {conv[0].user_text!r} is not the first message of "
                                  "exactly one case")
                continue
            if eval_id in matched:
                raise DataError(self.source, f"conversation {key!r}", f"matches case {eval_id!r}, "
                                "which another conversation already matched")
            matched[eval_id] = conv
        short = [i for i, conv in matched.items()
                 if (turns := cases[i].conversation) is not None and len(turns) != len(conv)]
        if unmatched and (short or not cases.keys() <= matched.keys()):
            # a case without its conversation, or without some of its turns (a conversation
            # without a session id is one trace): the conversation that matches nothing is likely
            # it, or them, named
            key, why = next(iter(unmatched.items()))
            raise DataError(self.source, f"conversation {key!r}", why)
        return matched, unmatched

    def unmatched(self, expected: EvalSet) -> dict[str, str]:
        """The conversations `match` leaves out, by key, each with why it matches no case."""
        return self._pairing(expected)[1]

    def trace(self, key: str) -> Trace:
        """The conversation `key`'s spans as one trace in agenteval's form (each turn under an
        `invocation N` span), as `match` keeps it; content or not."""
        return _conversation_trace(self.conversations[key])

    def match(self, expected: EvalSet) -> tuple[EvalSet, dict[str, Trace]]:
        """An eval set of the actual conversations under the expected cases' ids, and their traces.

        A conversation is its case's when its key (session id) is the eval id, or its first user
        message is the first of exactly one case. Two conversations of one case are an error; so
        is one that matches no case while a case has no conversation, or a conversation of
        another number of turns than its case's (it is likely that case's, and named). When
        every case has its conversation, those that match none are left out (`unmatched` names
        them): a trace export holds what else the app did, too."""
        cases = {c.eval_id: c for c in expected.eval_cases}
        matched, _ = self._pairing(expected)
        actual = EvalSet(eval_set_id=expected.eval_set_id, eval_cases=[
            EvalCase(eval_id=eval_id, conversation=[
                _invocation(t, any(u.multi_agent or u.own for u in conv) or _authored(cases[eval_id]))
                for t in conv])
            for eval_id, conv in matched.items()])
        traces = {eval_id: _conversation_trace(conv) for eval_id, conv in matched.items()}
        return actual, traces


def read_traces(path: str | Path, text: str | None = None) -> TraceConversations:
    """The conversations of an OTLP/JSON trace file."""
    spans = read_otlp_json(path, text)
    if not spans:
        raise DataError(path, "resourceSpans", "no spans in this file: the trace export is empty")
    conversations: dict[str, list[Turn]] = {}
    for n, turn in enumerate(turns(spans, str(path))):
        conversations.setdefault(turn.session or turn.group or f"trace {n}", []).append(turn)
    return TraceConversations(str(path), conversations)


__all__ = ["SESSION_KEYS", "TraceConversations", "Turn", "read_traces", "turns"]
