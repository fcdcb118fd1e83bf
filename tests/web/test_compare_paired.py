"""`/api/compare/paired`: the web's paired comparison is `verdicts.paired`'s, computed by the
server from the history's database (the page only shows it)."""

from __future__ import annotations

from agenteval.schema import EvalSetResult
from agenteval.store import RunStore, record_run
from agenteval.verdicts.paired import compare_paired
from tests.result_builders import case, result
from tests.web.api_support import Live


def _runs(result_id: str, failing: set[tuple[str, int]], created: float) -> EvalSetResult:
    return result([case(f"c{i}", {"tool_trajectory_avg_score": 0.0 if (f"c{i}", j) in failing else 1.0},
                        run_index=j) for i in range(10) for j in range(4)],
                  result_id=result_id, created=created)


def test_paired_route_returns_what_compare_computes(live: Live) -> None:
    root = live.agents_dir / "echo"
    base = _runs("base", set(), 1.0)
    worse = _runs("worse", {(f"c{i}", j) for i in range(6) for j in range(4)}, 2.0)
    record_run(root, [base, worse])
    view = live.get("/api/compare/paired", params={"a": "base", "b": "worse"}).json()
    store = RunStore(root)
    want = compare_paired(store.summary("base"), store.summary("worse"), runs_a=store.case_runs("base"),
                          runs_b=store.case_runs("worse"))
    assert view["decision"] == want.decision() and view["gate_failed"] is True
    overall = view["measures"][0]
    assert overall["name"] == "overall" and overall["significant"] == "regression"
    assert (overall["a_only"], overall["b_only"], overall["pairs"]) == (24, 0, 40)
    assert overall["p_value"] == want.measures[0].p_value
    assert overall["pass_ci"] == list(want.measures[0].pass_ci)  # type: ignore[arg-type]
    changes = {c["eval_id"]: c["change"] for c in view["cases"]}
    assert changes["c0"] == "REGRESSED" and changes["c9"] == "UNCHANGED"
    assert view["counts"]["REGRESSED"] == 6 and view["k"] == 4
    assert view["pass_k_a"] == [1.0, 1.0] and view["pass_k_b"] == [0.4, 0.4]
    c0 = next(c for c in view["cases"] if c["eval_id"] == "c0")
    assert c0["pass_k_a"] == [1.0, 1.0] and c0["pass_k_b"] == [0.0, 0.0]
    same = live.get("/api/compare/paired", params={"a": "base", "b": "base"}).json()
    assert same["gate_failed"] is False and same["decision"].startswith("NO SIGNIFICANT CHANGE")
    assert live.get("/api/compare/paired", params={"a": "base", "b": "nope"}).status_code == 404
    assert live.get("/api/compare/paired", params={"a": "base", "b": "worse", "alpha": 1}).status_code == 400


def test_paired_route_says_why_cases_are_inconclusive_and_which_criteria_differ(live: Live) -> None:
    """What `agenteval compare` says besides its tables: why cases are INCONCLUSIVE and what would
    decide them, and that the runs' criteria differ (a threshold lowered in B judges the same
    scores against a lower bar); the web showed neither."""
    from agenteval.reporting.paired import config_differences, inconclusive_line
    from agenteval.schema.run import RunSpec

    root = live.agents_dir / "echo"
    base = _runs("base", set(), 1.0)
    flaky = _runs("flaky", {("c0", 0), ("c0", 1)}, 2.0)  # 4/4 → 2/4: too few runs to tell
    configs = {"base": {"criteria": {"tool_trajectory_avg_score": 1.0}},
               "flaky": {"criteria": {"tool_trajectory_avg_score": {"threshold": 0.5}}}}
    for doc in (base, flaky):
        run_id = doc.eval_set_result_id
        doc.run = RunSpec(run_id=run_id, command="eval", config=configs[run_id])
    record_run(root, [base, flaky])
    view = live.get("/api/compare/paired", params={"a": "base", "b": "flaky"}).json()
    store = RunStore(root)
    want = compare_paired(store.summary("base"), store.summary("flaky"), runs_a=store.case_runs("base"),
                          runs_b=store.case_runs("flaky"))
    assert view["counts"]["INCONCLUSIVE"] == 1
    assert view["inconclusive"] == inconclusive_line(want) and "1 INCONCLUSIVE" in view["inconclusive"]
    assert view["criteria_differ"] == config_differences(configs["base"], configs["flaky"]) == [
        "tool_trajectory_avg_score: threshold 1 → 0.5"]
    same = live.get("/api/compare/paired", params={"a": "base", "b": "base"}).json()
    assert same["inconclusive"] is None and same["criteria_differ"] == []
