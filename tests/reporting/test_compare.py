import io
import random
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console

from agenteval.reporting.compare import (
    CaseChanges,
    Change,
    Comparison,
    ComparisonRows,
    compare,
    comparison_markdown,
    comparison_table,
)
from agenteval.schema import EvalCaseResult, EvalSetResult, EvalStatus
from tests.result_builders import case, result


def _cases(scores: dict[str, dict[str, float | None]]) -> list[EvalCaseResult]:
    return [case(eid, s) for eid, s in scores.items()]


BASE = {"same": {"m": 0.9}, "drop": {"m": 0.9}, "tiny": {"m": 0.9}, "rise": {"m": 0.6},
        "fails": {"m": 0.8}, "fixed": {"m": 0.1}, "gone": {"m": 1.0}}
CAND = {"same": {"m": 0.9}, "drop": {"m": 0.7}, "tiny": {"m": 0.88}, "rise": {"m": 0.9},
        "fails": {"m": 0.2}, "fixed": {"m": 0.7}, "new": {"m": 1.0}}


def test_changes_per_case_and_criterion() -> None:
    c = compare(result(_cases(BASE)), result(_cases(CAND), result_id="s_2"), margin=0.05)
    changes = {d.eval_id: d.change for d in c.cases}
    assert changes == {"same": Change.UNCHANGED, "drop": Change.REGRESSED, "tiny": Change.UNCHANGED,
                       "rise": Change.IMPROVED, "fails": Change.NEWLY_FAILED,
                       "fixed": Change.NEWLY_PASSED, "new": Change.ADDED, "gone": Change.REMOVED}
    assert {d.eval_id for d in c.regressions} == {"drop", "fails"}
    assert c.has_regressions and c.counts()[Change.UNCHANGED] == 2
    drop = next(d for d in c.cases if d.eval_id == "drop").criteria[0]
    assert drop.change == Change.REGRESSED and drop.delta == pytest.approx(-0.2)
    assert drop.significant is None  # single runs: no CIs


def test_margin_decides_regressions() -> None:
    a, b = result(_cases({"x": {"m": 0.9}})), result(_cases({"x": {"m": 0.7}}))
    assert compare(a, b, 0.0).has_regressions
    assert not compare(a, b, 0.25).has_regressions
    assert not compare(a, a, 0.0).has_regressions
    with pytest.raises(ValueError):
        compare(a, b, -0.1)


def test_criterion_regression_inside_a_failing_case() -> None:
    a = result(_cases({"x": {"m": 0.9, "n": 0.1}}))
    b = result(_cases({"x": {"m": 0.3, "n": 0.1}}))
    (d,) = compare(a, b).cases
    assert d.change == Change.REGRESSED
    assert [(c.metric_name, c.change) for c in d.criteria] == [("m", Change.NEWLY_FAILED),
                                                               ("n", Change.UNCHANGED)]


def test_added_and_removed_criteria() -> None:
    a = result(_cases({"x": {"m": 0.9}}))
    b = result(_cases({"x": {"m": 0.9, "n": 0.9}}))
    (d,) = compare(a, b).cases
    assert [(c.metric_name, c.change) for c in d.criteria] == [("m", Change.UNCHANGED), ("n", Change.ADDED)]
    (d,) = compare(b, a).cases
    assert d.criteria[1].change == Change.REMOVED and not compare(b, a).has_regressions


def test_repeated_runs_use_means_and_flag_significance() -> None:
    def runs(eid: str, scores: list[float]) -> list[EvalCaseResult]:
        return [case(eid, {"m": s}, run_index=i) for i, s in enumerate(scores)]

    a = result(runs("x", [0.9, 0.92, 0.94]) + runs("y", [0.2, 0.9, 0.6]))
    b = result(runs("x", [0.7, 0.72, 0.74]) + runs("y", [0.1, 0.9, 0.5]))
    c = compare(a, b, margin=0.01)
    x, y = c.cases
    assert x.change == Change.REGRESSED and x.criteria[0].delta == pytest.approx(-0.2)
    assert x.criteria[0].significant is True
    assert y.criteria[0].change == Change.REGRESSED and y.criteria[0].significant is False


def test_renderings() -> None:
    c = compare(result(_cases(BASE)), result(_cases(CAND), result_id="s_2"), margin=0.05)
    console = Console(file=io.StringIO(), width=200, record=True)
    console.print(comparison_table(c))
    text = console.export_text()
    assert "newly failed" in text and "s_1 → s_2" in text and "2 regression(s)" in text
    assert "same" not in text  # unchanged cases are left out
    md = comparison_markdown(c)
    assert md.startswith("## ❌ agenteval compare")
    assert "| fails | newly failed | m | newly failed | 0.8 | 0.2 | -0.6 |" in md
    assert md.index("| fails |") < md.index("| rise |")  # regressions first
    ok = comparison_markdown(compare(result(_cases(BASE)), result(_cases(BASE))))
    assert ok.startswith("## ✅")


def test_table_rows_are_capped() -> None:
    a = result(_cases({f"c{i}": {"m": 0.9} for i in range(30)}))
    b = result(_cases({f"c{i}": {"m": 0.1} for i in range(30)}))
    console = Console(file=io.StringIO(), width=200, record=True)
    console.print(comparison_table(compare(a, b), max_rows=5))
    text = console.export_text()
    assert "… and 25 more changed row(s)" in text and "30 regression(s)" in text


def _render(c: object, max_rows: int) -> tuple[str, str]:
    console = Console(file=io.StringIO(), width=200, record=True)
    console.print(comparison_table(c, max_rows=max_rows))  # type: ignore[arg-type]
    return console.export_text(), comparison_markdown(c, max_rows=max_rows)  # type: ignore[arg-type]


def _stored(tmp_path: Path, a: EvalSetResult, b: EvalSetResult, margin: float,
            keep: int = 200) -> tuple[CaseChanges, ComparisonRows, Comparison]:
    """Runs `a` and `b` recorded, then compared in the database as `compare` and the web do,
    and whole from their stored summaries."""
    from agenteval.reporting.compare import CRITERION_CODE, case_changes, compare_rows, criterion_params
    from agenteval.store import RunStore, record_run
    from agenteval.store.case_pairs import coded_cases, pairs_of

    record_run(tmp_path, [a, b])
    store, ra, rb = RunStore(tmp_path), a.eval_set_result_id, b.eval_set_result_id
    changes = case_changes(coded_cases(store, ra, store, rb, CRITERION_CODE, criterion_params(margin)),
                           a, b, margin)
    rows = compare_rows(changes, lambda ids: pairs_of(store, ra, store, rb, ids), a, b, keep)
    return changes, rows, compare(store.summary(ra), store.summary(rb), margin)


def _lines(whole: Comparison) -> list[tuple[str, Change, bool, int]]:
    rows = Counter(case.eval_id for case, _ in whole.shown().rows)
    return [(d.eval_id, d.change, d.regressed, rows[d.eval_id]) for d in whole.cases]


@pytest.mark.parametrize("keep", [3, 200])
def test_a_comparison_made_in_the_database_shows_what_the_whole_one_does(tmp_path: Path, keep: int) -> None:
    base = {**BASE, **{f"n{i}": {"m": 0.9, "k": 0.5} for i in range(5)}}
    cand = {**CAND, **{f"n{i}": {"m": 0.1, "k": 0.9} for i in range(5)}}
    a, b = result(_cases(base)), result(_cases(cand), result_id="s_2")
    whole = compare(a, b, margin=0.05)
    changes, made, stored = _stored(tmp_path, a, b, 0.05, keep)
    assert made.counts == whole.counts() == stored.counts()
    assert made.regressions == len(whole.regressions) == 7
    assert made.total_rows == len(whole.shown().rows) > keep or keep == 200
    # (the stored summaries list a case's criteria in name order)
    assert _render(made, min(keep, 100)) == _render(stored, min(keep, 100))
    assert _lines(whole) == [(c.eval_id, c.change, c.regressed, c.rows) for c in changes.cases]


def test_a_comparisons_case_changes_are_its_cases_without_their_summaries(tmp_path: Path) -> None:
    from agenteval.reporting.compare import case_delta
    from agenteval.verdicts.outcome import outcomes

    base = {**BASE, "crit_gone": {"m": 0.9, "k": 0.9}}
    cand = {**CAND, "crit_gone": {"m": 0.9}}  # (an unchanged case whose criterion was removed: changed)
    a, b = result(_cases(base)), result(_cases(cand), result_id="s_2")
    whole = compare(a, b, margin=0.05)
    made, _, _ = _stored(tmp_path, a, b, 0.05)
    assert [(c.eval_id, c.change, c.regressed) for c in made.cases] == [
        (d.eval_id, d.change, d.regressed) for d in whole.cases]
    assert made.counts() == whole.counts()
    assert made.has_regressions and made.margin == 0.05 and made.candidate_id == "s_2"
    shown = {w: [c.eval_id for c in made.cases if c.shown(w)]
             for w in ("all", "changed", "regressed", "improved", "unchanged", "added", "removed")}
    assert set(shown["changed"]) == {c.eval_id for c, _ in whole.shown().rows}
    assert "crit_gone" in shown["changed"] and "crit_gone" in shown["unchanged"]
    assert shown["regressed"] == ["drop", "fails"] and shown["improved"] == ["rise", "fixed"]
    assert shown["added"] == ["new"] and shown["removed"] == ["gone"] and len(shown["all"]) == 9
    before = {c.eval_id: c.summary for c in outcomes(a)}
    after = {c.eval_id: c.summary for c in outcomes(b)}
    assert case_delta("drop", before["drop"], after["drop"], a, b, 0.05) == next(
        d for d in whole.cases if d.eval_id == "drop")


def _random_run(rng: random.Random, result_id: str, created: float) -> EvalSetResult:
    """Cases with criteria present or not, gating or informational, scored or not, run once or
    more (stored summaries or derived ones), some errored; scores on a grid that meets the
    margins exactly (0.3 - 0.2 against 0.1: float noise decides)."""
    scores = [None, 0.0, 0.1, 0.2, 0.3, 0.5, 0.6, 0.7, 0.9, 1.0]
    runs: list[EvalCaseResult] = []
    for i in range(40):
        if rng.random() < 0.1:
            continue
        names = [n for n in ("m", "n", "k", "info") if rng.random() < 0.7]
        for r in range(rng.choice([1, 1, 1, 2, 3])):
            c = case(f"c{i}", {n: rng.choice(scores) for n in names}, run_index=r,
                     error="boom" if rng.random() < 0.05 else None)
            for m in c.overall_eval_metric_results:
                if m.metric_name == "info" and rng.random() < 0.8:
                    m.eval_status = EvalStatus.INFORMATIONAL
            runs.append(c)
    rng.shuffle(runs)
    return result(runs, result_id=result_id, created=created)


@pytest.mark.parametrize("seed", range(6))
def test_the_databases_rule_is_the_comparisons_rule(tmp_path: Path, seed: int) -> None:
    """`CRITERION_CODE` (SQL) and `_criterion` (Python) agree, case by case, at each margin."""
    rng = random.Random(seed)
    a, b = _random_run(rng, "ra", 1.0), _random_run(rng, "rb", 2.0)
    for k, margin in enumerate((0.0, 0.1, 0.2, 0.35)):
        changes, made, whole = _stored(tmp_path / str(k), a, b, margin)
        assert _lines(whole) == [(c.eval_id, c.change, c.regressed, c.rows) for c in changes.cases]
        assert _render(made, 200) == _render(whole, 200)
