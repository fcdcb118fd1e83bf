"""The agent summary (tracing.agent_summary) of ADK apps run for real through the runner on a
scripted BaseLlm: a handoff chain, an AgentTool, a sequential workflow with a parallel stage."""

from __future__ import annotations

import pytest

from agenteval.reporting.agent_tree import case_agents, multi_agent, node_facts
from agenteval.tracing.agent_summary import AgentNode
from tests.agents.test_adk_tree import AGENT_TOOL_EXPECTED, _run, agent_tool_app, handoff_app, pipeline_app
from tests.helpers import call

pytestmark = pytest.mark.filterwarnings("ignore:.*is deprecated in favor of Workflow:DeprecationWarning",
                                        "ignore:The `plugins` argument is deprecated:DeprecationWarning")


def shape(nodes: list[AgentNode], depth: int = 0) -> list[str]:
    out = []
    for n in sorted(nodes, key=lambda n: n.agent) if depth > 1 else nodes:  # parallel branches: any order
        out.append("  " * depth + f"{n.agent} {n.via} {n.passed}")
        out += shape(n.children, depth + 1)
    return out


def test_handoff_chain() -> None:
    calls = [call("transfer_to_agent", agent_name="booking_agent"), call("book_hotel", city="Paris")]
    (one,) = case_agents(_run(handoff_app(), calls))
    # a flat expected set: no per-agent verdicts
    assert shape(one.roots) == ["travel_desk None None", "  booking_agent handoff None"]
    booking = one.roots[0].children[0]
    assert node_facts(booking)[:3] == ["handed control", "2 model calls", "1 tool call"]


def test_agent_tool() -> None:
    case = _run(agent_tool_app(), AGENT_TOOL_EXPECTED)
    (one,) = case_agents(case)
    assert shape(one.roots) == ["travel_agent None None", "  research_agent tool None"]
    assert one.roots[0].children[0].tools == [("search_flights", 1), ("get_hotel_price", 1)]


def test_sequential_with_a_parallel_stage() -> None:
    expected = [call("search_flights", dest="Paris"), call("get_hotel_price", city="Paris")]
    summary = case_agents(_run(pipeline_app(), expected, match_type="ANY_ORDER"))
    assert multi_agent(summary)
    (one,) = summary
    assert shape(one.roots) == ["trip_pipeline None None", "  research_stage sequential None",
                                "    flights_agent parallel None", "    hotels_agent parallel None",
                                "  summary_agent sequential None"]
    assert one.roots[0].workflow == "sequential" and one.roots[0].children[0].workflow == "parallel"


@pytest.mark.parametrize(("inner_author", "passed"), [("research_agent", True), ("weather_agent", False)])
def test_per_agent_verdicts_of_a_real_run(inner_author: str, passed: bool) -> None:
    import asyncio

    from agenteval.runner import EvalJob, Selection, Services, run
    from agenteval.schema import EvalConfig, EvalSet
    from tests.criteria.test_trajectory_agents import turn

    expected = turn(("travel_agent", call("research_agent", request="Paris trip")),
                    (inner_author, call("search_flights", dest="Paris")),
                    (inner_author, call("get_hotel_price", city="Paris")))
    cases = EvalSet.model_validate({"eval_set_id": "trips", "eval_cases": [
        {"eval_id": "c", "conversation": [expected.model_dump(exclude_none=True)]}]})
    config = EvalConfig.model_validate({"criteria": {"tool_trajectory_avg_score": 1.0}})
    job = EvalJob(agent=agent_tool_app(), selections=[Selection(None, cases)], config=config)
    if not passed:  # no agent of the app: refused before the run (`runner.expected_agents`)
        from agenteval.errors import DataError

        with pytest.raises(DataError, match="'weather_agent' is not an agent of the app"):
            asyncio.run(run(job, Services.create({})))
        return
    (case,) = asyncio.run(run(job, Services.create({}))).results[0].eval_case_results
    (one,) = case_agents(case)
    travel, research = one.roots[0], one.roots[0].children[0]
    assert (travel.passed, research.passed) == (True, passed)
