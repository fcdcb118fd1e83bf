"""The whole path over real HTTP, as the page walks it: chat with a callable agent, add the
session to a new eval set, edit the expected turn, run with two criteria (one judged by a
scripted OpenAI-compatible judge server), read the failure (argument diff, judge rationale,
prompt and raw reply), the trace, and compare with the earlier run."""

from __future__ import annotations

import json
from typing import Any

from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet

from agenteval.datasets import load_eval_set
from tests.fake_server import FakeServer, Step, reply
from tests.web.api_support import Live

SET = "/apps/echo/eval-sets/flow"


def _verdict(verdict: str, rationale: str) -> Step:
    return Step(body=reply(json.dumps({"rationale": rationale, "verdict": verdict})))


def _run(live: Live, judge_url: str) -> dict[str, Any]:
    r = live.post(f"{SET}/run", json={
        "criteria": {"tool_trajectory_avg_score": 1.0, "final_response_match_v2": 0.5},
        "judge_model": f"openai-compat:judge@{judge_url}", "num_samples": 1})
    assert r.status_code == 202, r.text
    events = live.events(r.json()["run_id"])
    assert events[-1]["type"] == "RunFinished", events[-1]
    return events[-1]


def test_chat_to_eval_set_to_run_to_results_trace_and_comparison(live: Live, server: FakeServer) -> None:
    sid = live.session(state={"player": "ann"})
    turn = live.say(sid, "roll a d6")
    assert turn["tool_calls"] == [{"name": "roll_die", "args": {"sides": 6}}]

    assert live.post(SET).status_code == 201
    added = live.post(f"{SET}/add-session", json={"eval_id": "roll", "session_id": sid, "user_id": "u"})
    assert added.status_code == 201

    server.steps = [_verdict("valid", "Both say the die shows 4.")]
    first = _run(live, server.base_url)
    assert (first["passed"], first["failed"]) == (1, 0)

    case = live.get(f"{SET}/eval-cases/roll").json()
    expected = case["conversation"][0]
    expected["final_response"]["parts"][0]["text"] = "You rolled a 6."
    for event in expected["intermediate_data"]["invocation_events"]:
        for part in event["content"]["parts"]:
            if "function_call" in part:
                part["function_call"]["args"] = {"sides": 20}
    assert live.put(f"{SET}/eval-cases/roll", json=case).status_code == 200
    path = live.agents_dir / "echo" / "flow.evalset.json"
    load_eval_set(path)
    AdkEvalSet.model_validate_json(path.read_text())

    server.steps = [_verdict("invalid", "The expected answer is 6, the agent said 4.")]
    second = _run(live, server.base_url)
    assert (second["passed"], second["failed"]) == (0, 1)
    run_id = second["result_ids"][0]

    view = live.get(f"/api/runs/{run_id}").json()
    assert view["status"] == "failed" and view["cases_not_passed"] == 1
    assert view["criteria"][:2] == ["tool_trajectory_avg_score", "final_response_match_v2"]
    # why, as `agenteval runs show` says it: the criteria's own reasons, the judge, its certificate
    problems = view["cases"][0]["problems"]
    assert ("tool_trajectory_avg_score: mean 0 < threshold 1: EXACT: call 1: expected roll_die(sides=20), "
            "got roll_die(sides=6): argument sides differs") in problems
    assert ("final_response_match_v2: score 0 < threshold 0.5: the judge said invalid — The expected answer "
            "is 6, the agent said 4.") in problems
    assert problems[-1].startswith("final_response_match_v2: judge uncalibrated: no certificate")

    detail = live.get(f"/api/runs/{run_id}/cases/roll").json()
    inv = detail["invocations"][0]
    assert (inv["expected_response"], inv["actual_response"]) == ("You rolled a 6.", "You rolled a 4.")
    assert {"op": "-", "call": "roll_die(sides=20)"} in inv["tool_call_diff"]
    assert {"op": "+", "call": "roll_die(sides=6)"} in inv["tool_call_diff"]
    (call,) = inv["argument_diff"]
    assert call["status"] == "different" and call["tool"] == "roll_die"
    assert call["arguments"] == [{"name": "sides", "expected": 20, "actual": 6, "missing": None}]
    statuses = {s["name"]: s["status"] for s in inv["scores"]}
    assert statuses["tool_trajectory_avg_score"] == statuses["final_response_match_v2"] == "failed"
    records = detail["result"]["judge_records"]
    (record,) = [records[i] for i in inv["judge_records"]]
    assert record["verdict"] == "invalid"
    assert record["rationale"] == "The expected answer is 6, the agent said 4."
    assert "You rolled a 6." in record["prompt"] and "invalid" in record["replies"][0]
    assert any("judge [final_response_match_v2" in line and "said 4" in line for line in detail["problems"])

    spans = detail["result"]["trace"]["spans"]
    kinds = [s["kind"] for s in spans]
    assert kinds[0] == "case" and {"invocation", "agent", "tool", "scoring", "judge"} <= set(kinds)
    judge_span = next(s for s in spans if s["kind"] == "judge")
    assert judge_span["span_id"] == record["span_id"]

    comparison = live.get("/api/compare", params={"a": first["result_ids"][0], "b": run_id}).json()
    assert comparison["has_regressions"] is True and comparison["counts"]["newly failed"] == 1
    (delta,) = comparison["cases"]
    assert delta["eval_id"] == "roll" and delta["change"] == "newly failed"
    assert {c["metric_name"]: c["change"] for c in delta["criteria"]} == {
        "tool_trajectory_avg_score": "newly failed", "final_response_match_v2": "newly failed"}
    # the chat's own trace is still there, with the session
    assert live.get(f"/apps/echo/users/u/sessions/{sid}").json()["turns"][0]["trace"]["spans"]
