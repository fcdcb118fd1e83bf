"""Who handled each turn, and handoffs that go nowhere (criteria.handoffs)."""

from __future__ import annotations

from typing import Any

from agenteval.criteria.base import EvalContext
from agenteval.criteria.handoffs import HandoffLoops, TurnAgentMatch, handlers, handoffs, idle_or_looping
from agenteval.schema import BaseCriterion, Content, Invocation, InvocationEvents
from tests.helpers import inv


def _turn(*events: tuple[str, str, dict[str, Any] | None]) -> Invocation:
    """A turn whose events are (author, call name or "" for text, args)."""
    out = []
    for author, name, args in events:
        part: dict[str, Any] = {"function_call": {"id": "adk-x", "name": name, "args": args or {}}} if name \
            else {"text": "done"}
        out.append({"author": author, "content": {"role": "model", "parts": [part]}})
    return Invocation(user_content=Content.from_text("hi", role="user"),
                      final_response=Content.from_text("ok"),
                      intermediate_data=InvocationEvents.model_validate({"invocation_events": out}))


def _handoff(frm: str, to: str) -> tuple[str, str, dict[str, Any]]:
    return (frm, "transfer_to_agent", {"agent_name": to})


def test_the_handler_is_the_last_handoff_target_else_the_last_author_else_the_previous() -> None:
    turns = [_turn(_handoff("root", "booking"), ("booking", "book_table", {"people": 2})),
             _turn(("booking", "", None)),
             inv("plain"),  # no events: the conversation stays with booking
             _turn(_handoff("booking", "root"))]
    assert handlers(turns) == ["booking", "booking", "booking", "root"]
    assert handoffs(turns[0])[0].from_agent == "root" and handoffs(turns[0])[0].to_agent == "booking"
    assert handlers([inv("legacy")]) == [None]  # tool_uses carry no authors


def test_turn_agent_match_names_both_agents_when_the_wrong_one_handled_it() -> None:
    crit = TurnAgentMatch("turn_agent_match_v1", BaseCriterion(threshold=1.0))
    expected = [_turn(_handoff("root", "booking"), ("booking", "find_restaurant", {}))]
    right = [_turn(("root", "lookup", {}), _handoff("root", "booking"), ("booking", "", None))]
    wrong = [_turn(_handoff("root", "weather"), ("weather", "find_restaurant", {}))]
    assert crit.score(EvalContext(actual=right, expected=expected)).score == 1.0
    result = crit.score(EvalContext(actual=wrong, expected=expected))
    assert result.score == 0.0
    assert result.per_invocation[0].reason == "turn 0: handled by weather, expected booking"
    assert result.reason is not None and "expected booking" in result.reason
    flat = crit.score(EvalContext(actual=wrong, expected=[inv("x")]))
    assert flat.score is None and flat.error is not None and "no author" in flat.error


def test_ping_pong_and_idle_agents_are_caught() -> None:
    crit = HandoffLoops("handoff_loops_v1", BaseCriterion(threshold=1.0))
    ping_pong = _turn(_handoff("root", "billing"), _handoff("billing", "root"))
    idle = _turn(_handoff("root", "billing"), _handoff("billing", "refunds"), ("refunds", "refund", {}))
    fine = _turn(_handoff("root", "billing"), ("billing", "charge", {}), _handoff("billing", "root"))
    assert idle_or_looping(ping_pong) == ("ping-pong: root handed off to billing, which handed straight "
                                          "back to root")
    assert idle_or_looping(idle) == ("billing was handed control by root and handed it on to refunds "
                                     "doing nothing")
    assert idle_or_looping(fine) is None
    result = crit.score(EvalContext(actual=[fine, ping_pong]))
    assert result.score == 0.5 and result.per_invocation[1].score == 0.0
    assert crit.score(EvalContext(actual=[fine, inv("no agents")])).score == 1.0


def test_the_three_frameworks_multi_agent_traces_and_a_wrongly_credited_set(tmp_path: Any) -> None:
    import json

    import pytest
    from click.testing import CliRunner

    from agenteval.cli.main import cli
    from tests.conftest import FIXTURES

    config = tmp_path / "c.json"
    config.write_text(json.dumps({"criteria": {"turn_agent_match_v1": 1.0, "handoff_loops_v1": 1.0}}))
    traces = FIXTURES / "traces"
    for framework in ("adk", "openai_agents", "langgraph"):
        out = tmp_path / f"{framework}.json"
        r = CliRunner().invoke(cli, ["score", str(traces / f"{framework}_multi.evalset.json"), "--actual",
                                     str(traces / f"{framework}_multi.otlp.json"), "--config_file_path",
                                     str(config), "-o", str(out)])
        assert r.exit_code == 0, (framework, r.output)
    # The same OpenAI Agents SDK run against a set that credits the booking turn to another agent.
    wrong = json.loads((traces / "openai_agents_multi.evalset.json").read_text())
    renamed = json.dumps(wrong).replace('"booking_agent"', '"weather_agent_x"').replace(
        '"Booking agent"', '"Weather agent X"')
    if renamed == json.dumps(wrong):
        pytest.skip("the fixture names its booking agent differently")
    (tmp_path / "wrong.evalset.json").write_text(renamed)
    out = tmp_path / "wrong.json"
    r = CliRunner().invoke(cli, ["score", str(tmp_path / "wrong.evalset.json"), "--actual",
                                 str(traces / "openai_agents_multi.otlp.json"), "--config_file_path",
                                 str(config), "-o", str(out)])
    assert r.exit_code == 1, r.output
    doc = json.loads(out.read_text())
    reasons = [x["reason"] for c in doc["eval_case_results"] for x in c["reasons"]
               if x["metric_name"] == "turn_agent_match_v1"]
    assert any("expected Weather agent X" in x or "expected weather_agent_x" in x for x in reasons), reasons
