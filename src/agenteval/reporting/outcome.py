"""What a result document says per case, shared by the file reports (JUnit, HTML, Markdown).

A case's verdict is its `summary` entry (over its repeated runs, by the result's gating rule);
a document without summaries (as ADK writes them) is summarised here with the result's gating.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agenteval.reporting.console import format_call, format_score
from agenteval.schema import (
    CaseSummary,
    EvalCaseResult,
    EvalSetResult,
    EvalStatus,
    FunctionCall,
    Invocation,
    JudgeRecord,
    MetricSummary,
)

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
        values = [per.actual_invocation.duration for run in self.runs
                  for per in run.eval_metric_result_per_invocation
                  if per.actual_invocation.duration is not None]
        return sum(values) if values else None

    def tokens(self) -> float | None:
        """Agent tokens (model calls' total token counts) over all runs; None if none reported."""
        values = [t for run in self.runs for per in run.eval_metric_result_per_invocation
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
    summaries = result.summary or [_fallback_summary(eid, runs, result.gating)
                                   for eid, runs in by_case.items()]
    return [CaseOutcome(result.eval_set_id, result.gating, s,
                        sorted(by_case.get(s.eval_id, []), key=lambda r: r.run_index))
            for s in summaries]


def _fallback_summary(eval_id: str, runs: list[EvalCaseResult], gating: str) -> CaseSummary:
    # Imported here: the runner package pulls in the criteria (and nltk), slow to import.
    from agenteval.runner.aggregate import summarise_case

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


def ci_text(m: MetricSummary) -> str:
    """`[low, high]` of the 95% CI, or "-"."""
    if m.ci_low is None or m.ci_high is None:
        return "-"
    return f"[{format_score(m.ci_low)}, {format_score(m.ci_high)}]"


def criterion_problem(m: MetricSummary, gating: str) -> str:
    """Why a criterion failed, in one line: score vs threshold (one run), or mean, CI and passed
    runs under the gating rule (several runs); or that it was not evaluated."""
    thr = "-" if m.threshold is None else format_score(m.threshold)
    if m.eval_status == EvalStatus.NOT_EVALUATED or m.mean is None:
        scored = f" ({m.scored_runs} of {m.runs} runs scored)" if m.runs > 1 else ""
        return f"{m.metric_name}: not evaluated{scored}"
    if m.runs == 1:  # "<" only when true: a criterion may set its own status
        below = m.threshold is not None and m.mean < m.threshold
        return f"{m.metric_name}: score {format_score(m.mean)} {'<' if below else 'vs'} threshold {thr}"
    return (f"{m.metric_name}: mean {format_score(m.mean)} (95% CI {ci_text(m)}) vs threshold {thr}; "
            f"passed {m.passed_runs}/{m.runs} runs (gating: {gating})")


def is_negative(record: JudgeRecord) -> bool:
    """A judge verdict that counted against the case: a voted score below 1, or a judge error."""
    return record.error is not None or (record.score is not None and record.score < 1.0)


def record_where(record: JudgeRecord, run_index: int | None = None) -> str:
    """`metric, run 1, invocation 0, rubric r1`: where a judge verdict belongs."""
    parts = [record.metric_name]
    if run_index is not None:
        parts.append(f"run {run_index}")
    if record.invocation_index is not None:
        parts.append(f"invocation {record.invocation_index}")
    if record.item:
        parts.append(record.item)
    return ", ".join(parts)


def problems(case: CaseOutcome, max_judge: int = 10) -> list[str]:
    """Every reason a case did not pass, one line each: failing criteria, metric errors,
    inference errors, and the rationales of (at most `max_judge`) negative judge verdicts."""
    multi = case.num_runs > 1
    lines = [criterion_problem(m, case.gating) for m in case.failing_metrics()]
    for run in case.runs:
        run_tag = f"run {run.run_index}: " if multi else ""
        if run.error_message:
            lines.append(f"{run_tag}inference failed: {run.error_message}")
        for err in run.metric_errors:
            where = "" if err.invocation_index is None else f" (invocation {err.invocation_index})"
            lines.append(f"{run_tag}{err.metric_name}{where}: {err.message}")
    negative = [(run.run_index, r) for run in case.runs for r in run.judge_records if is_negative(r)]
    for run_index, record in negative[:max_judge]:
        verdict = record.verdict or "no verdict"
        text = record.rationale or record.error or ""
        lines.append(f"judge [{record_where(record, run_index if multi else None)}]: {verdict}"
                     + (f" — {text}" if text else ""))
    if len(negative) > max_judge:
        lines.append(f"... and {len(negative) - max_judge} more negative judge verdict(s)")
    return lines


def call_lines(calls: Sequence[FunctionCall]) -> list[str]:
    """Tool calls as `name(arg=value)` lines."""
    return [format_call(c) for c in calls]


def fmt_seconds(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.3f}"


__all__ = [
    "CaseOutcome",
    "SetCounts",
    "call_lines",
    "ci_text",
    "criterion_problem",
    "fmt_seconds",
    "invocation_tokens",
    "is_negative",
    "outcomes",
    "problems",
    "record_where",
    "set_counts",
]
