"""Multi-agent trajectories (criteria.trajectory_agents): per-agent matching, ignore_tools,
SUBSET / SUPERSET."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agenteval.criteria import EvalContext, default_registry
from agenteval.criteria.base import CriterionResult
from agenteval.errors import DataError
from agenteval.schema import Content, FunctionCall, Invocation, InvocationEvents
from tests.helpers import call, inv

Event = tuple[str, FunctionCall | None]


def turn(*events: Event) -> Invocation:
    """A turn of authored events: (author, call), or (author, None) for a text event."""
    out = []
    for author, c in events:
        part: dict[str, Any] = ({"function_call": c.model_dump(exclude_none=True)} if c is not None
                                else {"text": "..."})
        out.append({"author": author, "content": {"role": "model", "parts": [part]}})
    return Invocation(user_content=Content.from_text("hi", role="user"),
                      final_response=Content.from_text("ok"),
                      intermediate_data=InvocationEvents.model_validate({"invocation_events": out}))


def score(value: object, actual: list[Invocation], expected: list[Invocation],
          name: str = "tool_trajectory_avg_score") -> CriterionResult:
    metric = default_registry().configure(name, value)  # type: ignore[arg-type]
    return metric.build().score(EvalContext(actual=actual, expected=expected))


def reason(result: CriterionResult) -> str:
    (per,) = result.per_invocation
    assert per.reason is not None
    return per.reason


flights, hotel = call("search_flights", dest="Paris"), call("get_hotel_price", city="Paris")
summary = call("sum")
handoff = call("transfer_to_agent", agent_name="booking_agent")
book = call("find_restaurant", city="Paris")

# A root, then two parallel branches, each calling twice.
EXPECTED = turn(("root", call("plan")), ("flights_agent", flights), ("flights_agent", call("seat", n=1)),
                ("hotels_agent", hotel), ("hotels_agent", call("room", n=2)))
# The branches interleaved differently, each agent's own order kept.
INTERLEAVED = turn(("root", call("plan")), ("hotels_agent", hotel), ("flights_agent", flights),
                   ("hotels_agent", call("room", n=2)), ("flights_agent", call("seat", n=1)))


@pytest.mark.parametrize("kind", ["EXACT", "IN_ORDER", "ANY_ORDER", "SUBSET", "SUPERSET"])
def test_per_agent_the_interleaving_of_parallel_branches_does_not_matter(kind: str) -> None:
    result = score({"threshold": 1.0, "match_type": kind}, [INTERLEAVED], [EXPECTED])
    assert result.score == 1.0, reason(result)
    assert "each agent's calls matched on their own (root, flights_agent, hotels_agent)" in reason(result)
    # matched flat, EXACT and IN_ORDER see the interleaving
    flat = score({"threshold": 1.0, "match_type": kind, "per_agent": False}, [INTERLEAVED], [EXPECTED])
    assert flat.score == (0.0 if kind in ("EXACT", "IN_ORDER") else 1.0)


@pytest.mark.parametrize("kind", ["EXACT", "IN_ORDER"])
def test_per_agent_order_within_an_agent_still_counts(kind: str) -> None:
    swapped = turn(("root", call("plan")), ("flights_agent", call("seat", n=1)), ("flights_agent", flights),
                   ("hotels_agent", hotel), ("hotels_agent", call("room", n=2)))
    result = score({"threshold": 1.0, "match_type": kind}, [swapped], [EXPECTED])
    assert result.score == 0.0
    assert reason(result).startswith(f"{kind}: flights_agent's calls: ")


@pytest.mark.parametrize("kind", ["EXACT", "IN_ORDER", "ANY_ORDER", "SUPERSET"])
def test_a_call_by_the_wrong_agent_fails_naming_both(kind: str) -> None:
    expected = turn(("root", handoff), ("booking_agent", book))
    wrong = turn(("root", handoff), ("weather_agent", book))
    result = score({"threshold": 1.0, "match_type": kind}, [wrong], [expected])
    assert result.score == 0.0
    assert reason(result) == (f'{kind}: find_restaurant(city="Paris") was expected from booking_agent, '
                              "made by weather_agent")
    # flat, as ADK matches, it passes
    assert score({"threshold": 1.0, "match_type": kind, "per_agent": False}, [wrong], [expected]).score == 1.0


def test_subset_names_the_agent_that_made_a_call_expected_from_another() -> None:
    expected = turn(("root", handoff), ("booking_agent", book))
    wrong = turn(("root", handoff), ("weather_agent", book))
    result = score({"threshold": 1.0, "match_type": "SUBSET"}, [wrong], [expected])
    assert result.score == 0.0
    assert reason(result) == ('SUBSET: find_restaurant(city="Paris") was expected from booking_agent, '
                              "made by weather_agent")


def test_extra_calls_of_an_agent_with_none_expected() -> None:
    expected = turn(("root", handoff), ("booking_agent", book))
    extra = turn(("root", handoff), ("booking_agent", book), ("weather_agent", call("get_weather")))
    assert score({"threshold": 1.0, "match_type": "EXACT"}, [extra], [expected]).score == 0.0
    assert "weather_agent's calls: extra call 1: get_weather" in reason(
        score({"threshold": 1.0, "match_type": "EXACT"}, [extra], [expected]))
    assert score({"threshold": 1.0, "match_type": "IN_ORDER"}, [extra], [expected]).score == 1.0


def test_root_only_sets_keep_adks_flat_semantics() -> None:
    # one author: flat, whatever the actual authors are (ADK ignores them)
    expected = turn(("my_agent", flights), ("my_agent", hotel))
    actual = turn(("other_name", flights), ("other_name", hotel))
    assert score(1.0, [actual], [expected]).score == 1.0
    assert "per agent" not in reason(score(1.0, [actual], [expected]))
    # the legacy tool_uses form names no agent
    assert score(1.0, [actual], [inv(calls=[flights, hotel])]).score == 1.0


def test_per_agent_true_on_a_single_author_and_on_sets_without_authors() -> None:
    expected = turn(("booking_agent", book))
    wrong = turn(("weather_agent", book))
    assert score(1.0, [wrong], [expected]).score == 1.0  # auto: one author, flat
    forced = score({"threshold": 1.0, "per_agent": True}, [wrong], [expected])
    assert forced.score == 0.0 and "made by weather_agent" in reason(forced)
    legacy = score({"threshold": 1.0, "per_agent": True}, [wrong], [inv(calls=[book])])
    assert legacy.score is None and legacy.error is not None and "name no agent" in legacy.error


def test_an_actual_turn_without_authors_matches_no_agent() -> None:
    expected = turn(("root", handoff), ("booking_agent", book))
    result = score({"threshold": 1.0, "match_type": "ANY_ORDER"}, [inv(calls=[handoff, book])], [expected])
    assert result.score == 0.0
    assert "made by an agent the actual turn does not name" in reason(result)


def test_per_agent_is_decided_for_the_case() -> None:
    # turn 2 has one author, but the case names two: turn 2 is matched per agent too
    expected = [turn(("root", handoff), ("booking_agent", book)), turn(("booking_agent", call("confirm")))]
    actual = [turn(("root", handoff), ("booking_agent", book)), turn(("weather_agent", call("confirm")))]
    result = score(1.0, actual, expected)
    assert [p.score for p in result.per_invocation] == [1.0, 0.0]


def test_ignore_tools_drops_calls_from_both_sides() -> None:
    expected = [inv(calls=[book])]
    actual = [inv(calls=[handoff, book])]
    assert score(1.0, actual, expected).score == 0.0
    cfg = {"threshold": 1.0, "ignore_tools": ["transfer_to_agent"]}
    assert score(cfg, actual, expected).score == 1.0
    assert score(cfg, actual, expected, "tool_trajectory_precision").score == 1.0
    assert score({"threshold": 1.0}, actual, expected, "tool_trajectory_precision").score == 0.5
    assert score(cfg, [inv(calls=[])], [inv(calls=[handoff])], "tool_trajectory_recall").score == 1.0
    # per agent, the ignored call's agent then has nothing to match
    authored = [turn(("root", handoff), ("booking_agent", book))]
    assert score(cfg, [turn(("booking_agent", book))], authored).score == 1.0


def test_handoff_ids_are_never_compared() -> None:
    expected = turn(("root", FunctionCall(id="adk-1", name="transfer_to_agent", args={"agent_name": "b"})),
                    ("b", book))
    actual = turn(("root", FunctionCall(id="adk-2", name="transfer_to_agent", args={"agent_name": "b"})),
                  ("b", book))
    assert score(1.0, [actual], [expected]).score == 1.0


@pytest.mark.parametrize(("actual", "expected", "subset", "superset"), [
    ([], [], True, True),
    ([flights], [flights, hotel], True, False),
    ([flights, hotel], [flights], False, True),
    ([hotel, flights], [flights, hotel], True, True),
    ([flights, flights], [flights], False, True),
    ([flights], [flights, flights], True, False),
    ([summary], [flights], False, False),
])
def test_subset_and_superset(actual: list[FunctionCall], expected: list[FunctionCall], subset: bool,
                             superset: bool) -> None:
    for kind, want in (("SUBSET", subset), ("SUPERSET", superset)):
        result = score({"threshold": 1.0, "match_type": kind}, [inv(calls=actual)], [inv(calls=expected)])
        assert result.score == (1.0 if want else 0.0), (kind, reason(result))


def test_subset_and_superset_reasons_say_which_side_contains_which() -> None:
    sub = score({"threshold": 1.0, "match_type": "subset"}, [inv(calls=[flights, summary])],
                [inv(calls=[flights])])
    assert reason(sub) == ('SUBSET: call 2, sum(), is not among the expected calls (the calls made must be '
                           "contained in the expected ones; 1 of 2 are)")
    sup = score({"threshold": 1.0, "match_type": "superset"}, [inv(calls=[flights])],
                [inv(calls=[flights, hotel])])
    assert reason(sup).startswith("SUPERSET: the calls made must contain the expected ones: expected call "
                                  'get_hotel_price(city="Paris") not made')
    ok = score({"threshold": 1.0, "match_type": "SUBSET"}, [inv(calls=[flights])],
               [inv(calls=[flights, hotel])])
    assert reason(ok) == "SUBSET: 2 calls expected, every call made among them"


# --- end to end ------------------------------------------------------------------------------------

def _score_cli(tmp_path: Path, expected: Path, actual: Path, criterion: dict[str, Any]) -> tuple[int, Any]:
    from click.testing import CliRunner

    from agenteval.cli.main import cli

    config = tmp_path / "c.json"
    config.write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": criterion}}))
    out = tmp_path / "out.json"
    r = CliRunner().invoke(cli, ["score", str(expected), "--actual", str(actual), "--config_file_path",
                                 str(config), "-o", str(out)])
    assert r.exit_code in (0, 1), r.output
    return r.exit_code, json.loads(out.read_text())


def _reasons(doc: Any) -> list[str]:
    return [x["reason"] for c in doc["eval_case_results"] for x in c["reasons"]
            if x["metric_name"] == "tool_trajectory_avg_score"]


@pytest.mark.parametrize("framework", ["adk", "openai_agents", "langgraph"])
def test_the_real_multi_agent_traces_match_per_agent_and_a_wrongly_credited_set_fails(
        framework: str, tmp_path: Path) -> None:
    from tests.conftest import FIXTURES

    traces = FIXTURES / "traces"
    expected, actual = traces / f"{framework}_multi.evalset.json", traces / f"{framework}_multi.otlp.json"
    for kind in ("EXACT", "IN_ORDER", "ANY_ORDER", "SUPERSET", "SUBSET"):
        code, doc = _score_cli(tmp_path, expected, actual, {"threshold": 1.0, "match_type": kind})
        assert code == 0, (kind, _reasons(doc))
    # The booking turn credited to another agent: per agent it fails, naming both; flat it passes.
    wrong = tmp_path / "wrong.evalset.json"
    text = expected.read_text()
    assert text.count('"author": "booking_agent"') >= 1
    wrong.write_text(text.replace('"author": "booking_agent"', '"author": "weather_agent"'))
    code, doc = _score_cli(tmp_path, wrong, actual, {"threshold": 1.0})
    assert code == 1
    said = _reasons(doc)
    assert any("was expected from weather_agent, made by booking_agent" in r for r in said), said
    code, doc = _score_cli(tmp_path, wrong, actual, {"threshold": 1.0, "per_agent": False})
    assert code == 0, _reasons(doc)


def _adk_case(agent: Any, expected: Invocation, criterion: dict[str, Any]) -> Any:
    import asyncio

    from agenteval.runner import EvalJob, Selection, Services, run
    from agenteval.schema import EvalConfig, EvalSet
    from agenteval.schema.evalset import EvalCase

    config = EvalConfig.model_validate({"criteria": {"tool_trajectory_avg_score": criterion}})
    cases = EvalSet(eval_set_id="trips", eval_cases=[EvalCase(eval_id="c", conversation=[expected])])
    job = EvalJob(agent=agent, selections=[Selection(None, cases)], config=config)
    (case,) = asyncio.run(run(job, Services.create({}))).results[0].eval_case_results
    return case


def _adk_score(case: Any) -> tuple[float | None, str]:
    (per,) = case.eval_metric_result_per_invocation
    got = next(r.score for r in per.eval_metric_results if r.metric_name == "tool_trajectory_avg_score")
    why = [x.reason for x in case.reasons if x.metric_name == "tool_trajectory_avg_score"]
    return got, " | ".join(str(x) for x in why)


@pytest.mark.filterwarnings("ignore:.*is deprecated in favor of Workflow:DeprecationWarning")
def test_the_adk_adapters_authored_events_are_matched_per_agent() -> None:
    pytest.importorskip("google.adk", reason="google-adk is not installed")
    from tests.agents import test_adk_tree as apps

    def expect(*events: Event) -> Invocation:
        done = turn(*events)
        return done.model_copy(update={"user_content": Content.from_text("Plan my Paris trip", role="user")})

    transfer = call("transfer_to_agent", agent_name="booking_agent")
    booked = call("book_hotel", city="Paris")
    right = expect(("travel_desk", transfer), ("booking_agent", booked))
    assert _adk_score(_adk_case(apps.handoff_app(), right, {"threshold": 1.0}))[0] == 1.0
    wrong = expect(("travel_desk", transfer), ("travel_desk", booked))
    got, why = _adk_score(_adk_case(apps.handoff_app(), wrong, {"threshold": 1.0, "per_agent": True}))
    assert got == 0.0
    assert 'book_hotel(city="Paris") was expected from travel_desk, made by booking_agent' in why
    assert _adk_score(_adk_case(apps.handoff_app(), wrong, {"threshold": 1.0, "per_agent": False}))[0] == 1.0
    # an author that is no agent of the app is refused before the run (`runner.expected_agents`)
    unknown = expect(("travel_desk", transfer), ("concierge_agent", booked))
    with pytest.raises(DataError, match="'concierge_agent' is not an agent of the app"):
        _adk_case(apps.handoff_app(), unknown, {"threshold": 1.0})
    flat = {"threshold": 1.0, "per_agent": False}
    assert _adk_score(_adk_case(apps.handoff_app(), unknown, flat))[0] == 1.0
    # without the bookkeeping call in the expected turn
    only = expect(("travel_desk", None), ("booking_agent", booked))
    assert _adk_score(_adk_case(apps.handoff_app(), only, {"threshold": 1.0}))[0] == 0.0
    assert _adk_score(_adk_case(apps.handoff_app(), only,
                                {"threshold": 1.0, "ignore_tools": ["transfer_to_agent"]}))[0] == 1.0
    # parallel branches, EXACT per agent, whichever branch ran first
    stage = expect(("hotels_agent", call("get_hotel_price", city="Paris")),
                   ("flights_agent", call("search_flights", dest="Paris")))
    assert _adk_score(_adk_case(apps.pipeline_app(), stage, {"threshold": 1.0}))[0] == 1.0
    # an AgentTool's inner calls, credited to the inner agent
    inner = expect(("travel_agent", call("research_agent", request="Paris trip")),
                   ("research_agent", call("search_flights", dest="Paris")),
                   ("research_agent", call("get_hotel_price", city="Paris")))
    assert _adk_score(_adk_case(apps.agent_tool_app(), inner, {"threshold": 1.0}))[0] == 1.0
