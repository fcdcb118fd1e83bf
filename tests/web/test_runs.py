"""Runs over real HTTP: started in the background, followed by server-sent events, recorded in
the agent's history like a CLI run, paged, opened, exported, compared, charted; cancelled; a
crashed run is a RunFailed event and the server stays up; bad requests refused before running."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from agenteval.store import RunStore
from tests.web.api_support import Live

TRAJECTORY = {"tool_trajectory_avg_score": 1.0}


def _set_with_cases(live: Live, app: str = "echo", texts: tuple[str, ...] = ("roll a d6", "hello")) -> None:
    live.post(f"/apps/{app}/eval-sets/smoke")
    for i, text in enumerate(texts):
        sid = live.session(app)
        live.say(sid, text, app=app)
        r = live.post(f"/apps/{app}/eval-sets/smoke/add-session",
                      json={"eval_id": f"c{i}", "session_id": sid, "user_id": "u"})
        assert r.status_code == 201, r.text


def _run(live: Live, app: str = "echo", **body: Any) -> str:
    r = live.post(f"/apps/{app}/eval-sets/smoke/run", json={"criteria": TRAJECTORY, **body})
    assert r.status_code == 202, r.text
    return str(r.json()["run_id"])


def test_a_run_streams_its_events_and_is_recorded_like_a_cli_run(live: Live) -> None:
    _set_with_cases(live)
    run_id = _run(live)
    events = live.events(run_id)
    types = [e["type"] for e in events]
    assert types[0] == "RunStarted" and events[0]["total"] == 2 and events[0]["run_id"] == run_id
    assert sorted(types[1:-1]) == ["CaseFinished", "CaseFinished", "CaseStarted", "CaseStarted",
                                   "TurnDone", "TurnDone"]
    for i, e in enumerate(events):  # each case's one turn, between its start and its score
        if e["type"] == "TurnDone":
            assert (e["turn"], e["turns"]) == (1, 1)
            at = {x["type"]: k for k, x in enumerate(events) if x.get("eval_id") == e["eval_id"]}
            assert at["CaseStarted"] < i < at["CaseFinished"]
    finished = events[-1]
    assert finished["type"] == "RunFinished" and finished["passed"] == 2 and finished["failed"] == 0
    (result_id,) = finished["result_ids"]
    assert live.events(run_id) == events  # replayed whole to a late reader
    row = RunStore(live.agents_dir / "echo").resolve(result_id)
    assert row.run_group == run_id and row.cases_passed == 2
    assert RunStore(live.agents_dir / "echo").header(result_id).command == "web"  # type: ignore[union-attr]
    for ref in (run_id, result_id):  # the run id and the document id both name it
        view = live.get(f"/api/runs/{ref}").json()
        assert view["run_id"] == result_id and view["state"] == "finished" and view["status"] == "passed"
        assert view["counts"]["passed"] == 2 and view["cases"] == [] and view["cases_not_passed"] == 0
        assert view["criteria"][0] == "tool_trajectory_avg_score"
        assert view["header"]["command"] == "web" and view["header"]["agent"]["kind"] == "callable"
    assert live.get("/apps/echo/eval-results").json() == [result_id]
    doc = live.get(f"/apps/echo/eval-results/{result_id}").json()
    assert doc["eval_set_result_id"] == result_id and len(doc["eval_case_results"]) == 2
    assert live.post(f"/api/runs/{run_id}/cancel").status_code == 409


def test_cases_are_paged_filtered_and_opened_one_by_one(live: Live) -> None:
    _set_with_cases(live, texts=("roll a d6", "hello", "hi", "hey"))
    path = live.agents_dir / "echo" / "smoke.evalset.json"
    data = json.loads(path.read_text())
    data["eval_cases"][1]["conversation"][0]["final_response"]["parts"][0]["text"] = "something else"
    path.write_text(json.dumps(data))
    run_id = _run(live, criteria={"response_match_score": 0.9}, num_runs=2)
    result_id = live.events(run_id)[-1]["result_ids"][0]
    page = live.get(f"/api/runs/{result_id}/cases", params={"limit": 3})
    assert page.headers["x-total-count"] == "8" and len(page.json()) == 3
    failed = live.get(f"/api/runs/{result_id}/cases", params={"status": "failed"})
    assert failed.headers["x-total-count"] == "2"
    assert {(r["eval_id"], r["run_index"]) for r in failed.json()} == {("c1", 0), ("c1", 1)}
    metric = failed.json()[0]["metrics"][0]
    assert (metric["name"], metric["status"], metric["threshold"]) == ("response_match_score", "failed", 0.9)
    view = live.get(f"/api/runs/{result_id}").json()
    assert [c["eval_id"] for c in view["cases"]] == ["c1"] and view["cases_not_passed"] == 1
    assert view["cases"][0]["problems"][0].startswith("response_match_score: mean ")
    case = live.get(f"/api/runs/{result_id}/cases/c1", params={"run_index": 1}).json()
    assert case["run_index"] == 1 and case["runs"] == [0, 1] and case["verdict"] == "failed"
    inv = case["invocations"][0]
    assert inv["expected_response"] == "something else" and inv["actual_response"] == "echo: hello"
    assert case["result"]["trace"]["spans"][0]["kind"] == "case"
    assert live.get(f"/api/runs/{result_id}/cases/c1", params={"run_index": 5}).status_code == 404
    assert live.get(f"/api/runs/{result_id}/cases/nope").status_code == 404
    assert live.get(f"/api/runs/{result_id}/cases", params={"status": "bogus"}).status_code == 400


def test_runs_are_listed_filtered_charted_and_exported(live: Live) -> None:
    _set_with_cases(live, texts=("roll a d6",))
    first = live.events(_run(live))[-1]["result_ids"][0]
    both = {"response_match_score": 1.0, **TRAJECTORY}
    second = live.events(_run(live, criteria=both))[-1]["result_ids"][0]
    rows = live.get("/api/runs").json()
    assert [r["run_id"] for r in rows] == [second, first]
    assert rows[0]["app"] == "echo" and rows[0]["status"] == "passed" and rows[0]["eval_set_id"] == "smoke"
    assert len(live.get("/api/runs", params={"app": "echo", "eval_set": "smoke", "limit": 1}).json()) == 1
    assert live.get("/api/runs", params={"offset": 1}).json()[0]["run_id"] == first
    earlier = live.get("/api/runs", params={"before": rows[0]["created"]}).json()
    assert [r["run_id"] for r in earlier] == [first]
    assert live.get("/api/runs", params={"before": "abc"}).status_code == 400
    assert live.get("/api/runs", params={"status": "failed"}).json() == []
    assert live.get("/api/runs", params={"eval_set": "other"}).json() == []
    assert live.get("/api/runs", params={"app": "nope"}).status_code == 404
    trend = live.get("/api/trends", params={"app": "echo"}).json()
    assert [t["run_id"] for t in trend] == [first, second]
    assert trend[1]["pass_rate"] == 1.0 and set(trend[1]["criteria"]) == {"response_match_score",
                                                                        "tool_trajectory_avg_score"}
    export = live.get(f"/api/runs/{first}/export")
    assert export.headers["content-type"].startswith("text/html")
    assert export.headers["content-disposition"].startswith("attachment; filename=")
    assert "<html" in export.text and "script-src" not in export.headers["content-security-policy"]
    diff = live.get("/api/compare", params={"a": first, "b": second}).json()
    assert diff["baseline_id"] == first and diff["cases"][0]["change"] == "unchanged"
    assert diff["counts"]["unchanged"] == 1 and diff["has_regressions"] is False
    assert live.get("/api/compare", params={"a": first, "b": "nope"}).status_code == 404
    assert live.get("/api/compare", params={"a": first, "b": second, "margin": -1}).status_code == 400


def test_a_run_is_cancelled(live: Live) -> None:
    live.post("/apps/slow/eval-sets/smoke")
    path = live.agents_dir / "slow" / "smoke.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "smoke", "eval_cases": [{
        "eval_id": "c", "conversation": [{"user_content": {"parts": [{"text": "slow please"}]},
                                          "final_response": {"parts": [{"text": "done"}]}}]}]}))
    started = time.monotonic()
    run_id = _run(live, app="slow", criteria={"response_match_score": 0.5})
    assert live.get(f"/api/runs/{run_id}").json()["state"] == "running"
    r = live.post(f"/api/runs/{run_id}/cancel")
    assert r.status_code == 202
    events = live.events(run_id)
    assert events[-1] == {"type": "RunCancelled", "run_id": run_id}
    # Liveness, not speed: the agent sleeps 30 s, so a cancel that did not stop it takes 30 s or more;
    # 20 s leaves a loaded machine room where 5 s left little
    assert time.monotonic() - started < 20
    assert live.get(f"/api/runs/{run_id}").json()["state"] == "cancelled"
    assert live.post(f"/api/runs/{run_id}/cancel").status_code == 409
    assert RunStore(live.agents_dir / "slow").list_runs() == []  # nothing recorded
    assert live.post("/api/runs/nope/cancel").status_code == 404
    assert live.get("/api/runs/nope/events").status_code == 404


def test_a_run_that_crashes_is_a_failed_event_and_the_server_stays_up(
        live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    _set_with_cases(live, texts=("hello",))

    def broken_record(*args: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("agenteval.web.jobs.record", broken_record)
    run_id = _run(live)
    last = live.events(run_id)[-1]
    assert last["type"] == "RunFailed" and "OSError: disk full" in last["error"]
    assert live.get(f"/api/runs/{run_id}").json()["state"] == "failed"
    monkeypatch.undo()
    assert live.events(_run(live))[-1]["type"] == "RunFinished"


@pytest.mark.parametrize(("body", "status", "detail"), [
    ({"criteria": {"bogus_metric": 0.5}}, 400, "request body: criteria.bogus_metric: unknown criterion"),
    ({"criteria": {"response_match_score": 2.0}}, 400, "threshold 2.0 is outside [0.0, 1.0]"),
    ({"criteria": {"response_match_score": "0.8"}}, 400, "criteria.response_match_score"),
    ({"eval_ids": ["nope"]}, 400, "no case with eval_id 'nope'"),
    ({"eval_ids": []}, 400, "select at least one case"),
    ({"eval_ids": ["c0", "c0"]}, 400, "eval_cases: case 'c0' selected more than once"),
    ({"judge_model": "bogus:x", "criteria": {"final_response_match_v2": 0.5}}, 400,
     "--judge_model: unknown model"),
    ({"num_runs": 0}, 400, "body.num_runs"),
    ({"agent_model": "openai-compat:m@http://127.0.0.1:9/v1"}, 400, "agenteval Agent agents only"),
])
def test_bad_run_requests_are_refused_before_anything_runs(live: Live, body: dict[str, Any], status: int,
                                                           detail: str) -> None:
    _set_with_cases(live, texts=("hello",))
    r = live.post("/apps/echo/eval-sets/smoke/run", json=body)
    assert r.status_code == status and detail in r.json()["detail"], r.text
    assert live.get("/api/runs").json() == []
    assert live.post("/apps/echo/eval-sets/nope/run", json={}).status_code == 404
    assert live.post("/apps/broken/eval-sets/smoke/run", json={}).status_code in (400, 404)


def test_a_result_document_is_opened_as_an_uploaded_run(live: Live) -> None:
    _set_with_cases(live, texts=("hello",))
    result_id = live.events(_run(live))[-1]["result_ids"][0]
    doc = live.get(f"/apps/echo/eval-results/{result_id}").json()
    assert live.post("/api/results/open", content=json.dumps(doc)).status_code == 409
    doc["eval_set_result_id"] = "uploaded-1"
    r = live.post("/api/results/open", content=json.dumps(doc))
    assert r.status_code == 201 and r.json() == {"run_id": "uploaded-1"}
    assert live.get("/api/runs/uploaded-1").json()["app"] is None
    assert live.get("/api/runs/uploaded-1/cases").headers["x-total-count"] == "1"
    for bad, detail in ((b"[1]", "expected a result document"), (b"{", "malformed JSON"),
                        (b'{"eval_set_id": "s"}', "eval_set_result_id: field required"),
                        (b"[" * 200 + b"]" * 200, "nest")):
        r = live.post("/api/results/open", content=bad)
        assert r.status_code == 400 and detail in r.json()["detail"], r.text


def test_criteria_are_read_as_a_config_files_are(live: Live, server: Any) -> None:
    from tests.fake_server import chat

    _set_with_cases(live, texts=("roll a d6",))
    # a judge that answers (one at a port nothing listens on costs its retries' waits)
    server.respond = chat(lambda text: json.dumps({"verdict": "valid"}))
    run_id = _run(live, criteria={"tool_trajectory_avg_score": 1, "final_response_match_v2": 0.5},
                  num_samples=3, judge_model=f"openai-compat:j@{server.base_url}")
    live.events(run_id)
    config = live.get(f"/api/runs/{run_id}").json()["header"]["config"]["criteria"]
    assert config["tool_trajectory_avg_score"] == 1.0
    assert config["final_response_match_v2"]["judge_model_options"]["num_samples"] == 3


@pytest.mark.parametrize(("body", "explained"), [({}, True), ({"judge_rationales": "never"}, False)])
def test_judge_rationales_from_the_web_body_reach_the_judge(live: Live, server: Any,
                                                            body: dict[str, Any], explained: bool) -> None:
    # A judge without log-probabilities answers in written samples, each asked in the reply
    # schema: under "never" it has no rationale.
    from tests.fake_server import chat

    _set_with_cases(live, texts=("hello",))
    server.respond = chat(lambda text: json.dumps({"verdict": "invalid"}))
    run_id = _run(live, criteria={"final_response_match_v2": {"threshold": 0.5, "judge_model_options": {
        "judge_model": f"openai-compat:m@{server.base_url}", "num_samples": 1}}}, **body)
    assert live.events(run_id)[-1]["type"] == "RunFinished"
    schemas = [json.dumps(b.get("response_format")) for b in server.received]
    assert schemas and all(("rationale" in s) == explained for s in schemas)
    bad = live.post("/apps/echo/eval-sets/smoke/run", json={"judge_rationales": "maybe"})
    assert bad.status_code == 400 and "judge_rationales" in bad.text


def test_escalation_started_from_the_web_reaches_the_judge(live: Live, server: Any) -> None:
    # A judge that is never sure (probabilities at 0.5) on the first endpoint escalates every
    # verdict to the endpoint named by the web body's escalate_judge_model.
    from tests.fake_server import FakeServer, chat

    _set_with_cases(live, texts=("hello",))
    sure = FakeServer(respond=chat(lambda text: "Verdict: valid")).start()
    try:
        first, second = f"openai-compat:m@{server.base_url}", f"openai-compat:m@{sure.base_url}"
        votes = iter(["Verdict: valid", "Verdict: invalid"] * 10)  # split: never confident
        server.respond = chat(lambda text: next(votes))
        criteria = {"final_response_match_v2": {"threshold": 0.5, "judge_model_options": {
            "judge_model": first, "num_samples": 2, "min_confidence": 0.9}}}
        r = live.post("/apps/echo/eval-sets/smoke/run",
                      json={"criteria": criteria, "escalate_judge_model": second})
        assert r.status_code == 202, r.text
        run_id = r.json()["run_id"]
        assert live.events(run_id)[-1]["type"] == "RunFinished"
        header = live.get(f"/api/runs/{run_id}").json()["header"]
        assert second in header["models"]["judge"]
        assert sure.received  # the uncertain verdict was asked again of the escalation judge
    finally:
        sure.close()


def test_a_finished_run_cannot_be_resumed_and_an_unknown_one_is_named(live: Live) -> None:
    _set_with_cases(live)
    run_id = _run(live)
    assert live.events(run_id)[-1]["type"] == "RunFinished"
    again = live.post("/apps/echo/eval-sets/smoke/run", json={"resume": run_id})
    assert again.status_code == 409 and "already finished" in again.text
    unknown = live.post("/apps/echo/eval-sets/smoke/run", json={"resume": "nope"})
    assert unknown.status_code in (400, 422) and "nope" in unknown.text
    assert live.get("/apps/echo/eval-sets/smoke/unfinished").json() == []


def test_a_case_whose_id_holds_a_slash_is_opened(live: Live) -> None:
    # The page asks for it encoded (greet%2Fen); the server sees it decoded into two segments.
    live.post("/apps/echo/eval-sets/smoke")
    sid = live.session()
    live.say(sid, "hello")
    r = live.post("/apps/echo/eval-sets/smoke/add-session",
                  json={"eval_id": "greet/en", "session_id": sid, "user_id": "u"})
    assert r.status_code == 201, r.text
    run_id = _run(live)
    live.events(run_id)
    case = live.get(f"/api/runs/{run_id}/cases/greet%2Fen")
    assert case.status_code == 200, case.text
    assert case.json()["eval_id"] == "greet/en"


def test_a_run_not_found_names_the_history_that_could_not_be_read(live: Live) -> None:
    # One broken store does not hide the others' runs, but a run asked for by id must not be
    # "not in the run history" without saying that a history could not be read.
    _set_with_cases(live, texts=("hello",))
    run_id = live.events(_run(live))[-1]["result_ids"][0]  # (not the job this server still knows)
    store = live.agents_dir / "echo" / ".agenteval"
    for extra in store.glob("history.sqlite-*"):
        extra.unlink()
    (store / "history.sqlite").write_bytes(b"not a database" * 100)
    r = live.get(f"/api/runs/{run_id}")
    assert r.status_code == 404
    detail = r.json()["detail"]
    assert detail.startswith(f"no run {run_id!r} in the run history")
    assert str(store / "history.sqlite") in detail and "cannot use the run database" in detail


def test_the_run_list_names_a_history_that_could_not_be_read(live: Live) -> None:
    # Left out so the other stores' runs are listed, and named so the page does not say "No runs yet".
    _set_with_cases(live, texts=("hello",))
    live.events(_run(live))
    store = live.agents_dir / "echo" / ".agenteval"
    assert "x-unreadable-stores" not in live.get("/api/runs").headers
    for extra in store.glob("history.sqlite-*"):
        extra.unlink()
    (store / "history.sqlite").write_bytes(b"not a database" * 100)
    r = live.get("/api/runs")
    assert r.status_code == 200 and r.json() == []
    (unreadable,) = json.loads(r.headers["x-unreadable-stores"])
    assert unreadable.startswith(f"{store / 'history.sqlite'}: cannot use the run database")
    assert live.get("/api/runs", params={"app": "echo"}).status_code == 400  # asked for by its app


def test_a_run_whose_document_id_holds_a_slash_is_opened(live: Live) -> None:
    # An eval set id "team/smoke" makes a document id "echo_team/smoke_<time>" (as a CLI run
    # records it); the page asks for it encoded, and the server sees the id decoded.
    _set_with_cases(live, texts=("hello",))
    result_id = live.events(_run(live))[-1]["result_ids"][0]
    doc = live.get(f"/apps/echo/eval-results/{result_id}").json()
    doc["eval_set_result_id"] = "echo_team/smoke_1"
    assert live.post("/api/results/open", content=json.dumps(doc)).status_code == 201
    run = "/api/runs/echo_team%2Fsmoke_1"
    assert live.get(run).json()["run_id"] == "echo_team/smoke_1"
    assert live.get(f"{run}/cases").headers["x-total-count"] == "1"
    assert live.get(f"{run}/cases/c0").json()["eval_id"] == "c0"
    assert live.get(f"{run}/search").json()["total"] == 1
    for suffix in ("groups", "reviews", "export"):
        assert live.get(f"{run}/{suffix}").status_code == 200, suffix
    review = {"eval_id": "c0", "run_index": 0, "target": "", "agreement": "agree", "comment": "ok"}
    assert live.put(f"{run}/reviews", json=review).status_code == 200
    assert live.delete(f"{run}/reviews", params={"eval_id": "c0", "run_index": 0}).status_code == 200
    assert live.get("/api/runs/no/such/run").status_code == 404


def test_adks_result_route_reads_a_document_id_holding_a_slash(live: Live) -> None:
    _set_with_cases(live, texts=("hello",))
    path = live.agents_dir / "echo" / "smoke.evalset.json"
    data = json.loads(path.read_text())
    data["eval_set_id"] = "team/smoke"
    path.write_text(json.dumps(data))
    result_id = live.events(_run(live))[-1]["result_ids"][0]
    assert result_id.startswith("echo_team/smoke_")
    r = live.get(f"/apps/echo/eval-results/{result_id.replace('/', '%2F')}")
    assert r.status_code == 200, r.text
    assert r.json()["eval_set_result_id"] == result_id


@pytest.mark.parametrize("result_id", ["", " ", "\t", "live", "latest", "previous"])
def test_a_document_whose_id_cannot_name_a_run_is_refused(live: Live, result_id: str) -> None:
    # "" and blanks cannot be asked for (the page's address drops them), `live` is the history's
    # stream, `latest` and `previous` name other runs (as `agenteval runs show` reads them).
    _set_with_cases(live, texts=("hello",))
    result_id_run = live.events(_run(live))[-1]["result_ids"][0]
    doc = live.get(f"/apps/echo/eval-results/{result_id_run}").json()
    doc["eval_set_result_id"] = result_id
    r = live.post("/api/results/open", content=json.dumps(doc))
    assert r.status_code == 400, r.text
    assert r.json()["detail"].startswith("uploaded document: eval_set_result_id: "), r.text
    assert len(live.get("/api/runs").json()) == 1  # nothing recorded


def test_an_agent_model_the_agent_cannot_take_names_the_forms_field(live: Live) -> None:
    _set_with_cases(live, texts=("hello",))
    body = {"agent_model": "openai-compat:m@http://127.0.0.1:9/v1"}
    detail = live.post("/apps/echo/eval-sets/smoke/run", json=body).json()["detail"]
    assert detail.startswith("request body: agent_model: ") and "--agent_model" not in detail, detail
    detail = live.post("/apps/echo/users/u/sessions", json={"model": body["agent_model"]}).json()["detail"]
    assert detail.startswith("model: ") and "--agent_model" not in detail, detail


def test_a_case_whose_agent_failed_says_so_among_why_cases_failed(live: Live) -> None:
    _set_with_cases(live, texts=("hello",))
    path = live.agents_dir / "echo" / "smoke.evalset.json"
    doc = json.loads(path.read_text())
    doc["eval_cases"][0]["conversation"][0]["user_content"]["parts"][0]["text"] = "boom"
    path.write_text(json.dumps(doc))
    run_id = _run(live)
    live.events(run_id)
    failing = {c["eval_id"]: c["problems"] for c in live.get(f"/api/runs/{run_id}").json()["cases"]}
    # the agent's error itself, as `agenteval runs show` gives it (it was [], then "the agent failed")
    assert failing["c0"], failing
    assert failing["c0"][0].startswith("inference failed: RuntimeError: the agent blew up"), failing


def test_a_recorded_run_is_deleted_as_the_cli_deletes_it_and_one_being_written_is_refused(live: Live) -> None:
    from agenteval.store.journal import Journal
    from agenteval.store.reviews import Review, ReviewStore

    _set_with_cases(live)
    events = live.events(_run(live))
    (result_id,) = events[-1]["result_ids"]
    store = live.agents_dir / "echo"
    row = RunStore(store).resolve(result_id)
    ReviewStore(store).save(Review(result_id, "c0", 0, "", "agree"))
    owner = Journal(store)
    owner.claim(str(row.run_group))  # a resume of it under way, say
    refused = live.delete(f"/api/runs/{result_id}")
    assert refused.status_code == 409, refused.text
    assert "is being written, not deleted" in refused.json()["detail"] and row.result_path.is_file()
    owner.release(str(row.run_group))
    done = live.delete(f"/api/runs/{result_id}")
    assert done.status_code == 200, done.text
    assert done.json() == {"deleted": result_id, "reviews": 1, "kept": []}
    assert not row.result_path.exists() and RunStore(store).list_runs() == []
    assert live.get(f"/api/runs/{result_id}").status_code == 404
    assert live.delete(f"/api/runs/{result_id}").status_code == 404
    assert [r["run_id"] for r in live.get("/api/runs").json()] == []


def test_the_run_list_counts_cases_not_evaluated_apart_as_runs_list_does(live: Live) -> None:
    from agenteval.store import save_result
    from tests.result_builders import case, result

    store = live.agents_dir / "echo"
    ungated = result([case("ok", {"m": 1.0}), case("ungated", {})], result_id="ungated")
    failed = result([case("ok", {"m": 1.0}), case("ungated", {}), case("low", {"m": 0.2})],
                    result_id="failed", created=1_700_000_100.0)
    for doc in (ungated, failed):
        RunStore(store).record(doc, save_result(store, doc))
    rows = {r["run_id"]: r for r in live.get("/api/runs").json()}
    # A run whose only case not passed was not evaluated read "failed", 1 of its 2 cases failed
    assert {k: (r["status"], r["cases_failed"], r["cases_not_evaluated"]) for k, r in rows.items()} == \
        {"ungated": ("not_evaluated", 0, 1), "failed": ("failed", 1, 1)}
    listed = {r.run_id: (r.cases_failed, r.cases_not_evaluated) for r in RunStore(store).list_runs()}
    assert listed == {"ungated": (0, 1), "failed": (1, 1)}  # what `agenteval runs` shows
    for status, run_ids in (("failed", ["failed"]), ("not_evaluated", ["ungated"])):
        assert [r["run_id"] for r in live.get("/api/runs", params={"status": status}).json()] == run_ids
    assert live.get("/api/runs/ungated").json()["status"] == "not_evaluated"


def test_the_run_page_says_why_cases_did_not_pass_as_runs_show_does(live: Live) -> None:
    from agenteval.cli.history import _whys
    from agenteval.schema import MetricReason
    from agenteval.store import save_result
    from agenteval.verdicts import outcomes
    from tests.result_builders import case, result

    low = case("low", {"m": 0.2})
    low.reasons = [MetricReason(metric_name="m", reason="ROUGE-1 F 0.2 < threshold 0.5 (precision 0.2)")]
    doc = result([case("crashed", {}, error="agent exploded"), case("ok", {"m": 1.0}), low], result_id="why")
    store = RunStore(live.agents_dir / "echo")
    path = save_result(store.root, doc)
    store.record(doc, path)
    got = {c["eval_id"]: c["problems"] for c in live.get("/api/runs/why").json()["cases"]}
    # the run's own words (they were the database's: "the agent failed (its error is kept with
    # the case's runs)", "m: score 0.2 < threshold 0.5")
    assert got == {"crashed": ["inference failed: agent exploded"],
                   "low": ["m: ROUGE-1 F 0.2 < threshold 0.5 (precision 0.2)"]}
    row = store.resolve("why")
    shown = outcomes(store.summary("why", not_passed_only=True))
    assert dict(zip([c.eval_id for c in shown], _whys(store, row, shown), strict=True)) == got
    path.unlink()  # the document gone: the database's words, as runs show gives them
    assert live.get("/api/runs/why").json()["cases"][0]["problems"] == _whys(store, row, shown)[0]


def test_the_case_page_says_why_with_the_judges_certificate_as_runs_show_does(live: Live) -> None:
    """A judged case's reasons on its page lacked the certificate line `runs show` and the
    Markdown report give after them ("judge uncalibrated: ..."); a passed case's page lists what
    counted against it, without certificates (it did not fail on them)."""
    from agenteval.cli.history import _whys
    from agenteval.schema import JudgeCertificateNote
    from agenteval.store import save_result
    from agenteval.verdicts import outcomes
    from tests.result_builders import case, judge, result

    def judged(eval_id: str, score: float, status: str, text: str) -> Any:
        out = case(eval_id, {"final_response_match_v2": score},
                   judge_records=[judge("final_response_match_v2", score, "said " + eval_id, verdict="x")])
        out.judge_certificates = [JudgeCertificateNote(metric_name="final_response_match_v2",
                                                       status=status, text=text)]  # type: ignore[arg-type]
        return out

    doc = result([judged("bad", 0.0, "uncalibrated", "uncalibrated: no certificate for this judge"),
                  judged("good", 1.0, "certified", "certified: κ 0.70")], result_id="cert")
    store = RunStore(live.agents_dir / "echo")
    store.record(doc, save_result(store.root, doc))
    shown = outcomes(store.summary("cert", not_passed_only=True))
    (runs_show,) = _whys(store, store.resolve("cert"), shown)
    page = live.get("/api/runs/cert/cases/bad").json()["problems"]
    assert page == runs_show
    assert page[-1] == "final_response_match_v2: judge uncalibrated: no certificate for this judge"
    assert live.get("/api/runs/cert/cases/good").json()["problems"] == []


def test_a_review_saved_while_its_run_is_deleted_is_refused_not_kept(live: Live, monkeypatch: Any) -> None:
    """The run deleted (`runs delete`, another tab's Delete run) between the route's reading of
    it and the review's saving: the review was kept without its run."""
    from agenteval.store import record_run
    from agenteval.store.deletion import delete_run
    from agenteval.store.reviews import ReviewStore
    from tests.result_builders import case, result

    store = live.agents_dir / "echo"
    record_run(store, [result([case("c0", {"m": 1.0})], "doomed")])
    check = RunStore.check

    def deleted_meanwhile(self: RunStore) -> None:
        delete_run(store, "doomed")
        check(self)

    monkeypatch.setattr(RunStore, "check", deleted_meanwhile)
    r = live.put("/api/runs/doomed/reviews", json={"eval_id": "c0", "run_index": 0, "target": "",
                                                   "agreement": "agree"})
    assert r.status_code == 404, r.text
    assert r.json()["detail"] == "run 'doomed' was deleted: the review was not saved"
    assert ReviewStore(store).reviews() == []
