"""What a result document says per case: its verdict over runs, the runs themselves, and the
counts per verdict; shared by the store and every report.

A case's verdict is its `summary` entry (over its repeated runs, by the result's gating rule);
a document without summaries (as ADK writes them) is summarised here with the result's gating.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agenteval.schema import (
    CaseSummary,
    EvalCaseResult,
    EvalSetResult,
    EvalStatus,
    Invocation,
    MetricSummary,
)
from agenteval.verdicts.aggregate import summarise_case

FAILING = (EvalStatus.FAILED, EvalStatus.NOT_EVALUATED)


@dataclass(frozen=True)
class CaseOutcome:
    """One eval id of one eval set: its verdict over runs and the runs themselves (run order)."""

    eval_set_id: str
    gating: str
    summary: CaseSummary
    runs: list[EvalCaseResult]

    @property
    def eval_id(self) -> str:
        return self.summary.eval_id

    @property
    def status(self) -> EvalStatus:
        return self.summary.final_eval_status

    @property
    def num_runs(self) -> int:
        return self.summary.runs

    def gating_metrics(self) -> list[MetricSummary]:
        """The criteria that decide the verdict (informational metrics left out)."""
        return [m for m in self.summary.metrics if m.eval_status != EvalStatus.INFORMATIONAL]

    def failing_metrics(self) -> list[MetricSummary]:
        """Gating criteria that failed or could not be evaluated."""
        return [m for m in self.summary.metrics if m.eval_status in FAILING]

    def duration(self) -> float | None:
        """Seconds the agent spent: actual invocation durations summed over all runs; None if
        no invocation was timed."""
        return runs_duration(self.runs)

    def tokens(self) -> float | None:
        """Agent tokens (model calls' total token counts) over all runs; None if none reported."""
        return runs_tokens(self.runs)


def unevaluated_reason(m: MetricSummary, runs: Sequence[EvalCaseResult]) -> str | None:
    """Why criterion `m` (of a case of `runs`) was not evaluated: its stored reason, else the
    first metric error of the whole run its runs recorded for it (`run N: ` before it when the
    case ran several times); None when there is neither."""
    if m.reason is not None:
        return m.reason
    for run in runs:
        for e in run.metric_errors:
            if e.metric_name == m.metric_name and e.invocation_index is None:
                return e.message if len(runs) == 1 else f"run {run.run_index}: {e.message}"
    return None


def runs_duration(runs: Sequence[EvalCaseResult]) -> float | None:
    """`CaseOutcome.duration` of these runs (without an outcome: a `score` worker's case)."""
    values = [d for run in runs for per in run.eval_metric_result_per_invocation
              if (d := per.actual_invocation.duration) is not None]
    return sum(values) if values else None


def runs_tokens(runs: Sequence[EvalCaseResult]) -> float | None:
    """`CaseOutcome.tokens` of these runs (without an outcome: a `score` worker's case)."""
    values = [t for run in runs for per in run.eval_metric_result_per_invocation
              if (t := invocation_tokens(per.actual_invocation)) is not None]
    return sum(values) if values else None


def invocation_tokens(inv: Invocation) -> float | None:
    """Tokens of an invocation's model calls as `token_usage_v1` counts them (prompt + tool-use
    prompt + candidates + thoughts); None when no call reported a count."""
    counts = [c for u in inv.usage() for c in (u.prompt_token_count, u.tool_use_prompt_token_count,
                                               u.candidates_token_count, u.thoughts_token_count)
              if c is not None]
    return float(sum(counts)) if counts else None


def outcomes(result: EvalSetResult) -> list[CaseOutcome]:
    """One outcome per eval id, in summary (case) order."""
    by_case: dict[str, list[EvalCaseResult]] = {}
    for case in result.eval_case_results:
        by_case.setdefault(case.eval_id, []).append(case)
    summaries = result.summary or [fallback_summary(eid, runs, result.gating)
                                   for eid, runs in by_case.items()]
    return [CaseOutcome(result.eval_set_id, result.gating, s,
                        sorted(by_case.get(s.eval_id, []), key=lambda r: r.run_index))
            for s in summaries]


def fallback_summary(eval_id: str, runs: list[EvalCaseResult], gating: str) -> CaseSummary:
    """The summary of a case whose document has none (as ADK writes them), by `gating`."""
    summary = summarise_case(eval_id, runs, gating, ignore_not_evaluated=False)
    if len(runs) == 1:  # one run: its own verdict (which honoured the config's policy) stands
        summary.final_eval_status = runs[0].final_eval_status
    return summary


@dataclass(frozen=True)
class SetCounts:
    """Cases of one eval set by verdict."""

    total: int
    passed: int
    failed: int
    not_evaluated: int
    max_runs: int


def set_counts(result: EvalSetResult, cases: Sequence[CaseOutcome] | None = None) -> SetCounts:
    """Passed / failed / not-evaluated case counts (by verdict over runs)."""
    cases = outcomes(result) if cases is None else cases
    statuses = [c.status for c in cases]
    return SetCounts(len(statuses), statuses.count(EvalStatus.PASSED),
                     statuses.count(EvalStatus.FAILED), statuses.count(EvalStatus.NOT_EVALUATED),
                     max((c.num_runs for c in cases), default=0))


__all__ = ["FAILING", "CaseOutcome", "SetCounts", "fallback_summary", "invocation_tokens", "outcomes",
           "runs_duration", "runs_tokens", "set_counts", "unevaluated_reason"]
