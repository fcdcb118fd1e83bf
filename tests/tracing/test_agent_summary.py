"""The per-agent summary of a case run's trace (tracing.agent_summary): the agent tree of each
invocation, how control reached each agent, its own figures and tools, and its verdicts."""

from __future__ import annotations

import json
from typing import Any

from agenteval.schema import AgentVerdict
from agenteval.schema.trace import Span, Trace
from agenteval.tracing.agent_summary import AgentNode, agent_figures, agent_summary, agents_in


class Spans:
    """Hand-made spans: each is given its parent, kind and times."""

    def __init__(self) -> None:
        self.spans: list[Span] = []

    def add(self, name: str, kind: str, parent: str | None, start: float, end: float, **attrs: Any) -> str:
        sid = f"{len(self.spans) + 1:016x}"
        self.spans.append(Span(span_id=sid, parent_id=parent, name=name, kind=kind,  # type: ignore[arg-type]
                               start=start, end=end, attributes=attrs))
        return sid

    def agent(self, name: str, parent: str | None, start: float, end: float, **attrs: Any) -> str:
        attrs["gen_ai.agent.name"] = name
        return self.add(f"invoke_agent {name}", "agent", parent, start, end, **attrs)

    def llm(self, parent: str, start: float, tokens: int = 10) -> str:
        return self.add("chat m", "llm", parent, start, start + 1, **{
            "gen_ai.usage.input_tokens": tokens, "gen_ai.usage.output_tokens": 1})

    def tool(self, name: str, parent: str, start: float, **args: Any) -> str:
        return self.add(f"execute_tool {name}", "tool", parent, start, start + 1, **{
            "gen_ai.tool.name": name, "gen_ai.tool.call.arguments": json.dumps(args)})

    def invocation(self, index: int, start: float = 0.0, end: float = 100.0) -> str:
        return self.add(f"invocation {index}", "invocation", None, start, end,
                        **{"agenteval.invocation_index": index})

    def trace(self) -> Trace:
        return Trace(trace_id="0" * 32, spans=self.spans)


def shape(nodes: list[AgentNode], depth: int = 0) -> list[str]:
    out = []
    for n in nodes:
        out.append("  " * depth + f"{n.agent} via={n.via} runs={len(n.span_ids)} tools={n.tools}")
        out += shape(n.children, depth + 1)
    return out


def test_a_handoff_beside_the_agent_handing_off_goes_under_it() -> None:
    # ADK's own tracer: both runs under its Runner's invoke_workflow span, side by side.
    t = Spans()
    inv = t.invocation(0)
    wf = t.add("invoke_workflow triage", "other", inv, 0, 50)
    triage = t.agent("triage", wf, 0, 20)
    t.llm(triage, 1, tokens=50)
    t.tool("transfer_to_agent", triage, 3, agent_name="booking")
    booking = t.agent("booking", wf, 21, 50)
    t.llm(booking, 22, tokens=70)
    t.tool("book_table", booking, 24, time="20:00")
    t.llm(booking, 26, tokens=90)
    (one,) = agent_summary(t.trace())
    assert one.index == 0
    assert shape(one.roots) == ["triage via=None runs=1 tools=[('transfer_to_agent', 1)]",
                                "  booking via=handoff runs=1 tools=[('book_table', 1)]"]
    triage_node, booking_node = one.roots[0], one.roots[0].children[0]
    assert (triage_node.figures.model_calls, triage_node.figures.tool_calls) == (1, 1)
    assert (booking_node.figures.model_calls, booking_node.figures.input_tokens) == (2, 160)
    assert booking_node.figures.duration == 29  # its run, not the agents around it
    assert triage_node.passed is None and triage_node.reason is None  # nothing matched it alone


def test_agent_tool_workflows_and_loops() -> None:
    t = Spans()
    inv = t.invocation(0)
    root = t.agent("travel", inv, 0, 90)
    call = t.tool("research", root, 1, request="Paris")
    inner = t.agent("research", call, 1, 10, **{"agenteval.agent.as_tool": True})
    t.tool("search_flights", inner, 2, dest="Paris")
    t.tool("search_flights", inner, 4, dest="Rome")
    pipe = t.agent("pipeline", root, 11, 80, **{"agenteval.agent.workflow": "sequential"})
    stage = t.agent("stage", pipe, 11, 40, **{"agenteval.agent.workflow": "parallel"})
    t.agent("flights", stage, 12, 30)
    t.agent("hotels", stage, 12, 35)
    loop = t.agent("loop", pipe, 41, 80, **{"agenteval.agent.workflow": "loop"})
    for start in (41, 60):
        t.llm(t.agent("counter", loop, start, start + 10), start + 1)
    (one,) = agent_summary(t.trace())
    assert shape(one.roots) == [
        "travel via=None runs=1 tools=[('research', 1)]",
        "  research via=tool runs=1 tools=[('search_flights', 2)]",
        "  pipeline via=sub_agent runs=1 tools=[]",
        "    stage via=sequential runs=1 tools=[]",
        "      flights via=parallel runs=1 tools=[]",
        "      hotels via=parallel runs=1 tools=[]",
        "    loop via=sequential runs=1 tools=[]",
        "      counter via=loop runs=2 tools=[]"]
    counter = one.roots[0].children[1].children[1].children[0]
    assert counter.figures.model_calls == 2 and counter.figures.duration == 20
    assert one.roots[0].children[1].workflow == "sequential"
    assert agents_in([one]) == ["travel", "research", "pipeline", "stage", "flights", "hotels", "loop",
                                "counter"]
    assert agent_figures(t.trace())["research"].tool_calls == 2
    assert agent_figures(t.trace())["travel"].tool_calls == 1  # the inner calls are research's


def test_verdicts_per_invocation_and_agent() -> None:
    t = Spans()
    for i in (0, 1):
        inv = t.invocation(i, start=100 * i, end=100 * i + 50)
        root = t.agent("root", inv, 100 * i, 100 * i + 50)
        t.tool("transfer_to_agent", root, 100 * i + 1, agent_name="booking")
        t.agent("booking", root, 100 * i + 2, 100 * i + 40)
    why = "EXACT: book() was expected from booking, made by root"
    verdicts = [AgentVerdict(metric_name="traj", invocation_index=i, agent=a, passed=ok, reason=r)
                for i, a, ok, r in ((0, "root", True, None), (0, "booking", True, None),
                                    (1, "booking", False, why))]
    first, second = agent_summary(t.trace(), verdicts)
    assert [(n.agent, n.passed) for n in (first.roots[0], first.roots[0].children[0])] == [
        ("root", True), ("booking", True)]
    booking = second.roots[0].children[0]
    assert booking.via == "handoff" and booking.passed is False
    assert booking.reason == f"traj: {why}"
    assert second.roots[0].passed is None  # no verdict about root in that turn


def test_no_trace_no_agents_and_deep_chains() -> None:
    assert agent_summary(None) == [] and agent_figures(None) == {}
    t = Spans()
    inv = t.invocation(0)
    t.llm(inv, 1)  # a turn without agent spans
    assert [x.roots for x in agent_summary(t.trace())] == [[]]
    deep = Spans()
    parent = deep.invocation(0)
    for k in range(3000):  # far deeper than Python's recursion limit
        parent = deep.agent(f"a{k}", parent, 0, 1)
    (one,) = agent_summary(deep.trace())
    node, depth = one.roots[0], 1
    while node.children:
        node, depth = node.children[0], depth + 1
    assert depth == 3000 and len(agents_in([one])) == 3000
