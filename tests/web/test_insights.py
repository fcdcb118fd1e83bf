"""Looking into runs over HTTP (issue 27): search, failure groups, flaky cases, the run matrix
and human reviews, on hand-made runs recorded in an agent's history."""

from __future__ import annotations

import pytest

from agenteval.store import record_run
from tests.helpers import call
from tests.result_builders import case, result
from tests.web.api_support import Live

pytest.importorskip("fastapi")

T = "tool_trajectory_avg_score"
J = "final_response_match_v2"  # a judged criterion: only they are reviewed
WANT = [call("lookup", q="paris")]


def _record(live: Live) -> None:
    runs = [
        result([case("a", {T: 1.0}, response="Paris", calls=WANT, expected_calls=WANT, duration=1.0),
                case("b", {T: 1.0}, response="Oslo", calls=WANT, expected_calls=WANT, duration=3.0)],
               "r1", created=1_700_000_000.0),
        result([case("a", {T: 0.0}, response="Rome", calls=[call("lookup", q="rome")], expected_calls=WANT,
                     duration=2.0),
                case("b", {T: 1.0}, response="Oslo", calls=WANT, expected_calls=WANT, duration=3.0)],
               "r2", created=1_700_000_100.0),
    ]
    for doc in runs:
        record_run(live.agents_dir / "echo", [doc])


def test_search_filters_sorts_and_pages_a_runs_cases(live: Live) -> None:
    _record(live)
    got = live.get("/api/runs/r2/search", params={"text": "rome"}).json()
    assert got["total"] == 1 and got["cases"][0]["eval_id"] == "a"
    assert got["cases"][0]["failing"] == [T] and got["cases"][0]["tools"] == ["lookup"]
    assert got["criteria"] == [T] and got["arguments"] == ["lookup.q"]
    by_latency = live.get("/api/runs/r2/search", params={"sort": "latency", "descending": "true"}).json()
    assert [c["eval_id"] for c in by_latency["cases"]] == ["b", "a"]
    assert live.get("/api/runs/r2/search", params={"argument": "lookup.q=paris"}).json()["total"] == 1
    page = live.get("/api/runs/r2/search", params={"limit": 1, "offset": 1}).json()
    assert page["total"] == 2 and [c["eval_id"] for c in page["cases"]] == ["b"]
    assert live.get("/api/runs/r2/search", params={"sort": "nope"}).status_code == 400
    assert live.get("/api/runs/nope/search").status_code == 404


def test_failure_groups_flaky_cases_and_the_matrix(live: Live) -> None:
    _record(live)
    assert live.get("/api/runs/r2/groups").json() == [{"reason": "`lookup.q` differs", "eval_ids": ["a"]}]
    assert live.get("/api/runs/r1/groups").json() == []
    (flaky,) = live.get("/api/flaky", params={"app": "echo"}).json()
    assert (flaky["eval_id"], flaky["runs"], flaky["passed"]) == ("a", 2, 1)
    m = live.get("/api/matrix", params={"runs": ["r1", "r2"]}).json()
    assert [c["run_id"] for c in m["columns"]] == ["r1", "r2"] and m["total"] == 2
    a = m["rows"][0]
    assert a["eval_id"] == "a" and a["changed"] and a["cells"][1]["diff"][:2] == ["- Paris", "+ Rome"]
    assert a["cells"][0]["status"] == "passed" and a["cells"][1]["status"] == "failed"
    changed = live.get("/api/matrix", params={"runs": ["r1", "r2"], "changed_only": "true"}).json()
    assert [r["eval_id"] for r in changed["rows"]] == ["a"] and changed["total"] == 1
    only_b = live.get("/api/matrix", params={"runs": ["r1", "r2"], "eval_id": ["b"]}).json()
    assert [r["eval_id"] for r in only_b["rows"]] == ["b"] and not only_b["rows"][0]["changed"]
    assert live.get("/api/matrix", params={"runs": ["r1", "zz"]}).status_code == 404
    assert live.get("/api/matrix").status_code == 400


def test_the_matrix_shows_each_repeat_of_a_repeated_run(live: Live) -> None:
    _record(live)
    answers = {"a": ("Paris", "Lyon"), "b": ("Oslo", "Oslo")}
    repeats = [case(e, {T: 1.0}, response=answer, run_index=k, calls=WANT, expected_calls=WANT)
               for e, pair in answers.items() for k, answer in enumerate(pair)]
    record_run(live.agents_dir / "echo", [result(repeats, "r3", created=1_700_000_200.0)])
    m = live.get("/api/matrix", params={"runs": ["r1", "r3"]}).json()
    assert [(c["run_id"], c["run_index"], c["run_indices"]) for c in m["columns"]] == [
        ("r1", 0, 1), ("r3", 0, 2), ("r3", 1, 2)]
    a = m["rows"][0]
    assert [c["changed"] for c in a["cells"]] == [False, False, True] and a["cells"][2]["answer"] == ["Lyon"]
    changed = live.get("/api/matrix", params={"runs": ["r1", "r3"], "changed_only": "true"}).json()
    assert [r["eval_id"] for r in changed["rows"]] == ["a"]
    one = live.get("/api/matrix", params={"runs": ["r1", "r3"], "run_index": 1}).json()
    assert [(c["run_id"], c["run_index"]) for c in one["columns"]] == [("r1", 0), ("r3", 1)]


def test_the_matrix_reads_its_runs_a_case_at_a_time(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    from agenteval.reporting.matrix import run_matrix
    from agenteval.store import RunStore, load_result
    from agenteval.web import history

    _record(live)
    store = RunStore(live.agents_dir / "echo")
    whole = run_matrix([load_result(store.resolve(r).result_path) for r in ("r1", "r2")])
    monkeypatch.setattr(history, "load_result", lambda path: pytest.fail("a run's document was loaded whole"))
    m = live.get("/api/matrix", params={"runs": ["r1", "r2"]}).json()
    got = [(r["eval_id"], [(c["status"], c["answer"], c["calls"], c["changed"], c["diff"])
                           for c in r["cells"]]) for r in m["rows"]]
    assert got == [(r.eval_id, [(c.status.name.lower(), c.answer, c.calls, c.changed, c.diff)
                                for c in r.cells if c is not None]) for r in whole]


def test_a_runs_html_export_reads_it_a_case_at_a_time(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    from agenteval.reporting import render_report
    from agenteval.store import RunStore, load_result
    from agenteval.web import history

    _record(live)
    whole = render_report("html", [load_result(RunStore(live.agents_dir / "echo").resolve("r2").result_path)])
    monkeypatch.setattr(history, "load_result", lambda path: pytest.fail("a run's document was loaded whole"))
    assert live.get("/api/runs/r2/export").text == whole


def test_reviews_are_stored_with_the_run_replaced_listed_and_deleted(live: Live) -> None:
    _record(live)
    record_run(live.agents_dir / "echo", [result([case("a", {J: 0.0}), case("b", {J: 1.0})], "r6")])
    r = live.put("/api/runs/r6/reviews", json={"eval_id": "a", "target": J, "agreement": "disagree",
                                               "comment": "the judge was wrong"})
    assert r.status_code == 200, r.text
    assert r.json()["run_id"] == "r6" and r.json()["agreement"] == "disagree"
    live.put("/api/runs/r6/reviews", json={"eval_id": "a", "target": J, "agreement": "agree"})
    live.put("/api/runs/r6/reviews", json={"eval_id": "b", "agreement": "agree", "comment": "ok"})
    reviews = live.get("/api/runs/r6/reviews").json()
    got = [(x["eval_id"], x["target"], x["agreement"]) for x in reviews]
    assert got == [("a", J, "agree"), ("b", "", "agree")]
    assert len(live.get("/api/runs/r6/reviews", params={"eval_id": "b"}).json()) == 1
    assert live.get("/api/runs/r1/reviews").json() == []
    bad = [({"eval_id": "zz", "agreement": "agree"}, 404),
           ({"eval_id": "a", "target": "nope", "agreement": "agree"}, 404),
           ({"eval_id": "a", "agreement": "maybe"}, 400),
           ({"eval_id": "a", "agreement": "agree", "x": 1}, 400),
           ({"eval_id": "a", "run_index": 3, "agreement": "agree"}, 404),
           ({"eval_id": "a", "target": f"{J}@1", "agreement": "agree"}, 404),  # one turn only
           ({"eval_id": "a", "target": f"{J}@0/r9", "agreement": "agree"}, 404),  # no such rubric
           ({"eval_id": "a", "target": f"{J}@x", "agreement": "agree"}, 400)]
    turn = live.put("/api/runs/r6/reviews", json={"eval_id": "a", "target": f"{J}@0", "agreement": "agree"})
    assert turn.status_code == 200 and turn.json()["target"] == f"{J}@0"
    assert live.delete("/api/runs/r6/reviews", params={"eval_id": "a", "target": f"{J}@0"}).status_code == 200
    for body, code in bad:
        assert live.put("/api/runs/r6/reviews", json=body).status_code == code, body
    assert live.delete("/api/runs/r6/reviews", params={"eval_id": "b"}).status_code == 200
    assert live.delete("/api/runs/r6/reviews", params={"eval_id": "b"}).status_code == 404
    assert len(live.get("/api/runs/r6/reviews").json()) == 1


def test_only_a_judged_criterion_that_was_judged_is_reviewed(live: Live) -> None:
    """A criterion no judge decides is refused (400, naming it), as is a judged one that was
    not evaluated (no judge model: nothing was judged); the case page offers neither."""
    record_run(live.agents_dir / "echo", [result([
        case("a", {T: 1.0, J: 1.0}, response="Paris", calls=WANT, expected_calls=WANT),
        case("n", {T: 1.0, J: None}, response="Paris", calls=WANT, expected_calls=WANT)], "r5")])
    assert live.put("/api/runs/r5/reviews", json={"eval_id": "a", "target": J, "agreement": "agree"}
                    ).status_code == 200
    for eval_id, target, said in (("a", T, "no judge decides"), ("a", f"{T}@0", "no judge decides"),
                                  ("n", J, "not evaluated")):
        body = {"eval_id": eval_id, "target": target, "agreement": "agree"}
        r = live.put("/api/runs/r5/reviews", json=body)
        assert r.status_code == 400, r.text
        assert said in r.json()["detail"] and target.split("@")[0] in r.json()["detail"], r.text
    assert live.put("/api/runs/r5/reviews", json={"eval_id": "n", "agreement": "agree"}).status_code == 200
    assert live.get("/api/runs/r5/cases/a").json()["reviewable"] == [J]
    assert live.get("/api/runs/r5/cases/n").json()["reviewable"] == []


def test_the_tools_an_agent_declares(live: Live) -> None:
    assert live.get("/apps/echo/tools").json() == []  # a plain callable declares nothing
    (roll,) = live.get("/apps/dice/tools").json()
    assert roll["name"] == "roll_die" and roll["agent"] == "dice"
    assert [(p["name"], p["type"], p["required"]) for p in roll["params"]] == [("sides", "integer", True)]
    assert live.get("/apps/nope/tools").status_code == 404


def test_a_matrix_cell_of_a_case_run_the_agent_failed_gives_its_error(live: Live) -> None:
    _record(live)
    record_run(live.agents_dir / "echo", [result([case("a", {}, error="RuntimeError: <b>boom</b>")], "r4",
                                                 created=1_700_000_300.0)])
    m = live.get("/api/matrix", params={"runs": ["r1", "r4"]}).json()
    cells = m["rows"][0]["cells"]
    assert cells[0]["error"] is None and cells[1]["error"] == "RuntimeError: <b>boom</b>"
