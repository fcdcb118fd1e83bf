"""Paired comparison of two runs: pairing, per-case changes, the gate, and its error rates on a
seeded simulation."""

import random

import pytest
from statsmodels.stats.contingency_tables import mcnemar

from agenteval.schema import EvalSetResult
from agenteval.verdicts.paired import OVERALL, CaseChange, RunOutcome, Runs, compare_paired, runs_of
from tests.result_builders import case, result


def _doc(rid: str) -> EvalSetResult:
    return EvalSetResult(eval_set_result_id=rid, eval_set_id="s")


def _runs(verdicts: dict[str, list[bool]], scores: dict[str, list[float]] | None = None) -> Runs:
    out: Runs = {}
    for eid, v in verdicts.items():
        s = (scores or {}).get(eid)
        out[eid] = {j: RunOutcome(p, {"m": (s[j] if s else float(p), p)}) for j, p in enumerate(v)}
    return out


def test_pairs_by_case_and_run_index_and_counts_discordant_pairs() -> None:
    a = _runs({"x": [True, True, False], "y": [True, False], "z": [False], "gone": [True]})
    b = _runs({"x": [False, True, False, True], "y": [True, True], "z": [False], "new": [True]})
    c = compare_paired(_doc("A"), _doc("B"), runs_a=a, runs_b=b, resamples=0)
    overall = c.measures[0]
    assert overall.name == OVERALL and overall.pairs == 3 + 2 + 1  # x's 4th run has no pair
    assert (overall.a_only, overall.b_only) == (1, 1)
    assert overall.p_value == pytest.approx(mcnemar([[2, 1], [1, 2]], exact=True).pvalue)
    assert [m.name for m in c.measures] == [OVERALL, "m"]
    changes = {x.eval_id: x.change for x in c.cases}
    assert changes == {"x": CaseChange.INCONCLUSIVE, "y": CaseChange.INCONCLUSIVE, "z": CaseChange.UNCHANGED,
                       "new": CaseChange.ADDED, "gone": CaseChange.REMOVED}
    x = next(s for s in c.cases if s.eval_id == "x")
    assert (x.passed_a, x.runs_a, x.passed_b, x.runs_b) == (2, 3, 2, 4)
    assert not c.gate_failed and c.decision().startswith("NO SIGNIFICANT CHANGE")


def test_a_case_regresses_on_its_own_runs_only_when_fisher_says_so() -> None:
    a = _runs({"x": [True] * 8, "y": [True] * 2})
    b = _runs({"x": [False] * 8, "y": [False] * 2})
    c = compare_paired(_doc("A"), _doc("B"), runs_a=a, runs_b=b, resamples=0)
    x, y = c.cases
    assert x.change == CaseChange.REGRESSED and x.p_value is not None and x.p_value < 0.001
    assert y.change == CaseChange.INCONCLUSIVE and y.p_value == pytest.approx(0.3333333, rel=1e-5)
    assert c.gate_failed and c.regressions[0].name == OVERALL
    assert c.decision().startswith("REGRESSION")
    improved = compare_paired(_doc("B"), _doc("A"), runs_a=b, runs_b=a, resamples=0)
    assert improved.cases[0].change == CaseChange.IMPROVED and not improved.gate_failed
    assert improved.decision().startswith("NO REGRESSION; significant improvement")


def test_scores_pass_rates_intervals_and_pass_k() -> None:
    a = _runs({f"c{i}": [True, True] for i in range(12)}, {f"c{i}": [0.9, 0.8] for i in range(12)})
    b = _runs({f"c{i}": [i % 3 != 0, True] for i in range(12)}, {f"c{i}": [0.6, 0.7] for i in range(12)})
    c = compare_paired(_doc("A"), _doc("B"), runs_a=a, runs_b=b, resamples=500, seed=3)
    m = next(m for m in c.measures if m.name == "m")
    assert m.pass_a == 1.0 and m.pass_b == pytest.approx(20 / 24)
    assert m.score_diff == pytest.approx(-0.2) and m.score_p is not None and m.score_p < 0.001
    assert m.score_ci == pytest.approx((-0.2, -0.2))  # every pair dropped by the same
    assert m.pass_ci is not None and m.pass_ci[0] < m.pass_diff < m.pass_ci[1] <= 0  # type: ignore[operator]
    assert c.k == 2 and c.pass_k("a") == (1.0, 1.0)
    at, power = c.pass_k("b")  # type: ignore[misc]
    assert at == 1.0 and power == pytest.approx(8 / 12)


def test_runs_from_a_document() -> None:
    doc = result([case("x", {"m": 0.9}, run_index=0), case("x", {"m": 0.1}, run_index=1),
                  case("y", {"m": 0.7, "info": None})])
    runs = runs_of(doc)
    assert runs["x"][0].passed and not runs["x"][1].passed
    assert runs["x"][1].metrics == {"m": (0.1, False)}
    c = compare_paired(doc, doc)
    assert all(x.change == CaseChange.UNCHANGED for x in c.cases) and not c.gate_failed


def _simulate(p: list[float], runs: int, rng: random.Random) -> Runs:
    return {f"c{i}": {j: RunOutcome(rng.random() < q) for j in range(runs)} for i, q in enumerate(p)}


def test_gate_false_alarms_at_most_alpha_and_catches_a_real_regression() -> None:
    """Seeded: 40 cases with known pass chances, 3 runs each side. Same agent on both sides
    (A/A): the gate fails at most alpha of the time; a 25-point drop on every case: it fails
    nearly always."""
    rng = random.Random(2024)
    p = [rng.uniform(0.3, 1.0) for _ in range(40)]
    worse = [max(0.0, q - 0.25) for q in p]
    trials = 400
    alarms = sum(compare_paired(_doc("A"), _doc("B"), runs_a=_simulate(p, 3, rng),
                                runs_b=_simulate(p, 3, rng), resamples=0).gate_failed for _ in range(trials))
    caught = sum(compare_paired(_doc("A"), _doc("B"), runs_a=_simulate(p, 3, rng),
                                runs_b=_simulate(worse, 3, rng), resamples=0).gate_failed for _ in range(100))
    assert alarms / trials <= 0.05
    assert caught >= 95


def test_a_run_that_errored_before_scoring_fails_the_criteria_the_other_side_scored() -> None:
    """An inference error leaves a run without criteria: it fails each one, as in its own
    verdict; left out of the pairs, six cases of ten crashing diluted the gate to a pass."""
    a = {f"c{i}": {0: RunOutcome(True, {"m": (1.0, True)})} for i in range(10)}
    b = {f"c{i}": {0: RunOutcome(False) if i < 6 else RunOutcome(True, {"m": (1.0, True)})}
         for i in range(10)}
    c = compare_paired(_doc("A"), _doc("B"), runs_a=a, runs_b=b, resamples=0)
    overall, m = c.measures
    assert (m.name, m.pairs, m.a_only, m.pass_b) == ("m", 10, 6, 0.4)
    assert m.score_a == m.score_b == 1.0  # its scores: the pairs scored on both sides
    assert m.p_adjusted == overall.p_adjusted == pytest.approx(2 / 2 ** 6)  # one test, not two
    assert c.gate_failed
    # A passing run without the criterion (not configured for it) is still left out.
    b["c0"][0] = RunOutcome(True)
    assert compare_paired(_doc("A"), _doc("B"), runs_a=a, runs_b=b, resamples=0).measures[1].pairs == 9


def test_alpha_is_checked() -> None:
    with pytest.raises(ValueError):
        compare_paired(_doc("A"), _doc("B"), alpha=0.0)


def _reference(ra: Runs, rb: Runs, alpha: float) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """The measures and cases of `compare_paired` (resamples=0) straight from their definitions,
    a measure and a pair at a time."""
    from agenteval.verdicts.stats import fisher_exact, holm, mcnemar_exact, sign_test

    ids = list(dict.fromkeys([*rb, *ra]))
    pairs = {i: [(ra[i][j], rb[i][j]) for j in sorted(ra[i].keys() & rb[i].keys())]
             for i in ids if i in ra and i in rb}
    names = [OVERALL, *sorted({n for p in pairs.values() for x, y in p for n in x.metrics if n in y.metrics})]

    def value(run: RunOutcome, name: str, other: RunOutcome) -> tuple[float | None, bool] | None:
        if name == OVERALL:
            return (None, run.passed)
        got = run.metrics.get(name)
        # a run that did not pass fails a criterion it lacks that the other side scored
        return (None, False) if got is None and not run.passed and name in other.metrics else got

    rows, outcomes = [], []
    for name in names:
        both = [(vx, vy) for p in pairs.values() for x, y in p
                if (vx := value(x, name, y)) is not None and (vy := value(y, name, x)) is not None]
        if not both:
            continue
        scored = [(vx[0], vy[0]) for vx, vy in both if vx[0] is not None and vy[0] is not None]
        a_only = sum(vx[1] and not vy[1] for vx, vy in both)
        b_only = sum(vy[1] and not vx[1] for vx, vy in both)
        cases = sum(any(value(x, name, y) is not None and value(y, name, x) is not None for x, y in p)
                    for p in pairs.values())
        outcomes.append(tuple((vx[1], vy[1]) for vx, vy in both))
        rows.append((name, cases, len(both), sum(vx[1] for vx, _ in both) / len(both),
                     sum(vy[1] for _, vy in both) / len(both), a_only, b_only, mcnemar_exact(a_only, b_only),
                     sum((sx for sx, _ in scored), 0.0) / len(scored) if scored else None,
                     sum((sy for _, sy in scored), 0.0) / len(scored) if scored else None,
                     sign_test(sum(sy > sx for sx, sy in scored), sum(sy < sx for sx, sy in scored))
                     if scored else None))
    tests = list(dict.fromkeys(outcomes))
    p_values = [mcnemar_exact(sum(x and not y for x, y in t), sum(y and not x for x, y in t)) for t in tests]
    adjusted = dict(zip(tests, holm(p_values), strict=True))
    rows = [(*row, adjusted[t]) for row, t in zip(rows, outcomes, strict=True)]
    case_rows: list[tuple[object, ...]] = []
    for i in ids:
        a, b = ra.get(i, {}), rb.get(i, {})
        pa, pb = sum(r.passed for r in a.values()), sum(r.passed for r in b.values())
        if not a or not b:
            gone = CaseChange.ADDED if not a else CaseChange.REMOVED
            case_rows.append((i, gone, pa, len(a), pb, len(b), None))
            continue
        p = fisher_exact(pa, len(a) - pa, pb, len(b) - pb)
        change = ((CaseChange.REGRESSED if pb * len(a) < pa * len(b) else CaseChange.IMPROVED) if p < alpha
                  else CaseChange.UNCHANGED if pa * len(b) == pb * len(a) else CaseChange.INCONCLUSIVE)
        case_rows.append((i, change, pa, len(a), pb, len(b), p))
    return rows, case_rows


@pytest.mark.parametrize("seed", range(6))
def test_the_counts_agree_with_the_definitions_pair_by_pair(seed: int) -> None:
    """Cases of one run on either side (counted without a loop) and of several, criteria
    missing on a side, unscored runs, cases on one side only: every measure's counts, means,
    p-values and Holm values, and every case's change, as the definitions give them (exact)."""
    rng = random.Random(seed)

    def runs(n_cases: int) -> Runs:
        out: Runs = {}
        for i in rng.sample(range(n_cases + 5), n_cases):
            out[f"c{i}"] = {j: RunOutcome(rng.random() < 0.7, {
                n: (rng.choice([None, 0.0, -0.0, 0.25, 0.5, 1.0, 3]), rng.random() < 0.6)
                for n in ("m1", "m2", "only_a" if rng.random() < 0.5 else "m3") if rng.random() < 0.85})
                for j in rng.sample(range(4), rng.choice([1, 1, 1, 2, 3]))}
        return out

    ra, rb = runs(60), runs(60)
    c = compare_paired(_doc("A"), _doc("B"), runs_a=ra, runs_b=rb, resamples=0, alpha=0.2)
    measures, cases = _reference(ra, rb, 0.2)
    got = [(m.name, m.cases, m.pairs, m.pass_a, m.pass_b, m.a_only, m.b_only, m.p_value, m.score_a, m.score_b,
            m.score_p, m.p_adjusted) for m in c.measures]
    assert repr(got) == repr(measures)  # repr: -0.0 and 0.0 told apart
    assert [(x.eval_id, x.change, x.passed_a, x.runs_a, x.passed_b, x.runs_b, x.p_value)
            for x in c.cases] == cases
