"""Multi-agent ADK apps run for real through the runner (scripted models, no network): the agent
tree in the trace, the recorded events with their authors (AgentTool inner calls included or
left out), the trajectory scores on flat eval sets, and the efficiency figures agreeing with the
trajectory."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("google.adk", reason="google-adk is not installed (pip install 'agenteval[adk]')")
from google.adk.agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from google.adk.models import LlmResponse
from google.adk.tools.agent_tool import AgentTool
from google.genai import types

from agenteval.agents.adk import AdkAdapter
from agenteval.errors import AgentEvalError
from agenteval.runner import EvalJob, Selection, Services, run
from agenteval.schema import EvalCaseResult, EvalConfig, InvocationEvents
from agenteval.schema.trace import Span, Trace
from agenteval.tracing.agent_summary import agent_figures
from agenteval.tracing.figures import invocations_figures
from tests.agents.scripted_adk import ScriptedLlm
from tests.helpers import call, eval_set, inv

pytestmark = pytest.mark.filterwarnings("ignore:.*is deprecated in favor of Workflow:DeprecationWarning")


def _usage(prompt: int, out: int) -> types.GenerateContentResponseUsageMetadata:
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt, candidates_token_count=out, total_token_count=prompt + out)


def asks(name: str, **args: Any) -> LlmResponse:
    part = types.Part(function_call=types.FunctionCall(name=name, args=args))
    return LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=_usage(10, 2))


def says(text: str) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]),
                       usage_metadata=_usage(20, 3))


def model(*script: LlmResponse, delay: float = 0.0) -> ScriptedLlm:
    return ScriptedLlm(script=list(script), delay=delay)


def search_flights(dest: str) -> dict[str, Any]:
    """Finds flights to a destination."""
    return {"flights": ["AF1"]}


def get_hotel_price(city: str) -> dict[str, Any]:
    """A hotel's price per night in a city."""
    return {"price": 100}


def book_hotel(city: str) -> dict[str, Any]:
    """Books a hotel."""
    return {"booked": city}


def handoff_app() -> LlmAgent:
    """(a) root -> transfer_to_agent -> booking specialist -> its tool."""
    booking = LlmAgent(name="booking_agent", model=model(asks("book_hotel", city="Paris"), says("Booked.")),
                       tools=[book_hotel])
    return LlmAgent(name="travel_desk", model=model(asks("transfer_to_agent", agent_name="booking_agent")),
                    sub_agents=[booking])


def agent_tool_app() -> LlmAgent:
    """(b) an AgentTool whose agent calls two tools."""
    research = LlmAgent(name="research_agent", tools=[search_flights, get_hotel_price], model=model(
        asks("search_flights", dest="Paris"), asks("get_hotel_price", city="Paris"), says("AF1, 100")))
    return LlmAgent(name="travel_agent", tools=[AgentTool(research)],
                    model=model(asks("research_agent", request="Paris trip"), says("Done.")))


def pipeline_app() -> SequentialAgent:
    """(c) a SequentialAgent with a ParallelAgent stage (the branches' model calls overlap)."""
    flights = LlmAgent(name="flights_agent", tools=[search_flights],
                       model=model(asks("search_flights", dest="Paris"), says("AF1"), delay=0.05))
    hotels = LlmAgent(name="hotels_agent", tools=[get_hotel_price],
                      model=model(asks("get_hotel_price", city="Paris"), says("100"), delay=0.05))
    summary = LlmAgent(name="summary_agent", model=model(says("AF1 and a hotel at 100.")))
    return SequentialAgent(name="trip_pipeline", sub_agents=[
        ParallelAgent(name="research_stage", sub_agents=[flights, hotels]), summary])


def _run(agent: Any, expected: list[Any], match_type: str = "EXACT",
         inner_tool_calls: str | None = None) -> EvalCaseResult:
    config = EvalConfig.model_validate({
        "criteria": {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": match_type}},
        **({"inner_tool_calls": inner_tool_calls} if inner_tool_calls else {})})
    cases = eval_set("trips", {"c": [inv("Plan my Paris trip", None, expected)]})
    job = EvalJob(agent=agent, selections=[Selection(None, cases)], config=config)
    done = asyncio.run(run(job, Services.create({})))
    (case,) = done.results[0].eval_case_results
    return case


def _score(case: EvalCaseResult, metric: str) -> float | None:
    (per,) = case.eval_metric_result_per_invocation
    return next(r.score for r in per.eval_metric_results if r.metric_name == metric)


def _events(case: EvalCaseResult) -> list[tuple[str, str, str]]:
    """(author, call or response, tool name) of each recorded call and response."""
    (per,) = case.eval_metric_result_per_invocation
    data = per.actual_invocation.intermediate_data
    assert isinstance(data, InvocationEvents)
    return [(e.author, "call" if p.function_call else "response",
             (p.function_call or p.function_response).name or "")  # type: ignore[union-attr]
            for e in data.invocation_events if e.content
            for p in e.content.parts or [] if p.function_call or p.function_response]


def _tree(trace: Trace) -> list[str]:
    """The agent and tool spans of the trace's invocation, indented by depth below it."""
    (invocation,) = trace.invocations()
    kids = trace.children_index()
    out: list[str] = []

    def walk(span: Span, depth: int) -> None:
        for k in kids.get(span.span_id, []):
            if k.kind in ("agent", "tool"):
                out.append("  " * depth + k.name)
            walk(k, depth + 1)

    walk(invocation, 0)
    return out


def _agent(trace: Trace, name: str) -> Span:
    (span,) = [s for s in trace.spans if s.kind == "agent" and s.attributes["gen_ai.agent.name"] == name]
    return span


def _agrees_with_trajectory(case: EvalCaseResult) -> None:
    """tool_call_count_v1, inference_call_count_v1 and the tokens count what the events hold."""
    (per,) = case.eval_metric_result_per_invocation
    actual = per.actual_invocation
    assert _score(case, "tool_call_count_v1") == len(actual.tool_calls())
    (fig,) = invocations_figures(case.trace, 1)
    assert fig is not None and fig.tool_calls == len(actual.tool_calls())
    assert fig.model_calls == actual.model_call_count() == _score(case, "inference_call_count_v1")
    assert fig.input_tokens == sum(u.prompt_token_count or 0 for u in actual.usage())


def test_handoff_chain_nests_the_specialist_under_the_agent_that_handed_off() -> None:
    expected = [call("transfer_to_agent", agent_name="booking_agent"), call("book_hotel", city="Paris")]
    case = _run(handoff_app(), expected)
    assert case.trace is not None
    assert _tree(case.trace) == [
        "invoke_agent travel_desk",
        "  execute_tool transfer_to_agent",
        "  invoke_agent booking_agent",
        "    execute_tool book_hotel",
    ]
    root = _agent(case.trace, "travel_desk")
    assert root.attributes["input.value"] == "Plan my Paris trip"
    assert root.attributes["output.value"] == "Booked."
    assert "agenteval.agent.workflow" not in root.attributes
    booking = _agent(case.trace, "booking_agent")
    assert {s.kind for s in case.trace.children(booking.span_id)} == {"llm", "tool"}
    assert _events(case) == [
        ("travel_desk", "call", "transfer_to_agent"), ("travel_desk", "response", "transfer_to_agent"),
        ("booking_agent", "call", "book_hotel"), ("booking_agent", "response", "book_hotel")]
    assert _score(case, "tool_trajectory_avg_score") == 1.0
    _agrees_with_trajectory(case)
    per_agent = agent_figures(case.trace)
    assert (per_agent["travel_desk"].model_calls, per_agent["travel_desk"].tool_calls) == (1, 1)
    assert (per_agent["booking_agent"].model_calls, per_agent["booking_agent"].tool_calls) == (2, 1)


def test_the_next_turn_starts_with_the_agent_handed_control() -> None:
    booking = LlmAgent(name="booking_agent", tools=[book_hotel], model=model(
        asks("book_hotel", city="Paris"), says("Booked."), says("You are welcome.")))
    root = LlmAgent(name="travel_desk", model=model(asks("transfer_to_agent", agent_name="booking_agent")),
                    sub_agents=[booking])
    calls = [call("transfer_to_agent", agent_name="booking_agent"), call("book_hotel", city="Paris")]
    cases = eval_set("trips", {"c": [inv("Book Paris", None, calls), inv("Thanks", None, [])]})
    job = EvalJob(agent=root, selections=[Selection(None, cases)],
                  config=EvalConfig.model_validate({"criteria": {"tool_trajectory_avg_score": 1.0}}))
    (case,) = asyncio.run(run(job, Services.create({}))).results[0].eval_case_results
    assert case.trace is not None
    second = case.trace.invocations()[1]
    (agent,) = case.trace.children(second.span_id)
    assert agent.name == "invoke_agent booking_agent"
    assert agent.attributes["output.value"] == "You are welcome."
    assert [r.score for r in case.overall_eval_metric_results
            if r.metric_name == "tool_trajectory_avg_score"] == [1.0]


AGENT_TOOL_EXPECTED = [call("research_agent", request="Paris trip"), call("search_flights", dest="Paris"),
                       call("get_hotel_price", city="Paris")]


def test_agent_tool_inner_calls_are_recorded_and_scored_by_default() -> None:
    case = _run(agent_tool_app(), AGENT_TOOL_EXPECTED)
    assert case.trace is not None
    assert _tree(case.trace) == [
        "invoke_agent travel_agent",
        "  execute_tool research_agent",
        "    invoke_agent research_agent",
        "      execute_tool search_flights",
        "      execute_tool get_hotel_price",
    ]
    inner = _agent(case.trace, "research_agent")
    assert inner.attributes["agenteval.agent.as_tool"] is True
    assert inner.attributes["input.value"] == "Paris trip"
    assert "agenteval.uncounted" not in inner.attributes
    assert _events(case) == [
        ("travel_agent", "call", "research_agent"),
        ("research_agent", "call", "search_flights"), ("research_agent", "response", "search_flights"),
        ("research_agent", "call", "get_hotel_price"), ("research_agent", "response", "get_hotel_price"),
        ("travel_agent", "response", "research_agent")]
    assert _score(case, "tool_trajectory_avg_score") == 1.0  # adk eval: 0.0
    assert _score(case, "tool_call_count_v1") == 3
    _agrees_with_trajectory(case)
    per_agent = agent_figures(case.trace)
    assert (per_agent["travel_agent"].model_calls, per_agent["travel_agent"].tool_calls) == (2, 1)
    assert (per_agent["research_agent"].model_calls, per_agent["research_agent"].tool_calls) == (3, 2)
    assert per_agent["research_agent"].input_tokens == 40


def test_agent_tool_inner_calls_left_out_as_adk_eval_records_them() -> None:
    case = _run(agent_tool_app(), AGENT_TOOL_EXPECTED, inner_tool_calls="exclude")
    assert case.trace is not None
    assert len(_tree(case.trace)) == 5  # the trace keeps the inner run either way
    assert _agent(case.trace, "research_agent").attributes["agenteval.uncounted"] is True
    assert _events(case) == [("travel_agent", "call", "research_agent"),
                             ("travel_agent", "response", "research_agent")]
    assert _score(case, "tool_trajectory_avg_score") == 0.0  # what adk eval gives
    assert _score(case, "tool_call_count_v1") == 1
    _agrees_with_trajectory(case)
    assert agent_figures(case.trace)["research_agent"].tool_calls == 2  # its own figures still


def test_sequential_agent_with_a_parallel_stage() -> None:
    expected = [call("search_flights", dest="Paris"), call("get_hotel_price", city="Paris")]
    case = _run(pipeline_app(), expected, match_type="ANY_ORDER")
    trace = case.trace
    assert trace is not None
    tree = _tree(trace)
    assert tree[:2] == ["invoke_agent trip_pipeline", "  invoke_agent research_stage"]
    assert tree[-1] == "  invoke_agent summary_agent"
    assert sorted(tree[2:-1]) == sorted([  # the branches, in the order they started
        "    invoke_agent flights_agent", "      execute_tool search_flights",
        "    invoke_agent hotels_agent", "      execute_tool get_hotel_price"])
    assert _agent(trace, "trip_pipeline").attributes["agenteval.agent.workflow"] == "sequential"
    stage = _agent(trace, "research_stage")
    assert stage.attributes["agenteval.agent.workflow"] == "parallel"
    for branch, tool in (("flights_agent", "search_flights"), ("hotels_agent", "get_hotel_price")):
        span = _agent(trace, branch)
        assert span.parent_id == stage.span_id
        assert span.attributes["agenteval.agent.branch"] == f"research_stage.{branch}"
        kids = trace.children(span.span_id)  # its own calls, though the branches ran at once
        assert [s.kind for s in kids] == ["llm", "tool", "llm"]
        assert kids[1].name == f"execute_tool {tool}"
    flights, hotels = _agent(trace, "flights_agent"), _agent(trace, "hotels_agent")
    assert flights.end is not None and hotels.end is not None
    assert flights.start < hotels.end and hotels.start < flights.end  # they did overlap
    assert sorted(_events(case)) == sorted([
        ("flights_agent", "call", "search_flights"), ("flights_agent", "response", "search_flights"),
        ("hotels_agent", "call", "get_hotel_price"), ("hotels_agent", "response", "get_hotel_price")])
    assert _score(case, "tool_trajectory_avg_score") == 1.0
    _agrees_with_trajectory(case)
    assert set(agent_figures(trace)) == {"trip_pipeline", "research_stage", "flights_agent", "hotels_agent",
                                         "summary_agent"}


def test_loop_agent_runs_are_one_span_each() -> None:
    counter = LlmAgent(name="counter_agent", model=model(says("one"), says("two")))
    case = _run(LoopAgent(name="counting_loop", sub_agents=[counter], max_iterations=2), [])
    assert case.trace is not None
    assert _tree(case.trace) == ["invoke_agent counting_loop", "  invoke_agent counter_agent",
                                 "  invoke_agent counter_agent"]
    assert _agent(case.trace, "counting_loop").attributes["agenteval.agent.workflow"] == "loop"
    assert agent_figures(case.trace)["counter_agent"].model_calls == 2


@pytest.mark.parametrize("make", [handoff_app, agent_tool_app, pipeline_app])
def test_without_a_trace_the_events_are_the_same(make: Callable[[], Any]) -> None:
    from agenteval.runner import infer_case
    from agenteval.schema import Content, EvalCase, Invocation

    case = EvalCase(eval_id="c", conversation=[Invocation(user_content=Content.from_text("Go", role="user"))])
    done = asyncio.run(infer_case(AdkAdapter(make()), case, "s", 0))
    assert done.error_message is None
    (actual,) = done.actual
    assert actual.tool_calls()


def test_inner_tool_calls_must_be_include_or_exclude() -> None:
    with pytest.raises(AgentEvalError, match="inner_tool_calls"):
        AdkAdapter(handoff_app(), "sometimes")  # type: ignore[arg-type]
