"""The agent tree of an ingested trace: which spans are agent runs, which agent each span ran in,
and the handoffs between agents, for the frameworks whose spans say so.

**Agent runs**, named as the framework names the agent:

- GenAI conventions (Google ADK, both schemas; agenteval's own export): `invoke_agent` spans
  (`gen_ai.operation.name`), named by `gen_ai.agent.name`.
- OpenInference, OpenAI Agents SDK: `AGENT` spans with `agent.name` (or `gen_ai.agent.name`,
  `graph.node.id`); the SDK's trace span (`AGENT` without a name, `Agent workflow`) is not an
  agent.
- OpenInference, LangChain / LangGraph (spans whose `metadata` is LangChain's run metadata): a
  graph, i.e. an `AGENT` or `CHAIN` span that runs graph nodes (a child span named as its
  `langgraph_node`): the root graph, named after the graph, and every subgraph, named after the
  node it runs in; and a graph node that OpenInference marks `AGENT` (its name has "agent" in
  it). OpenInference's `AGENT` on any other LangChain run (a tool or chain whose name merely
  contains "agent") is not an agent run. An agent run directly under a run of the same agent (a
  `create_agent` graph inside the node named after it) is one run: the outer span.

**Handoffs**: OpenInference's handoff spans of the OpenAI Agents SDK (`TOOL` spans named `handoff
to TO`, `input.value` the agent handing off, `output.value` the agent handed control). LangGraph
has no handoff spans: the ingestion reads a call `transfer_to_NAME` to an agent NAME that runs in
the turn (the handoff tools of langgraph-supervisor and the OpenAI Agents SDK) as a handoff.

Each span's agent is the nearest agent run enclosing it (itself for an agent run); an agent run
inside a tool span (an agent used as a tool: the OpenAI Agents SDK's `agent.as_tool`, ADK's
`AgentTool`) is marked `as_tool`. Everything is O(spans) and iterative (any depth).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agenteval.tracing.otlp_json import OtlpSpan

HANDOFF_TOOL = "transfer_to_agent"  # ADK's handoff call, the form agenteval records handoffs in


@dataclass
class Handoff:
    """Control handed from one agent to another (`from_agent` None: not recorded; `span_id`
    None: read from a `transfer_to_NAME` call, no span of its own)."""

    span_id: str | None
    from_agent: str | None
    to_agent: str
    start: float


@dataclass
class AgentTree:
    """The agent runs of one turn's spans (see the module docstring)."""

    names: dict[str, str] = field(default_factory=dict)  # agent run span id -> agent name
    agent_of: dict[str, str] = field(default_factory=dict)  # span id -> its agent run's span id
    as_tool: set[str] = field(default_factory=set)  # agent runs inside a tool span
    handoffs: list[Handoff] = field(default_factory=list)  # in start order

    def author(self, span_id: str) -> str | None:
        """The name of the agent that ran the span; None outside every agent run."""
        run = self.agent_of.get(span_id)
        return self.names[run] if run is not None else None

    def agents(self) -> set[str]:
        """The names of the agents that ran in the turn, handed control or handed it off."""
        return (set(self.names.values()) | {h.to_agent for h in self.handoffs}
                | {h.from_agent for h in self.handoffs if h.from_agent})


def _metadata(s: OtlpSpan) -> dict[str, Any]:
    raw = s.attributes.get("metadata")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {}
    return raw if isinstance(raw, dict) else {}


def _candidate(s: OtlpSpan, kids: Sequence[OtlpSpan]) -> str | None:
    """The agent's name when the span is an agent run (before merging nested runs), else None."""
    a = s.attributes
    if a.get("gen_ai.operation.name") == "invoke_agent":
        name = a.get("gen_ai.agent.name") or s.name.removeprefix("invoke_agent").strip()
        return str(name or s.name)
    kind = a.get("openinference.span.kind")
    if kind not in ("AGENT", "CHAIN"):
        return None
    md = _metadata(s)
    node = md.get("langgraph_node")
    if any(_metadata(k).get("langgraph_node") == k.name != node for k in kids):
        return str(node or s.name)  # a graph: the root graph, or a subgraph in its node
    if md:  # LangChain: AGENT only on a graph node or a create_agent graph, by name
        return s.name if kind == "AGENT" and s.name in (node, md.get("lc_agent_name")) else None
    if kind == "AGENT":
        name = a.get("agent.name") or a.get("gen_ai.agent.name") or a.get("graph.node.id")
        return str(name) if name else None
    return None


def _handoff(s: OtlpSpan, author: str | None) -> Handoff | None:
    a = s.attributes
    if a.get("openinference.span.kind") != "TOOL" or "tool.name" in a or not s.name.startswith("handoff to "):
        return None
    to = a.get("output.value") or s.name.removeprefix("handoff to ").strip()
    source = a.get("input.value") or author
    return Handoff(s.span_id, str(source) if source else None, str(to), s.start)


def agent_tree(roots: Sequence[OtlpSpan], kids: Mapping[str | None, Sequence[OtlpSpan]],
               is_tool: Callable[[OtlpSpan], bool]) -> AgentTree:
    """The agent tree under `roots` (`kids`: the child spans of each span id)."""
    tree = AgentTree()
    # (span, its parent's agent run, whether a tool span lies between that run and the span)
    stack: list[tuple[OtlpSpan, str | None, bool]] = [(r, None, False) for r in reversed(roots)]
    while stack:
        s, run, in_tool = stack.pop()
        children = kids.get(s.span_id, ())
        name = _candidate(s, children)
        if name is not None and not (run is not None and tree.names[run] == name and s.parent_id == run):
            tree.names[s.span_id] = name
            if in_tool:
                tree.as_tool.add(s.span_id)
            run, in_tool = s.span_id, False
        if run is not None:
            tree.agent_of[s.span_id] = run
        handoff = _handoff(s, tree.names[run] if run is not None else None)
        if handoff is not None:
            tree.handoffs.append(handoff)
        in_tool = in_tool or is_tool(s)
        stack.extend((k, run, in_tool) for k in reversed(children))
    tree.handoffs.sort(key=lambda h: h.start)
    return tree


__all__ = ["HANDOFF_TOOL", "AgentTree", "Handoff", "agent_tree"]
