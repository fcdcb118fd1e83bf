"""The agent tree of a case run, summarised per agent: the one place the CLI's `agenteval trace`,
the HTML report and the web trace view get it from.

Each invocation's agent runs (`agent` spans) form a tree: a run sits under the nearest agent run
above it in the trace. An agent reached by a handoff whose run the trace puts beside the agent
handing off (ADK's own tracer runs both under its Runner's `invoke_workflow` span) is placed
under the agent that handed it control, so the tree reads root → specialist → tool whichever
tracer recorded it. Runs of one agent under the same parent (a `LoopAgent`'s iterations) are
one node, counting its runs.

A node says how control reached the agent (`via`): `handoff` (a `transfer_to_agent` call naming
it, by its parent), `tool` (an agent used as a tool: its run lies under a tool span, e.g. ADK's
`AgentTool`), `sequential` / `parallel` / `loop` (a stage or branch of that workflow agent), or
`sub_agent` (any other nesting); None for an invocation's first agent. Its figures are the
agent's own (`figures.step_figures` over the model and tool calls made in its runs, not in the
agents under it), its `duration` the time its runs covered, overlaps counted once. Its `tools`
are the tools it called, by name with counts, in first-call order. Its verdict comes from the
result's `agent_verdicts` for that invocation and agent (per-agent trajectory matching): passed
when every verdict about it passed, else the first failing one's reason; None when nothing
matched it on its own. An agent with a verdict that never ran in the invocation (calls were
expected from it) is a root node with no runs (`span_ids` empty).

Everything is O(spans), iterative (any depth); a span id met twice is not descended into again.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from agenteval.schema import AgentVerdict
from agenteval.schema.trace import Span, Trace
from agenteval.tracing.figures import Figures, step_figures, union_seconds

HANDOFF_TOOL = "transfer_to_agent"


@dataclass
class AgentNode:
    """One agent in an invocation's agent tree (see the module docstring)."""

    agent: str
    via: str | None
    workflow: str | None
    span_ids: list[str]
    figures: Figures
    tools: list[tuple[str, int]]
    passed: bool | None = None
    reason: str | None = None
    children: list[AgentNode] = field(default_factory=list)


@dataclass
class InvocationAgents:
    """The agent tree of one invocation (`index`: its 0-based turn)."""

    index: int
    span_id: str
    roots: list[AgentNode]


def _name(span: Span) -> str:
    name = span.attributes.get("gen_ai.agent.name")
    return name if isinstance(name, str) else span.name.removeprefix("invoke_agent ").strip()


def _tool_name(span: Span) -> str:
    name = span.attributes.get("gen_ai.tool.name")
    return name if isinstance(name, str) else span.name.removeprefix("execute_tool ").strip()


def _handed_to(span: Span) -> str | None:
    """The agent a `transfer_to_agent` tool span hands control to, else None."""
    if _tool_name(span) != HANDOFF_TOOL:
        return None
    raw = span.attributes.get("gen_ai.tool.call.arguments")
    try:
        args = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    target = args.get("agent_name") if isinstance(args, dict) else None
    return target if isinstance(target, str) else None


@dataclass
class _Building:
    """A node while its spans are gathered."""

    agent: str
    via: str | None
    workflow: str | None
    runs: list[Span] = field(default_factory=list)
    own: list[Span] = field(default_factory=list)
    handed_to: list[str] = field(default_factory=list)
    children: list[_Building] = field(default_factory=list)


def _child(parent: _Building | None, roots: list[_Building], agent: str, via: str | None,
           workflow: str | None) -> _Building:
    """The node of `agent` under `parent` (a new one, or the one its earlier runs made)."""
    siblings = parent.children if parent is not None else roots
    for node in siblings:
        if node.agent == agent:
            return node
    node = _Building(agent, via, workflow)
    siblings.append(node)
    return node


def _via(span: Span, parent: _Building | None, in_tool: bool, agent: str) -> str | None:
    if parent is None:
        return None
    if in_tool or span.attributes.get("agenteval.agent.as_tool") is True:
        return "tool"
    if agent in parent.handed_to:
        return "handoff"
    return parent.workflow or "sub_agent"


def _invocation_tree(inv: Span, kids: Mapping[str | None, list[Span]]) -> list[_Building]:
    roots: list[_Building] = []
    handoffs: dict[str, _Building] = {}  # agent handed control -> the node that handed it
    # (span, its enclosing agent node, whether a tool span lies between that node and the span)
    stack: list[tuple[Span, _Building | None, bool]] = [
        (k, None, False) for k in reversed(kids.get(inv.span_id, ()))]
    seen = {inv.span_id}
    while stack:
        span, node, in_tool = stack.pop()
        if span.kind == "agent":
            agent = _name(span)
            parent = node if node is not None else handoffs.get(agent)
            workflow = span.attributes.get("agenteval.agent.workflow")
            node = _child(parent, roots, agent, _via(span, parent, in_tool, agent),
                          workflow if isinstance(workflow, str) else None)
            node.runs.append(span)
            in_tool = False
        elif node is not None and span.kind in ("llm", "tool"):
            node.own.append(span)
            if span.kind == "tool":
                in_tool = True
                if (target := _handed_to(span)) is not None:
                    node.handed_to.append(target)
                    handoffs.setdefault(target, node)
        if span.span_id not in seen:
            seen.add(span.span_id)
            stack.extend((k, node, in_tool) for k in reversed(kids.get(span.span_id, ())))
    return roots


def _verdicts(verdicts: Iterable[AgentVerdict]) -> dict[tuple[int, str], tuple[bool, str | None]]:
    out: dict[tuple[int, str], tuple[bool, str | None]] = {}
    for v in verdicts:
        key = (v.invocation_index, v.agent)
        passed, reason = out.get(key, (True, None))
        if passed and not v.passed:
            passed, reason = False, f"{v.metric_name}: {v.reason}" if v.reason else v.metric_name
        out[key] = (passed, reason)
    return out


Verdicts = Mapping[tuple[int, str], tuple[bool, str | None]]  # (invocation, agent) -> passed, why not


def _covered(runs: list[Span]) -> list[tuple[float, float]]:
    # A run reported after the fact (`agenteval.untimed`, a callable's authored events) has no
    # time of its own.
    return [(s.start, s.end) for s in runs if s.end is not None and not s.attributes.get("agenteval.untimed")]


def _finish(node: _Building, index: int, verdicts: Verdicts) -> AgentNode:
    covered = _covered(node.runs)
    counts: dict[str, int] = {}
    for s in node.own:
        if s.kind == "tool":
            counts[_tool_name(s)] = counts.get(_tool_name(s), 0) + 1
    passed, reason = verdicts.get((index, node.agent), (None, None))
    return AgentNode(node.agent, node.via, node.workflow, [s.span_id for s in node.runs],
                     step_figures(union_seconds(covered) if covered else None, node.own, node.own),
                     list(counts.items()), passed, reason)


def agent_summary(trace: Trace | None, verdicts: Iterable[AgentVerdict] = ()) -> list[InvocationAgents]:
    """Every invocation's agent tree, with the agents' figures, tools and verdicts (see the
    module docstring); empty without a trace. Invocations whose turn ran no agent span have no
    roots."""
    if trace is None:
        return []
    kids = trace.children_index()
    by_agent = _verdicts(verdicts)
    out = []
    for position, inv in enumerate(trace.invocations()):
        raw = inv.attributes.get("agenteval.invocation_index")
        index = raw if isinstance(raw, int) else position
        built = _invocation_tree(inv, kids)
        roots: list[AgentNode] = []
        queue: deque[tuple[_Building, list[AgentNode]]] = deque((b, roots) for b in built)
        while queue:  # breadth first: each node is appended after its elder siblings
            b, into = queue.popleft()
            done = _finish(b, index, by_agent)
            into.append(done)
            queue.extend((c, done.children) for c in b.children)
        ran = set(agents_in([InvocationAgents(index, inv.span_id, roots)]))
        for (at, agent), (passed, reason) in by_agent.items():
            if at == index and agent not in ran:  # expected to act, never ran: a node all the same
                roots.append(AgentNode(agent, None, None, [], step_figures(None, [], []), [], passed, reason))
        out.append(InvocationAgents(index, inv.span_id, roots))
    return out


def agents_in(summary: Iterable[InvocationAgents]) -> list[str]:
    """The names of the agents in the trees, in order of first appearance."""
    names: dict[str, None] = {}
    stack = [n for inv in reversed(list(summary)) for n in reversed(inv.roots)]
    while stack:
        node = stack.pop()
        names.setdefault(node.agent)
        stack.extend(reversed(node.children))
    return list(names)


def agent_figures(trace: Trace | None, invocation: Span | None = None) -> dict[str, Figures]:
    """Figures per agent name, over the whole trace or one of its invocation spans, from the
    same agent trees: each model and tool call counts for the agent whose run it is in (so an
    agent's figures leave out the agents it handed off to or called as tools; an agent run
    several times, e.g. in a loop, sums its runs); `duration` is the time its runs covered,
    overlaps counted once. Every call of an agent counts, `agenteval.uncounted` or not: these
    are the agents' own figures. Empty without a trace or agent spans; O(spans)."""
    if trace is None:
        return {}
    kids = trace.children_index()
    runs: dict[str, list[Span]] = {}
    own: dict[str, list[Span]] = {}
    stack = [b for inv in ([invocation] if invocation is not None else trace.invocations())
             for b in _invocation_tree(inv, kids)]
    while stack:
        node = stack.pop()
        runs.setdefault(node.agent, []).extend(node.runs)
        own.setdefault(node.agent, []).extend(node.own)
        stack.extend(node.children)
    out = {}
    for agent, spans in own.items():
        covered = _covered(runs[agent])
        out[agent] = step_figures(union_seconds(covered) if covered else None, spans, spans)
    return out


__all__ = ["AgentNode", "InvocationAgents", "agent_figures", "agent_summary", "agents_in"]
