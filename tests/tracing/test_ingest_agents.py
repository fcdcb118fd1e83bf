"""The agent tree of ingested traces (issue 23, item 6): agent runs as `invoke_agent NAME` spans
nested as in the source, each call's author, handoffs as `transfer_to_agent` by the agent handing
off. Real traces (tests/fixtures/traces, make_traces.py + multi_agent_apps.py): the OpenAI Agents
SDK (a handoff, an agent used as a tool) and LangGraph (a supervisor graph and its subgraphs),
both through OpenInference; and hand-made spans for the rules' edges."""

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.datasets import load_eval_set
from agenteval.schema import Content, EvalCase, EvalSet, Invocation
from agenteval.schema.content import Part
from agenteval.schema.invocation import IntermediateData, InvocationEvent, InvocationEvents
from agenteval.schema.trace import Span, Trace
from agenteval.tracing.ingest import read_traces

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
SINGLE = ["adk", "adk_legacy", "openai_agents", "langgraph"]


def _read(name: str, expected: Path | None = None) -> tuple[EvalSet, dict[str, Trace]]:
    expected_set = load_eval_set(expected or FIXTURES / f"{name}.evalset.json")
    return read_traces(FIXTURES / f"{name}.otlp.json").match(expected_set)


def _calls(inv: Invocation) -> list[tuple[str, str, dict[str, Any]]]:
    """(author, name, args) of every call of a turn recorded as events."""
    assert isinstance(inv.intermediate_data, InvocationEvents)
    return [(e.author, p.function_call.name, p.function_call.args or {})
            for e in inv.intermediate_data.invocation_events if e.content and e.content.parts
            for p in e.content.parts if p.function_call]


def _responses(inv: Invocation) -> list[tuple[str, str, dict[str, Any]]]:
    assert isinstance(inv.intermediate_data, InvocationEvents)
    return [(e.author, p.function_response.name, p.function_response.response or {})
            for e in inv.intermediate_data.invocation_events if e.content and e.content.parts
            for p in e.content.parts if p.function_response]


def _agents(trace: Trace) -> list[Span]:
    return [s for s in trace.spans if s.kind == "agent"]


def _agent_above(trace: Trace, span: Span) -> str | None:
    """The name of the nearest agent span above `span` (not itself)."""
    by_id = {s.span_id: s for s in trace.spans}
    cur = by_id.get(span.parent_id or "")
    while cur is not None:
        if cur.kind == "agent":
            return str(cur.attributes["gen_ai.agent.name"])
        cur = by_id.get(cur.parent_id or "")
    return None


# --- OpenAI Agents SDK: a handoff, an agent used as a tool ------------------------------------


def test_openai_agents_handoff_is_transfer_to_agent_by_the_agent_handing_off() -> None:
    actual, traces = _read("openai_agents_multi")
    inv = {c.eval_id: c for c in actual.eval_cases}["book-chez-marcel"].conversation[0]
    assert _calls(inv) == [
        ("triage_agent", "transfer_to_agent", {"agent_name": "booking_agent"}),
        ("booking_agent", "book_table", {"restaurant": "Chez Marcel", "time": "20:00", "party_size": 2})]
    assert _responses(inv)[0] == ("triage_agent", "transfer_to_agent", {"result": None})
    assert _responses(inv)[1][:2] == ("booking_agent", "book_table")
    trace = traces["book-chez-marcel"]
    agents = _agents(trace)
    assert [s.name for s in agents] == ["invoke_agent triage_agent", "invoke_agent booking_agent"]
    assert [s.attributes["gen_ai.agent.name"] for s in agents] == ["triage_agent", "booking_agent"]
    # the SDK's trace span (AGENT, no agent name) is no agent run
    assert {s.kind for s in trace.spans if s.name == "Agent workflow"} == {"other"}
    handoff = next(s for s in trace.spans if s.name == "handoff to booking_agent")
    assert handoff.kind == "tool" and _agent_above(trace, handoff) == "triage_agent"
    assert handoff.attributes["agenteval.handoff.from"] == "triage_agent"
    assert handoff.attributes["gen_ai.tool.name"] == "transfer_to_agent"
    # the booking agent's model and tool spans are under its agent span, as the SDK nests them
    book = next(s for s in trace.spans if s.name == "book_table")
    assert _agent_above(trace, book) == "booking_agent"
    assert [_agent_above(trace, s) for s in trace.spans if s.kind == "llm"] == [
        "triage_agent", "booking_agent", "booking_agent"]


def test_openai_agents_agent_as_tool_nests_under_the_tool_and_authors_its_calls() -> None:
    actual, traces = _read("openai_agents_multi")
    inv = {c.eval_id: c for c in actual.eval_cases}["cold-in-oslo"].conversation[0]
    assert _calls(inv) == [("triage_agent", "ask_weather_agent", {"input": "Is it cold in Oslo?"}),
                           ("weather_agent", "get_weather", {"city": "Oslo"})]
    assert [(a, n) for a, n, _ in _responses(inv)] == [("weather_agent", "get_weather"),
                                                       ("triage_agent", "ask_weather_agent")]
    assert inv.intermediate_texts() == [("weather_agent", "It is -2°C and snowing in Oslo.")]
    trace = traces["cold-in-oslo"]
    weather = next(s for s in _agents(trace) if s.attributes["gen_ai.agent.name"] == "weather_agent")
    by_id = {s.span_id: s for s in trace.spans}
    tool = by_id[str(by_id[str(weather.parent_id)].parent_id)]  # under the SDK's task span
    assert (tool.kind, tool.name) == ("tool", "ask_weather_agent")
    assert weather.attributes["agenteval.agent.as_tool"] is True
    assert _agent_above(trace, weather) == "triage_agent"


# --- Google ADK: sub-agents (transfer_to_agent) and an AgentTool ------------------------------


def test_adk_transfer_and_agent_tool_keep_their_agents() -> None:
    actual, traces = _read("adk_multi")
    cases = {c.eval_id: c.conversation[0] for c in actual.eval_cases}
    assert _calls(cases["book-chez-marcel"]) == [
        ("triage_agent", "transfer_to_agent", {"agent_name": "booking_agent"}),
        ("booking_agent", "book_table", {"restaurant": "Chez Marcel", "time": "20:00", "party_size": 2})]
    assert _calls(cases["cold-in-oslo"]) == [
        ("triage_agent", "weather_agent", {"request": "Is it cold in Oslo?"}),
        ("weather_agent", "get_weather", {"city": "Oslo"})]
    booking = traces["book-chez-marcel"]
    # ADK runs the agent handed control beside the one that handed off, under invoke_workflow
    assert [(s.name, _agent_above(booking, s)) for s in _agents(booking)] == [
        ("invoke_agent triage_agent", None), ("invoke_agent booking_agent", None)]
    oslo = traces["cold-in-oslo"]
    weather = next(s for s in _agents(oslo) if s.name == "invoke_agent weather_agent")
    by_id = {s.span_id: s for s in oslo.spans}
    tool = by_id[str(by_id[str(weather.parent_id)].parent_id)]  # under the inner Runner's invoke_workflow
    assert (tool.kind, tool.name) == ("tool", "execute_tool weather_agent")
    assert weather.attributes["agenteval.agent.as_tool"] is True
    assert _agent_above(oslo, weather) == "triage_agent"
    # the inner Runner's own session id does not split the turn off its conversation
    assert sorted(read_traces(FIXTURES / "adk_multi.otlp.json").conversations) == ["book-chez-marcel",
                                                                                   "cold-in-oslo"]


# --- LangGraph: a supervisor graph and its subgraphs -----------------------------------------


def test_langgraph_subgraphs_are_agents_under_the_supervisor() -> None:
    actual, traces = _read("langgraph_multi")
    cases = {c.eval_id: c.conversation[0] for c in actual.eval_cases}
    assert _calls(cases["book-chez-marcel"]) == [
        ("supervisor", "transfer_to_agent", {"agent_name": "booking_agent"}),
        ("booking_agent", "book_table", {"restaurant": "Chez Marcel", "time": "20:00", "party_size": 2})]
    assert _calls(cases["cold-in-oslo"]) == [
        ("supervisor", "transfer_to_agent", {"agent_name": "weather_agent"}),
        ("weather_agent", "get_weather", {"city": "Oslo"})]
    trace = traces["book-chez-marcel"]
    agents = _agents(trace)
    # the root graph and the subgraph's node; not its create_agent span inside, nor plain nodes
    assert [s.name for s in agents] == ["invoke_agent supervisor", "invoke_agent booking_agent"]
    assert _agent_above(trace, agents[1]) == "supervisor"
    plain = ("router", "model", "tools", "booking_agent")  # booking_agent: the create_agent span inside
    assert {s.kind for s in trace.spans if s.name in plain} == {"other"}
    assert [_agent_above(trace, s) for s in trace.spans if s.kind == "llm"] == [
        "supervisor", "booking_agent", "booking_agent"]


@pytest.mark.parametrize("name", ["adk_multi", "openai_agents_multi", "langgraph_multi"])
def test_multi_agent_fixtures_score_against_their_authored_eval_sets(name: str, tmp_path: Path) -> None:
    config = tmp_path / "cfg.json"
    config.write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0,
                                               "response_match_score": 1.0}}))
    r = CliRunner().invoke(cli, ["score", str(FIXTURES / f"{name}.evalset.json"), "--actual",
                                 str(FIXTURES / f"{name}.otlp.json"), "--config_file_path", str(config),
                                 "-o", str(tmp_path / "r.json")], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "r.json").read_text())
    assert [c["final_eval_status"] for c in doc["eval_case_results"]] == [1, 1]


# --- single-agent traces: one agent, recorded as before --------------------------------------


@pytest.mark.parametrize("name", SINGLE)
def test_single_agent_traces_name_their_one_agent_and_keep_the_flat_form(name: str) -> None:
    conversations = read_traces(FIXTURES / f"{name}.otlp.json").conversations
    actual, traces = _read(name, FIXTURES / "expected.evalset.json")
    for conv in conversations.values():
        for turn in conv:
            assert {c.author for c in turn.calls} == {"weather_agent"} and not turn.multi_agent
    for case in actual.eval_cases:
        assert all(isinstance(inv.intermediate_data, IntermediateData) for inv in case.conversation)
        agents = _agents(traces[case.eval_id])
        assert {s.name for s in agents} == {"invoke_agent weather_agent"}
        assert len(agents) == len(case.conversation)  # one run per turn


# --- the rules' edges, on hand-made spans ------------------------------------------------------


def _span(n: int, name: str, parent: int | None, attrs: dict[str, Any], start: int) -> dict[str, Any]:
    return {"traceId": "ab" * 16, "spanId": f"{n:016x}",
            **({"parentSpanId": f"{parent:016x}"} if parent else {}), "name": name, "kind": 1,
            "startTimeUnixNano": str(start * 1000), "endTimeUnixNano": str(start * 1000 + 999),
            "attributes": [{"key": k, "value": {"stringValue": v if isinstance(v, str) else json.dumps(v)}}
                           for k, v in attrs.items()]}


def _llm(call: tuple[str, dict[str, Any]] | None = None, text: str = "", user: str = "hi") -> dict[str, Any]:
    attrs: dict[str, Any] = {"openinference.span.kind": "LLM", "session.id": "s1",
                             "llm.input_messages.0.message.role": "user",
                             "llm.input_messages.0.message.content": user,
                             "llm.output_messages.0.message.role": "assistant"}
    if call:
        attrs["llm.output_messages.0.message.tool_calls.0.tool_call.function.name"] = call[0]
        attrs["llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments"] = call[1]
    if text:
        attrs["llm.output_messages.0.message.content"] = text
    return attrs


def _turn_of(spans: list[dict[str, Any]], tmp_path: Path) -> Any:
    path = tmp_path / "t.otlp.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    (turn,) = read_traces(path).conversations["s1"]
    return turn


def test_a_langgraph_subgraph_in_a_node_without_agent_in_its_name_is_an_agent(tmp_path: Path) -> None:
    md = lambda node: {"metadata": {"langgraph_node": node, "thread_id": "s1"}}  # noqa: E731
    chain = {"openinference.span.kind": "CHAIN"}
    turn = _turn_of([
        _span(1, "app", None, chain, 1),
        _span(2, "route", 1, {**chain, **md("route")}, 2),
        _span(3, "ChatOpenAI", 2, {**_llm(("go_books", {})), **md("route")}, 3),
        _span(4, "books", 1, {**chain, **md("books")}, 4),  # the node running the subgraph
        _span(5, "LangGraph", 4, {**chain, **md("books")}, 5),  # the subgraph
        _span(6, "model", 5, {**chain, **md("model")}, 6),
        _span(7, "ChatOpenAI", 6, {**_llm(("lookup", {"isbn": "1"})), **md("model")}, 7),
        # OpenInference marks any LangChain run with "agent" in its name AGENT: not an agent run
        _span(8, "tools", 5, {**chain, **md("tools")}, 8),
        _span(9, "call_agent_registry", 8, {"openinference.span.kind": "AGENT", **md("tools")}, 9),
        _span(10, "ChatOpenAI", 6, {**_llm(text="done"), **md("model")}, 10),
    ], tmp_path)
    assert sorted(turn.agents.names.values()) == ["app", "books"]
    assert [(c.author, c.name) for c in turn.calls] == [("app", "go_books"), ("books", "lookup")]


def test_a_handoff_span_without_model_content_is_still_a_transfer(tmp_path: Path) -> None:
    agent = {"openinference.span.kind": "AGENT", "session.id": "s1"}
    turn = _turn_of([
        _span(1, "Agent workflow", None, agent, 1),
        _span(2, "triage", 1, {**agent, "agent.name": "triage"}, 2),
        _span(3, "response", 2, _llm(("transfer_to_billing", {})), 3),
        _span(4, "handoff to billing", 2, {"openinference.span.kind": "TOOL", "input.value": "triage",
                                           "output.value": "billing"}, 4),
        _span(5, "billing", 1, {**agent, "agent.name": "billing"}, 5),
        _span(6, "response", 5, _llm(text="Your bill is paid."), 6),
    ], tmp_path)
    assert [(c.author, c.name, c.args) for c in turn.calls] == [
        ("triage", "transfer_to_agent", {"agent_name": "billing"})]
    assert [(h.from_agent, h.to_agent) for h in turn.agents.handoffs] == [("triage", "billing")]
    assert turn.final_text == "Your bill is paid." and turn.multi_agent


def test_nested_adk_style_agents_author_their_own_calls(tmp_path: Path) -> None:
    def agent(name: str) -> dict[str, Any]:
        return {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name,
                "gen_ai.conversation.id": "s1"}

    def model(call: str | None, text: str = "") -> dict[str, Any]:
        out = [{"role": "assistant", "parts": [{"type": "tool_call", "name": call, "arguments": {}}] if call
                else [{"type": "text", "content": text}]}]
        return {"gen_ai.operation.name": "generate_content", "gen_ai.conversation.id": "s1",
                "gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": "plan"}]}],
                "gen_ai.output.messages": out}

    turn = _turn_of([
        _span(1, "invoke_agent root", None, agent("root"), 1),
        _span(2, "generate_content m", 1, model("research"), 2),
        _span(3, "execute_tool research", 1, {"gen_ai.operation.name": "execute_tool",
                                              "gen_ai.tool.name": "research"}, 3),
        _span(4, "invoke_agent researcher", 3, agent("researcher"), 4),  # an agent used as a tool
        _span(5, "generate_content m", 4, model("search"), 5),
        _span(6, "generate_content m", 1, model(None, "Here is the plan."), 7),
    ], tmp_path)
    assert [(c.author, c.name) for c in turn.calls] == [("root", "research"), ("researcher", "search")]
    assert [turn.agents.names[i] for i in turn.agents.as_tool] == ["researcher"]
    assert turn.final_text == "Here is the plan."


@pytest.mark.parametrize("name", SINGLE)
def test_an_expected_set_with_authors_gets_authored_events_from_single_agent_traces(name: str) -> None:
    flat = load_eval_set(FIXTURES / "expected.evalset.json")
    authored = flat.model_copy(deep=True)
    for case in authored.eval_cases:
        for inv in case.conversation or []:
            calls = [InvocationEvent(author="weather_agent", content=Content(role="model", parts=[
                Part(function_call=c)])) for c in inv.tool_calls()]
            inv.intermediate_data = InvocationEvents(invocation_events=calls)
    actual, _ = read_traces(FIXTURES / f"{name}.otlp.json").match(authored)
    paris = {c.eval_id: c for c in actual.eval_cases}["weather-paris-rome"].conversation
    assert [_calls(inv) for inv in paris] == [[("weather_agent", "get_weather", {"city": "Paris"})],
                                              [("weather_agent", "get_weather", {"city": "Rome"})]]
    # without authors in the expected set: the flat form, as before
    actual, _ = read_traces(FIXTURES / f"{name}.otlp.json").match(flat)
    assert all(isinstance(inv.intermediate_data, IntermediateData)
               for c in actual.eval_cases for inv in c.conversation or [])


def test_a_conversation_with_one_multi_agent_turn_is_authored_in_every_turn(tmp_path: Path) -> None:
    agent = {"openinference.span.kind": "AGENT", "session.id": "s1"}
    spans = [
        _span(1, "triage", None, {**agent, "agent.name": "triage"}, 1),
        _span(2, "response", 1, _llm(("transfer_to_billing", {}), user="pay"), 2),
        _span(3, "billing", 1, {**agent, "agent.name": "billing"}, 3),
        _span(4, "response", 3, _llm(text="Paid.", user="pay"), 4),
    ]
    second = [_span(5, "triage", None, {**agent, "agent.name": "triage"}, 10),
              _span(6, "response", 5, _llm(("lookup", {"q": "x"}), user="and?"), 11),
              _span(7, "response", 5, _llm(text="Nothing else.", user="and?"), 12)]
    for s in second:
        s["traceId"] = "cd" * 16
    path = tmp_path / "t.otlp.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans + second}]}]}))
    conv = read_traces(path).conversations["s1"]
    assert [t.multi_agent for t in conv] == [True, False]
    expected = EvalSet(eval_set_id="e", eval_cases=[EvalCase(eval_id="s1", conversation=[
        Invocation(user_content=Content.from_text("pay", role="user")),
        Invocation(user_content=Content.from_text("and?", role="user"))])])
    (case,) = read_traces(path).match(expected)[0].eval_cases
    assert [_calls(inv) for inv in case.conversation or []] == [
        [("triage", "transfer_to_agent", {"agent_name": "billing"})], [("triage", "lookup", {"q": "x"})]]
