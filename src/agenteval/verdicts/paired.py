"""Two runs of the same eval set compared run by run: is a difference real or noise?

The baseline A and the candidate B are paired by case (eval id) and run index: run j of a case
in A with run j of the same case in B (a case's runs beyond the other side's count are left out
of the pairs, not of the case's own verdict). For the case verdict ("overall": the run passed)
and for each gating criterion (the run's criterion passed, and its score; a run that did not
pass and lacks the criterion, as after an inference error, failed it unscored):

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

import functools
import gc
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
        return None if n == 0 else _pass_k(n, c, min(k, n))


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


def fewest_runs_to_tell(alpha: float) -> int:
    """The fewest runs a side with which a case's own runs can show a change at `alpha`: n of n
    passed against 0 of n, whose two-sided Fisher p-value (2 / C(2n, n)) is below it (4 at 0.05)."""
    n = 1
    while fisher_exact(n, 0, 0, n) >= alpha:  # (as `_case` computes it, rounding and all)
        n += 1
    return n


@functools.lru_cache(maxsize=4096)
def _pass_k(n: int, c: int, k: int) -> tuple[float, float]:
    # A case's (pass@k, pass^k) depends on its counts alone, and most cases share a few counts.
    return pass_at_k(n, c, k), pass_pow_k(n, c, k)


def _case(eval_id: str, a: dict[int, RunOutcome] | None, b: dict[int, RunOutcome] | None, alpha: float,
          decided: dict[tuple[int, int, int, int], tuple[CaseChange, float]]) -> CaseStat:
    pa = sum(r.passed for r in a.values()) if a else 0
    pb = sum(r.passed for r in b.values()) if b else 0
    na, nb = len(a or {}), len(b or {})
    if not a or not b:
        return CaseStat(eval_id, CaseChange.ADDED if not a else CaseChange.REMOVED, pa, na, pb, nb, None)
    # Each combination of counts is decided once (`decided`: most of 50,000 cases share one).
    counts = (pa, na, pb, nb)
    if counts not in decided:
        p = fisher_exact(pa, na - pa, pb, nb - pb)
        if p < alpha:
            change = CaseChange.REGRESSED if pb * na < pa * nb else CaseChange.IMPROVED
        else:
            change = CaseChange.UNCHANGED if pa * nb == pb * na else CaseChange.INCONCLUSIVE
        decided[counts] = (change, p)
    change, p = decided[counts]
    return CaseStat(eval_id, change, pa, na, pb, nb, p)


def _pairs(a: dict[int, RunOutcome], b: dict[int, RunOutcome]) -> list[tuple[RunOutcome, RunOutcome]]:
    if len(a) == 1 and a.keys() == b.keys():  # (most cases: one run on either side)
        (j,) = a
        return [(a[j], b[j])]
    return [(a[j], b[j]) for j in sorted(a.keys() & b.keys())]


_FAILED_UNSCORED: tuple[float | None, bool] = (None, False)


def _criterion_pair(x: RunOutcome, y: RunOutcome, name: str
                    ) -> tuple[tuple[float | None, bool], tuple[float | None, bool]] | None:
    """A pair's (score, passed) on criterion `name`; None when it is not a pair of that
    criterion. A run without the criterion that did not pass (an inference error: no criterion
    ran) failed it when the other side has it, as its case verdict did: left out, a candidate
    whose runs crash lost those pairs from each criterion, which then diluted the gate's Holm
    family with a measure that saw no change."""
    vx, vy = x.metrics.get(name), y.metrics.get(name)
    if vx is None:
        return None if vy is None or x.passed else (_FAILED_UNSCORED, vy)
    if vy is None:
        return None if y.passed else (vx, _FAILED_UNSCORED)
    return vx, vy


# A pair's outcome on one measure as one small int (A passed: 2, B passed: 1): a measure's
# outcomes are a `bytearray`, compared and hashed whole to find the measures that are one test.
_OUTCOME = {(False, False): 0, (False, True): 1, (True, False): 2, (True, True): 3}


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
    outcomes: bytearray = field(default_factory=bytearray)  # each pair's `_OUTCOME`

    def add(self, pairs: list[tuple[RunOutcome, RunOutcome]], name: str) -> list[tuple[float, int]]:
        """Counts one case's pairs in; returns its bootstrap cluster parts."""
        if len(pairs) == 1:  # (most cases: one run on either side)
            return self._add_one(*pairs[0], name)
        # Counted in locals and added once a case (the sums of scores still in pair order).
        d_pass, n_pass, d_score, n_score = 0, 0, 0.0, 0
        passed_a = passed_b = a_only = b_only = up = down = 0
        score_a, score_b = self.score_a, self.score_b
        append = self.outcomes.append
        for x, y in pairs:
            if name == OVERALL:
                pass_x, pass_y, sx, sy = x.passed, y.passed, None, None
            else:
                if (both := _criterion_pair(x, y, name)) is None:
                    continue
                (sx, pass_x), (sy, pass_y) = both
            n_pass += 1
            d_pass += pass_y - pass_x
            append(_OUTCOME[pass_x, pass_y])
            passed_a += pass_x
            passed_b += pass_y
            a_only += pass_x and not pass_y
            b_only += pass_y and not pass_x
            if sx is not None and sy is not None:
                n_score += 1
                d_score += sy - sx
                score_a += sx
                score_b += sy
                up += sy > sx
                down += sy < sx
        self.passed_a += passed_a
        self.passed_b += passed_b
        self.a_only += a_only
        self.b_only += b_only
        self.up += up
        self.down += down
        self.score_a, self.score_b = score_a, score_b
        self.cases += n_pass > 0
        self.pairs += n_pass
        self.scored += n_score
        return [(float(d_pass), n_pass), (d_score, n_score)]

    def _add_one(self, x: RunOutcome, y: RunOutcome, name: str) -> list[tuple[float, int]]:
        """`add` of a case with one pair."""
        if name == OVERALL:
            pass_x, pass_y, sx, sy = x.passed, y.passed, None, None
        else:
            if (both := _criterion_pair(x, y, name)) is None:
                return [(0.0, 0), (0.0, 0)]
            (sx, pass_x), (sy, pass_y) = both
        self.outcomes.append(_OUTCOME[pass_x, pass_y])
        self.cases += 1
        self.pairs += 1
        if pass_x != pass_y:
            if pass_x:
                self.passed_a += 1
                self.a_only += 1
            else:
                self.passed_b += 1
                self.b_only += 1
        elif pass_x:
            self.passed_a += 1
            self.passed_b += 1
        if sx is None or sy is None:
            return [(float(pass_y - pass_x), 1), (0.0, 0)]
        self.scored += 1
        self.score_a += sx
        self.score_b += sy
        self.up += sy > sx
        self.down += sy < sx
        return [(float(pass_y - pass_x), 1), (0.0 + (sy - sx), 1)]

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
    # With the cyclic GC on, every allocation threshold rescans both runs' outcomes (100,000
    # objects at 50,000 cases, none in a cycle) and what is made of them: a quarter of the time.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _compare(a, b, alpha, k, resamples, seed, runs_a, runs_b)
    finally:
        if enabled:
            gc.enable()


def _compare(a: EvalSetResult, b: EvalSetResult, alpha: float, k: int | None, resamples: int, seed: int,
             runs_a: Runs | None, runs_b: Runs | None) -> PairedComparison:
    """`compare_paired` (its arguments checked)."""
    ra = runs_of(a) if runs_a is None else runs_a
    rb = runs_of(b) if runs_b is None else runs_b
    ids = list(dict.fromkeys([*rb, *ra]))
    decided: dict[tuple[int, int, int, int], tuple[CaseChange, float]] = {}
    cases = [_case(i, ra.get(i), rb.get(i), alpha, decided) for i in ids]
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
    tests = list(dict.fromkeys(bytes(tallies[n].outcomes) for n, _ in found))
    p_values = [mcnemar_exact(t.count(2), t.count(1)) for t in tests]
    adjusted = dict(zip(tests, holm(p_values), strict=True))
    measures = [tallies[n].stat(n, intervals[2 * i], intervals[2 * i + 1],
                                adjusted[bytes(tallies[n].outcomes)]) for n, i in found]
    fewest = min([c.runs_a for c in cases if c.runs_a and c.runs_b]
                 + [c.runs_b for c in cases if c.runs_a and c.runs_b] or [1])
    return PairedComparison(a.eval_set_result_id, b.eval_set_result_id, a.eval_set_id, b.eval_set_id,
                            alpha, k if k is not None else fewest, measures, cases)


__all__ = ["OVERALL", "CaseChange", "CaseStat", "MeasureStat", "PairedComparison", "RunOutcome", "Runs",
           "compare_paired", "fewest_runs_to_tell", "run_outcome", "runs_of"]
