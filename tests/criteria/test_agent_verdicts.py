"""Every agent's own verdict from per-agent trajectory matching (InvocationScore.agents), and
its way into the result document (EvalCaseResult.agent_verdicts) for the reports' agent tree."""

from __future__ import annotations

import asyncio

from agenteval.criteria import default_registry
from agenteval.runner.scoring import CaseRun, score_case
from agenteval.schema import EvalCase
from tests.criteria.test_trajectory_agents import EXPECTED, INTERLEAVED, book, handoff, score, turn
from tests.helpers import call


def test_each_agent_gets_its_verdict_and_a_wrong_one_says_why() -> None:
    expected = turn(("root", handoff), ("booking_agent", book))
    wrong = turn(("root", handoff), ("weather_agent", book))
    (per,) = score({"threshold": 1.0, "match_type": "EXACT"}, [wrong], [expected]).per_invocation
    assert per.agents == {
        "root": None,
        "booking_agent": 'EXACT: find_restaurant(city="Paris") was expected from booking_agent, '
                         "made by weather_agent",
        "weather_agent": 'EXACT: find_restaurant(city="Paris") was expected from booking_agent, '
                         "made by weather_agent"}
    (ok,) = score({"threshold": 1.0, "match_type": "EXACT"}, [INTERLEAVED], [EXPECTED]).per_invocation
    assert ok.agents == {"root": None, "flights_agent": None, "hotels_agent": None}


def test_flat_matching_gives_no_agent_verdicts() -> None:
    (per,) = score({"threshold": 1.0, "per_agent": False}, [INTERLEAVED], [EXPECTED]).per_invocation
    assert per.agents is None
    single = turn(("root", call("plan")))
    (one,) = score({"threshold": 1.0}, [single], [single]).per_invocation
    assert one.agents is None  # one author: ADK's flat semantics, nothing per agent


def test_the_result_document_keeps_them() -> None:
    expected = turn(("root", handoff), ("booking_agent", book))
    wrong = turn(("root", handoff), ("booking_agent", call("find_restaurant", city="Rome")))
    metric = default_registry().configure("tool_trajectory_avg_score", {"threshold": 1.0})
    case = EvalCase(eval_id="c", conversation=[expected])
    result = asyncio.run(score_case(CaseRun(case, [wrong], "s"), [metric]))
    got = {(v.invocation_index, v.agent): (v.passed, v.reason) for v in result.agent_verdicts}
    assert got[(0, "root")] == (True, None)
    passed, why = got[(0, "booking_agent")]
    assert not passed and why is not None and why.startswith("EXACT: booking_agent's calls: ")
    flat = asyncio.run(score_case(CaseRun(EvalCase(eval_id="c", conversation=[turn(("root", book))]),
                                          [turn(("root", book))], "s"), [metric]))
    assert flat.agent_verdicts == [] and "agent_verdicts" not in flat.model_dump(exclude_defaults=True)
