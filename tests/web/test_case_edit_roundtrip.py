"""A case saved by the case editor round-trips through the eval set file loader unchanged in
everything not edited: the editor's PUT (the case as read, with its edits: initial session state,
rubrics, a turn added) is written so that `load_eval_set` reads back the same case but for the
edits, other cases of the set untouched."""

from __future__ import annotations

import json
from typing import Any

from agenteval.datasets import load_eval_set
from tests.web.api_support import Live

SETS = "/apps/echo/eval-sets"
TURN = {"invocation_id": "e-1", "user_content": {"role": "user", "parts": [{"text": "book for two"}]},
        "final_response": {"role": "model", "parts": [{"text": "Booked."}]},
        "intermediate_data": {"invocation_events": [
            {"author": "root", "content": {"role": "model", "parts": [
                {"function_call": {"id": "c1", "name": "book",
                                   "args": {"guests": 2, "when": {"day": "mon"}}}}]}},
            {"author": "root", "content": {"role": "user", "parts": [
                {"function_response": {"id": "c1", "name": "book", "response": {"ok": True}}}]}}]},
        "creation_timestamp": 1700000000.5,
        "rubrics": [{"rubric_id": "t1", "rubric_content": {"text_property": "confirms the day"},
                     "type": "FINAL_RESPONSE_QUALITY"}]}
CASE = {"eval_id": "book", "conversation": [TURN], "creation_timestamp": 1700000000.0,
        "session_input": {"app_name": "echo", "user_id": "u", "session_id": "s1", "state": {"tier": "gold"}},
        "final_session_state": {"booked": True}}
OTHER = {"eval_id": "other", "conversation": [{**TURN, "invocation_id": "e-2"}]}


def _call(case: dict[str, Any], turn: int = 0) -> dict[str, Any]:
    """The first expected call of a turn (its first event's first part)."""
    events = case["conversation"][turn]["intermediate_data"]["invocation_events"]
    out: dict[str, Any] = events[0]["content"]["parts"][0]["function_call"]
    return out


def _case(live: Live, eval_id: str) -> dict[str, Any]:
    path = live.agents_dir / "echo" / "adk.evalset.json"
    found = load_eval_set(path).case(eval_id)
    assert found is not None
    out: dict[str, Any] = found.model_dump(mode="json")
    return out


def test_saved_edits_change_only_what_was_edited(live: Live) -> None:
    path = live.agents_dir / "echo" / "adk.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "adk", "name": "ADK set", "eval_cases": [CASE, OTHER]}))
    before, other = _case(live, "book"), _case(live, "other")
    read = live.get(f"{SETS}/adk/eval-cases/book").json()
    # saved unedited: nothing changes
    assert live.put(f"{SETS}/adk/eval-cases/book", json=read).status_code == 200
    assert _case(live, "book") == before
    # the editor's edits: state, a case rubric, a turn added, a typed argument
    edited = json.loads(json.dumps(read))
    edited["session_input"]["state"] = {"tier": "silver", "visits": 3}
    edited["rubrics"] = [{"rubric_id": "r1", "rubric_content": {"text_property": "polite"},
                          "type": "TOOL_USE_QUALITY"}]
    _call(edited)["args"]["guests"] = 4
    edited["conversation"].append({
        "invocation_id": "e-new", "user_content": {"role": "user", "parts": [{"text": "thanks"}]},
        "final_response": {"role": "model", "parts": [{"text": ""}]},
        "intermediate_data": {"invocation_events": []}, "creation_timestamp": 1700000001.0})
    r = live.put(f"{SETS}/adk/eval-cases/book", json=edited)
    assert r.status_code == 200, r.text
    after = _case(live, "book")
    assert after["session_input"] == {**before["session_input"], "state": {"tier": "silver", "visits": 3}}
    assert after["rubrics"][0]["type"] == "TOOL_USE_QUALITY"
    assert after["conversation"][1]["user_content"]["parts"][0]["text"] == "thanks"
    assert _call(after)["args"] == {"guests": 4, "when": {"day": "mon"}}
    # everything else as it was
    for key in ("session_input", "rubrics", "conversation"):
        after.pop(key), before.pop(key)
    assert after == before
    book = _case(live, "book")
    _call(book)["args"]["guests"] = 2  # the first turn, but for the edited argument
    assert book["conversation"][0] == _case(live, "other")["conversation"][0] | {"invocation_id": "e-1"}
    assert _case(live, "other") == other
    assert json.loads(path.read_text())["name"] == "ADK set"


# A set as a user wrote it: explicit nulls (one of them, final_session_state, on a field whose
# default is not null) and keys left out.
NULLS = {"eval_set_id": "nulls", "name": None, "description": "kept", "eval_cases": [
    {"eval_id": "a", "conversation": [{**TURN, "final_response": None, "rubrics": None,
                                       "duration": None}],
     "session_input": {"app_name": "echo", "user_id": "u", "session_id": None},
     "rubrics": None, "final_session_state": None},
    {"eval_id": "b", "conversation": [TURN], "final_session_state": None, "conversation_scenario": None}]}


def test_explicit_nulls_round_trip_through_every_write(live: Live) -> None:
    path = live.agents_dir / "echo" / "nulls.evalset.json"
    path.write_text(json.dumps(NULLS, indent=2))
    sets = f"{SETS}/nulls"
    # the editor's read shows the nulls, so that saving it unedited changes nothing
    read = live.get(f"{sets}/eval-cases/a").json()
    assert read == NULLS["eval_cases"][0]
    assert live.put(f"{sets}/eval-cases/a", json=read).status_code == 200
    assert json.loads(path.read_text()) == NULLS
    # an edit of case a writes what was edited; case b, and a's other fields, as they were
    read["session_input"]["state"] = {"tier": "gold"}
    assert live.put(f"{sets}/eval-cases/a", json=read).status_code == 200
    assert json.loads(path.read_text())["eval_cases"] == [read, NULLS["eval_cases"][1]]
    assert load_eval_set(path).eval_cases[1].final_session_state is None
    # the other writes of the set (a case deleted, a case added from a chat) keep them too
    assert live.delete(f"{sets}/eval-cases/a").status_code == 200
    assert json.loads(path.read_text()) == {**NULLS, "eval_cases": [NULLS["eval_cases"][1]]}
    assert live.get(sets).json() == {**NULLS, "eval_cases": [NULLS["eval_cases"][1]]}
