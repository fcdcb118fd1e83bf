"""Eval sets over real HTTP (ADK's route shapes): created, listed, read; a chat session added
as a case; a case read, edited, deleted; the file rewritten after every change and still
loaded by agenteval and by Google ADK."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet

from agenteval.datasets import load_eval_set
from tests.web.api_support import Live

SETS = "/apps/echo/eval-sets"


def _file(live: Live, set_id: str = "smoke") -> Path:
    return live.agents_dir / "echo" / f"{set_id}.evalset.json"


def _loads_everywhere(path: Path) -> None:
    load_eval_set(path)
    AdkEvalSet.model_validate_json(path.read_text())


def _with_session(live: Live, *texts: str) -> str:
    sid = live.session(state={"city": "Paris"})
    for text in texts:
        live.say(sid, text)
    return sid


def test_a_set_is_created_listed_and_read(live: Live) -> None:
    assert live.get(SETS).json() == []
    r = live.post(f"{SETS}/smoke")
    assert r.status_code == 201 and r.json()["eval_set_id"] == "smoke" and r.json()["eval_cases"] == []
    _loads_everywhere(_file(live))
    assert live.post(f"{SETS}/smoke").status_code == 409
    assert live.get(SETS).json() == ["smoke"] == live.get("/apps/echo/eval_sets").json()
    assert live.get(f"{SETS}/smoke").json()["eval_set_id"] == "smoke"
    assert live.get(f"{SETS}/nope").status_code == 404


def test_a_session_becomes_a_case_and_edits_keep_the_file_loadable(live: Live) -> None:
    live.post(f"{SETS}/smoke")
    sid = _with_session(live, "roll a d6", "boom", "thanks")
    r = live.post(f"{SETS}/smoke/add-session", json={"eval_id": "c1", "session_id": sid, "user_id": "u"})
    assert r.status_code == 201, r.text
    case = r.json()
    prompts = [inv["user_content"]["parts"][0]["text"] for inv in case["conversation"]]
    assert prompts == ["roll a d6", "thanks"]
    assert case["session_input"] == {"app_name": "echo", "user_id": "u", "state": {"city": "Paris"}}
    _loads_everywhere(_file(live))
    again = live.post(f"{SETS}/smoke/add-session", json={"eval_id": "c1", "session_id": sid, "user_id": "u"})
    assert again.status_code == 409
    assert live.get(f"{SETS}/smoke/eval-cases/c1").json() == case

    edited: dict[str, Any] = json.loads(json.dumps(case))
    edited["conversation"][0]["final_response"]["parts"][0]["text"] = "You rolled a 6."
    events = edited["conversation"][0]["intermediate_data"]["invocation_events"]
    call = next(p["function_call"] for e in events for p in e["content"]["parts"] if "function_call" in p)
    call["args"] = {"sides": 20}
    del edited["conversation"][1]
    r = live.put(f"{SETS}/smoke/eval-cases/c1", json=edited)
    assert r.status_code == 200, r.text
    stored = load_eval_set(_file(live)).case("c1")
    assert stored is not None and stored.conversation is not None and len(stored.conversation) == 1
    assert stored.conversation[0].tool_calls()[0].args == {"sides": 20}
    _loads_everywhere(_file(live))

    assert live.delete(f"{SETS}/smoke/eval-cases/c1").json() == {"deleted": "c1"}
    assert live.get(f"{SETS}/smoke/eval-cases/c1").status_code == 404
    assert load_eval_set(_file(live)).eval_cases == []
    _loads_everywhere(_file(live))


def test_bad_edits_are_refused_naming_the_key(live: Live) -> None:
    live.post(f"{SETS}/smoke")
    sid = _with_session(live, "hello")
    live.post(f"{SETS}/smoke/add-session", json={"eval_id": "c1", "session_id": sid, "user_id": "u"})
    case = live.get(f"{SETS}/smoke/eval-cases/c1").json()
    before = _file(live).read_bytes()
    r = live.put(f"{SETS}/smoke/eval-cases/c1", json={**case, "eval_id": "c2"})
    assert r.status_code == 400 and r.json()["detail"].startswith("request body: eval_id: ")
    r = live.put(f"{SETS}/smoke/eval-cases/c1", json={**case, "conversation": [{"final_response": None}]})
    assert r.status_code == 400
    assert r.json()["detail"] == "request body: conversation[0].user_content: field required"
    r = live.put(f"{SETS}/smoke/eval-cases/c1", json={**case, "bogus": 1, "conversation": None})
    assert r.status_code == 400
    assert live.put(f"{SETS}/smoke/eval-cases/nope", json={**case, "eval_id": "nope"}).status_code == 404
    rubric = {"rubric_id": "r1", "rubric_content": {"text_property": "is polite"}}
    r = live.put(f"{SETS}/smoke/eval-cases/c1", json={**case, "rubrics": [rubric, rubric]})
    # the page's words (case-parts.js) and the loader's: one rule, in schema/rubric.py
    assert r.status_code == 400, r.text
    assert r.json()["detail"] == "request body: rubrics: duplicate rubric_id 'r1' (rubrics[0] and rubrics[1])"
    assert _file(live).read_bytes() == before  # nothing written


def test_adding_a_session_needs_a_session_with_answers(live: Live) -> None:
    live.post(f"{SETS}/smoke")
    sid = _with_session(live, "boom")
    r = live.post(f"{SETS}/smoke/add-session", json={"eval_id": "c", "session_id": sid, "user_id": "u"})
    assert r.status_code == 400 and "no answered turn" in r.json()["detail"]
    r = live.post(f"{SETS}/smoke/add-session", json={"eval_id": "c", "session_id": sid, "user_id": "x"})
    assert r.status_code == 404
    r = live.post(f"{SETS}/nope/add-session", json={"eval_id": "c", "session_id": sid, "user_id": "u"})
    assert r.status_code == 404


def test_a_new_case_id_the_cli_could_not_select_is_refused_naming_the_field(live: Live) -> None:
    # A blank id made a case the page listed with no link (it could not be opened, edited or
    # deleted); ',' and ':' made one `FILE:id1,id2` cannot select; the CLI refuses both.
    live.post(f"{SETS}/smoke")
    sid = _with_session(live, "roll a d6")
    before = _file(live).read_bytes()
    for eval_id, said in (("  ", "is blank"), ("a,b", "holds ','"), ("x:1", "holds ','")):
        body = {"eval_id": eval_id, "session_id": sid, "user_id": "u"}
        r = live.post(f"{SETS}/smoke/add-session", json=body)
        assert r.status_code == 400 and r.json()["detail"].startswith("body.eval_id: "), r.text
        assert said in r.text, r.text
    assert _file(live).read_bytes() == before


def test_an_existing_adk_style_set_is_read_and_kept_loadable(live: Live) -> None:
    path = _file(live, "camel")
    turn = {"invocationId": "i", "userContent": {"parts": [{"text": "hi"}], "role": "user"},
            "finalResponse": {"parts": [{"text": "echo: hi"}], "role": "model"}}
    case = {"evalId": "c1", "conversation": [turn]}
    path.write_text(json.dumps({"evalSetId": "camel", "evalCases": [case]}))
    assert live.get(f"{SETS}/camel/eval-cases/c1").json()["conversation"][0]["final_response"]["parts"][0] \
        == {"text": "echo: hi"}
    sid = _with_session(live, "hi")
    assert live.post(f"{SETS}/camel/add-session",
                     json={"eval_id": "c2", "session_id": sid, "user_id": "u"}).status_code == 201
    _loads_everywhere(path)
    assert [c.eval_id for c in load_eval_set(path).eval_cases] == ["c1", "c2"]


def test_a_case_whose_id_holds_a_slash_is_read_edited_and_deleted(live: Live) -> None:
    # The page sends the id encoded (greet%2Fen); the server sees it decoded into two segments.
    live.post(f"{SETS}/smoke")
    r = live.post(f"{SETS}/smoke/add-session",
                  json={"eval_id": "greet/en", "session_id": _with_session(live, "hello"), "user_id": "u"})
    assert r.status_code == 201, r.text
    path = f"{SETS}/smoke/eval-cases/greet%2Fen"
    case = live.get(path)
    assert case.status_code == 200, case.text
    assert case.json()["eval_id"] == "greet/en"
    assert live.put(path, json=case.json()).status_code == 200
    assert live.delete(path).json() == {"deleted": "greet/en"}
    assert load_eval_set(_file(live)).eval_cases == []


def _response_of(case: dict[str, Any], text: str) -> dict[str, Any]:
    edited: dict[str, Any] = json.loads(json.dumps(case))
    edited["conversation"][0]["final_response"] = {"role": "model", "parts": [{"text": text}]}
    return edited


def test_a_save_over_a_case_changed_since_it_was_read_is_refused(live: Live) -> None:
    """Two tabs edit one case: each read it with its version (`ETag`) and saves with `If-Match`;
    the second save finds the case changed by the first and is refused (409), the first's edit
    kept. Without the header a save replaces the case as before (ADK's clients send none)."""
    live.post(f"{SETS}/smoke")
    live.post(f"{SETS}/smoke/add-session",
              json={"eval_id": "c1", "session_id": _with_session(live, "roll a d6"), "user_id": "u"})
    path = f"{SETS}/smoke/eval-cases/c1"
    tab_a, tab_b = live.get(path), live.get(path)
    tag = tab_a.headers["ETag"]
    assert tag and tab_b.headers["ETag"] == tag
    first = live.put(path, json=_response_of(tab_a.json(), "from tab A"), headers={"If-Match": tag})
    assert first.status_code == 200, first.text
    # the saved version is the one a read now gives: tab A can save again without reading
    assert first.headers["ETag"] == live.get(path).headers["ETag"] != tag
    before = _file(live).read_bytes()
    second = live.put(path, json=_response_of(tab_b.json(), "from tab B"), headers={"If-Match": tag})
    assert second.status_code == 409, second.text
    assert "'c1'" in second.json()["detail"] and "changed since it was read" in second.json()["detail"]
    assert _file(live).read_bytes() == before
    again = live.put(path, json=_response_of(first.json(), "tab A, twice"),
                     headers={"If-Match": first.headers["ETag"]})
    assert again.status_code == 200, again.text
    assert live.put(path, json=_response_of(tab_b.json(), "no header")).status_code == 200
    _loads_everywhere(_file(live))


def test_a_delete_of_a_case_changed_since_it_was_read_is_refused(live: Live) -> None:
    """A delete with `If-Match` removes only the version read: once another tab saved the case,
    409 naming it and the file untouched; with the version now read it goes through."""
    live.post(f"{SETS}/smoke")
    live.post(f"{SETS}/smoke/add-session",
              json={"eval_id": "c1", "session_id": _with_session(live, "roll a d6"), "user_id": "u"})
    path = f"{SETS}/smoke/eval-cases/c1"
    read = live.get(path)
    saved = live.put(path, json=_response_of(read.json(), "from another tab"),
                     headers={"If-Match": read.headers["ETag"]})
    assert saved.status_code == 200, saved.text
    before = _file(live).read_bytes()
    stale = live.delete(path, headers={"If-Match": read.headers["ETag"]})
    assert stale.status_code == 409, stale.text
    assert "case 'c1' of eval set 'smoke' was changed since it was read" in stale.json()["detail"]
    assert _file(live).read_bytes() == before
    assert live.delete(path, headers={"If-Match": saved.headers["ETag"]}).json() == {"deleted": "c1"}
    assert load_eval_set(_file(live)).eval_cases == []


def test_a_legacy_file_is_read_but_not_edited_naming_migrate(live: Live) -> None:
    """A legacy list of turns (ADK's .test.json) under the set's name: an edit wrote it back in
    the eval-set format, the legacy file (the only copy of what a faulty conversion would lose)
    gone. Refused as the CLI's `eval_set` refuses it, naming the file and `migrate`; the file
    untouched."""
    from agenteval.store import record_run
    from tests.result_builders import case, result

    path = _file(live, "legacy")
    text = json.dumps([{"query": "hi", "expected_tool_use": [], "reference": "echo: hi"}])
    path.write_text(text)
    (case_id,) = [c["eval_id"] for c in live.get(f"{SETS}/legacy").json()["eval_cases"]]
    got = live.get(f"{SETS}/legacy/eval-cases/{case_id}")
    assert got.status_code == 200  # read as the loader reads it
    record_run(live.agents_dir / "echo", [result([case("c0", {"m": 1.0})], "r1")])
    sid = _with_session(live, "hi")
    edits = [live.put(f"{SETS}/legacy/eval-cases/{case_id}", json=got.json()),
             live.delete(f"{SETS}/legacy/eval-cases/{case_id}"),
             live.post(f"{SETS}/legacy/add-session",
                       json={"eval_id": "new", "session_id": sid, "user_id": "u"}),
             live.post(f"{SETS}/legacy/from-run", json={"eval_id": "new", "run_id": "r1", "case_id": "c0"})]
    for r in edits:
        assert r.status_code == 400, r.text
        detail = r.json()["detail"]
        assert "legacy.evalset.json" in detail and "legacy test file" in detail, detail
        assert "agenteval migrate" in detail, detail
    assert path.read_text() == text
