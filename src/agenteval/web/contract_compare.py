"""The web API's response models for comparisons and trends (see `web.contract`, which
re-exports them): two runs case by case, the paired statistics, and a set's history."""

from __future__ import annotations

from typing import Literal

from agenteval.reporting.compare import Shown
from agenteval.web.contract import Out, StatusWord, SummaryMetric

# --- comparisons and trends ------------------------------------------------------------------

ChangeWord = Literal["newly failed", "regressed", "newly passed", "improved", "added", "removed", "unchanged"]


class CriterionChange(Out):
    """One criterion of one case, baseline against candidate."""

    metric_name: str
    """The criterion."""
    change: ChangeWord
    """What happened to it."""
    delta: float | None
    """Candidate mean minus baseline mean (None unless both were scored)."""
    significant: bool | None
    """Whether the runs' 95% intervals are disjoint (None unless both sides ran more than once)."""
    before: SummaryMetric | None
    """The baseline's summary (None: not scored there)."""
    after: SummaryMetric | None
    """The candidate's summary."""


class CaseChange(Out):
    """One case, baseline against candidate."""

    eval_id: str
    """The case."""
    change: ChangeWord
    """What happened to it."""
    regressed: bool
    """It or one of its criteria regressed or newly failed."""
    before: StatusWord | None
    """The baseline's verdict (None: not in the baseline)."""
    after: StatusWord | None
    """The candidate's verdict (None: not in the candidate)."""
    criteria: list[CriterionChange]
    """Its criteria."""


class ComparisonView(Out):
    """Two runs compared as `agenteval compare` compares them."""

    baseline_id: str
    """The baseline document."""
    candidate_id: str
    """The candidate document."""
    baseline_set: str
    """The baseline's eval set."""
    candidate_set: str
    """The candidate's eval set."""
    margin: float
    """Mean-score changes within it count as unchanged."""
    has_regressions: bool
    """Whether any case regressed or newly failed."""
    counts: dict[str, int]
    """Cases by change."""
    show: Shown
    """Which cases are listed: all, changed (it or a criterion changed), regressed (it or a
    criterion regressed or newly failed), improved (improved or newly passed), unchanged,
    added, removed."""
    total: int
    """How many cases `show` names."""
    offset: int
    """Where `cases` starts among them."""
    cases: list[CaseChange]
    """A page of the cases `show` names, in candidate order, then removed cases."""


class MeasureView(Out):
    """The case verdict ("overall") or one criterion over the run pairs (`verdicts.paired`)."""

    name: str
    """"overall" or the criterion's name."""
    pairs: int
    """Run pairs (same case, same run index)."""
    pass_a: float | None
    """Baseline pass rate over the pairs."""
    pass_b: float | None
    """Candidate pass rate over the pairs."""
    pass_ci: tuple[float, float] | None
    """95% paired-bootstrap interval of pass_b − pass_a (None: not computed)."""
    a_only: int
    """Pairs that passed in the baseline only."""
    b_only: int
    """Pairs that passed in the candidate only."""
    p_value: float
    """Exact McNemar test, two-sided."""
    p_adjusted: float
    """Holm-adjusted over the gate's tests."""
    score_a: float | None
    """Baseline mean score over the pairs scored on both sides."""
    score_b: float | None
    """Candidate mean score."""
    score_ci: tuple[float, float] | None
    """95% paired-bootstrap interval of score_b − score_a."""
    score_p: float | None
    """Exact sign test on the score differences, two-sided."""
    significant: Literal["regression", "improvement"] | None
    """Significant at alpha after adjustment, and which way (None: not significant)."""


PairedChangeWord = Literal["REGRESSED", "IMPROVED", "INCONCLUSIVE", "UNCHANGED", "ADDED", "REMOVED"]


class PairedCaseView(Out):
    """One case judged from its own runs: Fisher exact test of its pass counts."""

    eval_id: str
    """The case."""
    change: PairedChangeWord
    """What happened to it."""
    passed_a: int
    """Baseline runs passed."""
    runs_a: int
    """Baseline runs."""
    passed_b: int
    """Candidate runs passed."""
    runs_b: int
    """Candidate runs."""
    p_value: float | None
    """Fisher exact, two-sided (None: on one side only)."""
    pass_k_a: tuple[float, float] | None
    """Baseline (pass@k, pass^k), k capped at its runs (None: no runs)."""
    pass_k_b: tuple[float, float] | None
    """Candidate (pass@k, pass^k)."""


class PairedView(Out):
    """Two runs compared pair by pair, as `agenteval compare` decides."""

    baseline_id: str
    """The baseline document."""
    candidate_id: str
    """The candidate document."""
    alpha: float
    """Significance level."""
    decision: str
    """The gate's verdict in one line."""
    gate_failed: bool
    """Whether `agenteval compare` (--fail_on regression) would exit 1."""
    measures: list[MeasureView]
    """The case verdict first, then each criterion."""
    counts: dict[str, int]
    """Cases by change."""
    total: int
    """How many cases are named (by `eval_id`, else by `change`, else all)."""
    offset: int
    """Where `cases` starts among them."""
    cases: list[PairedCaseView]
    """A page of the cases named, in candidate order, then removed cases."""
    k: int
    """k of pass@k and pass^k."""
    pass_k_a: tuple[float, float] | None
    """Baseline (pass@k, pass^k), means over the cases on both sides."""
    pass_k_b: tuple[float, float] | None
    """Candidate (pass@k, pass^k)."""
    inconclusive: str | None
    """Why cases are INCONCLUSIVE and what would decide them, as `agenteval compare` says it
    (`reporting.paired.inconclusive_line`); None when no case is."""
    criteria_differ: list[str]
    """What differs between the two runs' criteria (`reporting.paired.config_differences`): their
    passes are judged against different bars. Empty when they agree or a config is unknown."""


class TrendPoint(Out):
    """One run on the history's charts."""

    run_id: str
    """The document."""
    run_group: str | None
    """The run it belongs to."""
    app: str | None
    """The agent folder whose history holds it."""
    created: float
    """When it was recorded."""
    eval_set_id: str
    """The eval set."""
    cases: int
    """Cases in it."""
    passed: int
    """Cases that passed."""
    pass_rate: float | None
    """passed / cases (None for no case)."""
    criteria: dict[str, float]
    """Each gating criterion's mean score over its cases."""


__all__ = ["CaseChange", "ChangeWord", "ComparisonView", "CriterionChange", "MeasureView", "PairedCaseView",
           "PairedChangeWord", "PairedView", "TrendPoint"]
