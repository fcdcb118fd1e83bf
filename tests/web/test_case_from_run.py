"""A stored run's case made an eval case over real HTTP (issue 26, item 3): POST
/apps/{app}/eval-sets/{set}/from-run, into a new set or an existing one, which agenteval and
Google ADK both load; a duplicate id is a 409, an unknown run a 404, and nothing is written."""

from __future__ import annotations

from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet

from agenteval.datasets import load_eval_set
from tests.web.api_support import Live

SETS = "/apps/echo/eval-sets"


def _stored_run(live: Live) -> str:
    live.post(f"{SETS}/smoke")
    sid = live.session()
    live.say(sid, "roll a d6")
    live.say(sid, "hello")
    r = live.post(f"{SETS}/smoke/add-session", json={"eval_id": "dice", "session_id": sid, "user_id": "u"})
    assert r.status_code == 201, r.text
    r = live.post(f"{SETS}/smoke/run", json={"criteria": {"tool_trajectory_avg_score": 1.0}})
    assert r.status_code == 202, r.text
    run_id = str(r.json()["run_id"])
    assert live.events(run_id)[-1]["type"] == "RunFinished"
    return run_id


def test_a_runs_case_becomes_a_case_of_a_new_or_existing_set(live: Live) -> None:
    run_id = _stored_run(live)
    body = {"eval_id": "dice_again", "run_id": run_id, "case_id": "dice"}
    r = live.post(f"{SETS}/made/from-run", json=body)
    assert r.status_code == 201, r.text
    case = r.json()
    turns = case["conversation"]
    assert [t["user_content"]["parts"][0]["text"] for t in turns] == ["roll a d6", "hello"]
    assert [t["final_response"]["parts"][0]["text"] for t in turns] == ["You rolled a 4.", "echo: hello"]
    events = turns[0]["intermediate_data"]["invocation_events"]
    calls = [p["function_call"] for e in events for p in e["content"]["parts"] if p.get("function_call")]
    assert [(c["name"], c["args"]) for c in calls] == [("roll_die", {"sides": 6})]
    assert case["final_session_state"] == {"turns": 2}
    path = live.agents_dir / "echo" / "made.evalset.json"
    load_eval_set(path)
    AdkEvalSet.model_validate_json(path.read_text())
    assert live.get(f"{SETS}/made/eval-cases/dice_again").json() == case  # what the editor opens

    r = live.post(f"{SETS}/smoke/from-run", json={"eval_id": "dice2", "run_id": run_id, "case_id": "dice"})
    assert r.status_code == 201, r.text
    assert [c.eval_id for c in load_eval_set(live.agents_dir / "echo" / "smoke.evalset.json").eval_cases] == [
        "dice", "dice2"]


def test_duplicates_and_unknown_runs_are_refused_and_nothing_is_written(live: Live) -> None:
    run_id = _stored_run(live)
    path = live.agents_dir / "echo" / "smoke.evalset.json"
    before = path.read_bytes()
    r = live.post(f"{SETS}/smoke/from-run", json={"eval_id": "dice", "run_id": run_id, "case_id": "dice"})
    assert r.status_code == 409 and path.read_bytes() == before
    r = live.post(f"{SETS}/smoke/from-run", json={"eval_id": "x", "run_id": "nope", "case_id": "dice"})
    assert r.status_code == 404
    r = live.post(f"{SETS}/smoke/from-run", json={"eval_id": "x", "run_id": run_id, "case_id": "nope"})
    assert r.status_code in (400, 422) and "no case 'nope'" in r.text and path.read_bytes() == before
    for eval_id in (" ", "a,b"):  # ids the CLI's `FILE:id1,id2` could not select
        body = {"eval_id": eval_id, "run_id": run_id, "case_id": "dice"}
        r = live.post(f"{SETS}/smoke/from-run", json=body)
        assert r.status_code == 400 and "body.eval_id" in r.text and path.read_bytes() == before, r.text
