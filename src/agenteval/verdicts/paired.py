"""Two runs of the same eval set compared run by run: is a difference real or noise?

The baseline A and the candidate B are paired by case (eval id) and run index: run j of a case
in A with run j of the same case in B (a case's runs beyond the other side's count are left out
of the pairs, not of the case's own verdict). For the case verdict ("overall": the run passed)
and for each gating criterion (the run's criterion passed; and its score):

* the difference B − A in pass rate and in mean score over the pairs, with a 95% percentile
  interval from a paired bootstrap that resamples cases (runs of one case are not independent
  of each other; 1,000 resamples, seeded, so the same runs give the same interval; beyond
  `stats.BOOTSTRAP_CLUSTERS` cases, the normal interval with the cluster-robust standard error);
* an exact McNemar test on the pairs' pass / fail (the sign test on the discordant pairs) and
  an exact sign test on the pairs' score differences (ties left out), two-sided p-values.

The gate (`regression`) looks at the McNemar test of the case verdict and of every criterion
present on both sides, Holm-adjusted together (measures whose pairs passed and failed alike,
such as a case's only criterion and its verdict, count as one test), and fails when one is
significant at `alpha` and goes the wrong way (more pairs passed in A only than in B only). So
the chance that two runs of the same agent fail the gate is at most `alpha` whatever the number
of criteria (the exact test is conservative: in practice below).

Each case gets its own change, from its own runs on either side (all of them) by a two-sided
Fisher exact test of its pass counts: REGRESSED / IMPROVED when p < `alpha` (by the direction),
else UNCHANGED when the two pass rates are equal, else INCONCLUSIVE (they differ, but too few
runs to tell: one run each that disagree is always inconclusive); ADDED / REMOVED when on one
side only. pass@k and pass^k per case on each side (k = `k`, at most the case's runs) and their
means over the paired cases.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from agenteval.schema import EvalCaseResult, EvalSetResult, EvalStatus
from agenteval.verdicts.aggregate import pass_at_k, pass_pow_k
from agenteval.verdicts.stats import cluster_bootstrap, fisher_exact, holm, mcnemar_exact, sign_test

OVERALL = "overall"  # the measure of the case verdict, beside the criteria's names


@dataclass(frozen=True)
class RunOutcome:
    """One run of one case: whether it passed, and each gating criterion's (score, passed)."""

    passed: bool
    metrics: dict[str, tuple[float | None, bool]] = field(default_factory=dict)


Runs = dict[str, dict[int, RunOutcome]]  # eval id -> run index -> outcome (case order kept)


def run_outcome(run: EvalCaseResult) -> RunOutcome:
    """One case run's verdict and gating criteria (informational criteria left out)."""
    return RunOutcome(run.final_eval_status == EvalStatus.PASSED,
                      {m.metric_name: (m.score, m.eval_status == EvalStatus.PASSED)
                       for m in run.overall_eval_metric_results if m.eval_status != EvalStatus.INFORMATIONAL})


def runs_of(result: EvalSetResult) -> Runs:
    """A result document's case runs (`run_outcome` each)."""
    out: Runs = {}
    for r in result.eval_case_results:
        out.setdefault(r.eval_id, {})[r.run_index] = run_outcome(r)
    return out


class CaseChange(str, Enum):
    """What happened to a case, judged from its own runs (see the module docstring)."""

    REGRESSED = "REGRESSED"
    IMPROVED = "IMPROVED"
    INCONCLUSIVE = "INCONCLUSIVE"
    UNCHANGED = "UNCHANGED"
    ADDED = "ADDED"
    REMOVED = "REMOVED"


@dataclass(frozen=True)
class CaseStat:
    """One case: its passes and runs on each side, the Fisher p-value, its change."""

    eval_id: str
    change: CaseChange
    passed_a: int
    runs_a: int
    passed_b: int
    runs_b: int
    p_value: float | None  # None when the case is on one side only

    def pass_at(self, k: int, side: str) -> tuple[float, float] | None:
        """(pass@k, pass^k) of side "a" or "b" with k capped at its runs; None without runs."""
        n, c = (self.runs_a, self.passed_a) if side == "a" else (self.runs_b, self.passed_b)
        return None if n == 0 else (pass_at_k(n, c, min(k, n)), pass_pow_k(n, c, min(k, n)))


@dataclass(frozen=True)
class MeasureStat:
    """The case verdict (`OVERALL`) or one criterion, over the paired runs."""

    name: str
    cases: int  # cases with at least one pair
    pairs: int
    pass_a: float | None  # pass rate over the pairs
    pass_b: float | None
    pass_ci: tuple[float, float] | None  # 95% bootstrap interval of pass_b − pass_a
    a_only: int  # pairs passed in A and not in B
    b_only: int
    p_value: float  # exact McNemar, two-sided
    score_a: float | None = None  # mean score over the pairs scored on both sides
    score_b: float | None = None
    score_ci: tuple[float, float] | None = None
    score_p: float | None = None  # exact sign test on the score differences, two-sided
    p_adjusted: float = 1.0  # Holm-adjusted over the gate's tests

    @property
    def pass_diff(self) -> float | None:
        return None if self.pass_a is None or self.pass_b is None else self.pass_b - self.pass_a

    @property
    def score_diff(self) -> float | None:
        return None if self.score_a is None or self.score_b is None else self.score_b - self.score_a

    @property
    def direction(self) -> str:
        """"regression", "improvement" or "none" by the discordant pairs."""
        if self.a_only > self.b_only:
            return "regression"
        return "improvement" if self.b_only > self.a_only else "none"


@dataclass(frozen=True)
class PairedComparison:
    """Baseline A vs candidate B, paired (see the module docstring)."""

    baseline_id: str
    candidate_id: str
    baseline_set: str
    candidate_set: str
    alpha: float
    k: int
    measures: list[MeasureStat]  # OVERALL first, then the criteria by name
    cases: list[CaseStat]  # candidate order, then removed cases

    def significant(self, m: MeasureStat) -> bool:
        return m.p_adjusted < self.alpha and m.direction != "none"

    @property
    def regressions(self) -> list[MeasureStat]:
        """Measures whose regression is significant at `alpha` (Holm-adjusted)."""
        return [m for m in self.measures if self.significant(m) and m.direction == "regression"]

    @property
    def improvements(self) -> list[MeasureStat]:
        return [m for m in self.measures if self.significant(m) and m.direction == "improvement"]

    @property
    def gate_failed(self) -> bool:
        return bool(self.regressions)

    def decision(self) -> str:
        """One line: the gate's verdict and why."""
        if self.regressions:
            names = ", ".join(m.name for m in self.regressions)
            return f"REGRESSION (significant at alpha {self.alpha:g}): {names}"
        if self.improvements:
            names = ", ".join(m.name for m in self.improvements)
            return f"NO REGRESSION; significant improvement: {names}"
        return f"NO SIGNIFICANT CHANGE at alpha {self.alpha:g}"

    def counts(self) -> dict[CaseChange, int]:
        out = dict.fromkeys(CaseChange, 0)
        for c in self.cases:
            out[c.change] += 1
        return out

    def pass_k(self, side: str) -> tuple[float, float] | None:
        """Mean pass@k and pass^k of one side over the cases on both sides."""
        values = [v for c in self.cases if c.runs_a and c.runs_b and (v := c.pass_at(self.k, side))]
        if not values:
            return None
        return (sum(v[0] for v in values) / len(values), sum(v[1] for v in values) / len(values))


def _case(eval_id: str, a: dict[int, RunOutcome] | None, b: dict[int, RunOutcome] | None,
          alpha: float) -> CaseStat:
    pa = sum(r.passed for r in a.values()) if a else 0
    pb = sum(r.passed for r in b.values()) if b else 0
    na, nb = len(a or {}), len(b or {})
    if not a or not b:
        return CaseStat(eval_id, CaseChange.ADDED if not a else CaseChange.REMOVED, pa, na, pb, nb, None)
    p = fisher_exact(pa, na - pa, pb, nb - pb)
    if p < alpha:
        change = CaseChange.REGRESSED if pb * na < pa * nb else CaseChange.IMPROVED
    else:
        change = CaseChange.UNCHANGED if pa * nb == pb * na else CaseChange.INCONCLUSIVE
    return CaseStat(eval_id, change, pa, na, pb, nb, p)


def _pairs(a: dict[int, RunOutcome], b: dict[int, RunOutcome]) -> list[tuple[RunOutcome, RunOutcome]]:
    return [(a[j], b[j]) for j in sorted(a.keys() & b.keys())]


def _value(run: RunOutcome, name: str) -> tuple[float | None, bool] | None:
    return (None, run.passed) if name == OVERALL else run.metrics.get(name)


@dataclass
class _Tally:
    """Counts of one measure over the pairs seen so far."""

    cases: int = 0
    pairs: int = 0
    passed_a: int = 0
    passed_b: int = 0
    a_only: int = 0
    b_only: int = 0
    scored: int = 0
    score_a: float = 0.0
    score_b: float = 0.0
    up: int = 0
    down: int = 0
    outcomes: list[tuple[bool, bool]] = field(default_factory=list)  # each pair's (A passed, B passed)

    def add(self, pairs: list[tuple[RunOutcome, RunOutcome]], name: str) -> list[tuple[float, int]]:
        """Counts one case's pairs in; returns its bootstrap cluster parts."""
        d_pass, n_pass, d_score, n_score = 0.0, 0, 0.0, 0
        for x, y in pairs:
            vx, vy = _value(x, name), _value(y, name)
            if vx is None or vy is None:
                continue
            n_pass += 1
            d_pass += vy[1] - vx[1]
            self.outcomes.append((vx[1], vy[1]))
            self.passed_a += vx[1]
            self.passed_b += vy[1]
            self.a_only += vx[1] and not vy[1]
            self.b_only += vy[1] and not vx[1]
            if vx[0] is not None and vy[0] is not None:
                n_score += 1
                d_score += vy[0] - vx[0]
                self.score_a += vx[0]
                self.score_b += vy[0]
                self.up += vy[0] > vx[0]
                self.down += vy[0] < vx[0]
        self.cases += n_pass > 0
        self.pairs += n_pass
        self.scored += n_score
        return [(d_pass, n_pass), (d_score, n_score)]

    def stat(self, name: str, pass_ci: tuple[float, float] | None, score_ci: tuple[float, float] | None,
             adjusted: float) -> MeasureStat:
        scored = self.scored
        return MeasureStat(name, self.cases, self.pairs, self.passed_a / self.pairs,
                           self.passed_b / self.pairs, pass_ci, self.a_only, self.b_only,
                           mcnemar_exact(self.a_only, self.b_only),
                           self.score_a / scored if scored else None,
                           self.score_b / scored if scored else None, score_ci if scored else None,
                           sign_test(self.up, self.down) if scored else None, adjusted)


def compare_paired(a: EvalSetResult, b: EvalSetResult, *, alpha: float = 0.05, k: int | None = None,
                   resamples: int = 1000, seed: int = 0, runs_a: Runs | None = None,
                   runs_b: Runs | None = None) -> PairedComparison:
    """Baseline `a` against candidate `b`, paired by case and run index. The runs come from the
    documents' case results unless given (`runs_a` / `runs_b`: e.g. read from the run
    history). `k` for pass@k / pass^k: default the fewest runs of a case on either side.
    `resamples` bootstrap resamples (0: no intervals), drawn from `seed`."""
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must be between 0 and 1")
    ra = runs_of(a) if runs_a is None else runs_a
    rb = runs_of(b) if runs_b is None else runs_b
    ids = list(dict.fromkeys([*rb, *ra]))
    cases = [_case(i, ra.get(i), rb.get(i), alpha) for i in ids]
    paired = [_pairs(ra[i], rb[i]) for i in ids if i in ra and i in rb]
    paired = [p for p in paired if p]
    # The case verdict, then the criteria on both sides by name (the same order whether the runs
    # come from a document or from the database).
    names = [OVERALL, *sorted({n for pairs in paired for x, y in pairs for n in x.metrics if n in y.metrics})]
    tallies = {n: _Tally() for n in names}
    # Per case, per measure: (sum of pass differences, pairs), (sum of score differences, pairs).
    clusters = [[part for n in names for part in tallies[n].add(pairs, n)] for pairs in paired]
    intervals = (cluster_bootstrap(clusters, resamples, seed) if resamples > 0
                 else [None] * (2 * len(names)))
    found = [(n, i) for i, n in enumerate(names) if tallies[n].pairs]
    # Measures whose pairs passed and failed alike (a case's only criterion and its verdict)
    # are one test, counted once in Holm's family.
    tests = list(dict.fromkeys(tuple(tallies[n].outcomes) for n, _ in found))
    p_values = [mcnemar_exact(sum(x and not y for x, y in t), sum(y and not x for x, y in t)) for t in tests]
    adjusted = dict(zip(tests, holm(p_values), strict=True))
    measures = [tallies[n].stat(n, intervals[2 * i], intervals[2 * i + 1],
                                adjusted[tuple(tallies[n].outcomes)]) for n, i in found]
    fewest = min([c.runs_a for c in cases if c.runs_a and c.runs_b]
                 + [c.runs_b for c in cases if c.runs_a and c.runs_b] or [1])
    return PairedComparison(a.eval_set_result_id, b.eval_set_result_id, a.eval_set_id, b.eval_set_id,
                            alpha, k if k is not None else fewest, measures, cases)


__all__ = ["OVERALL", "CaseChange", "CaseStat", "MeasureStat", "PairedComparison", "RunOutcome", "Runs",
           "compare_paired", "run_outcome", "runs_of"]
