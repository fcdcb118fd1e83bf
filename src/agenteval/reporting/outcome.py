"""Why a case did not pass, in words shared by the console and file reports (JUnit, HTML,
Markdown). The verdicts themselves come from `agenteval.verdicts`.

The words are the reasons the criteria gave where they decided, as the result document stores
them (`EvalCaseResult.reasons`, `MetricSummary.reason`); nothing here recomputes a verdict. A
document written before reasons were recorded has none: `criterion_reason` then describes the
score against the threshold, the one place where that fallback lives.
"""

from __future__ import annotations

from collections.abc import Sequence

import agenteval.reporting.certificates as certificates
from agenteval.reporting.format import format_call, format_score
from agenteval.schema import (
    EvalCaseResult,
    EvalMetricResult,
    EvalStatus,
    FunctionCall,
    JudgeRecord,
    MetricSummary,
)
from agenteval.verdicts.outcome import CaseOutcome, unevaluated_reason


def ci_text(m: MetricSummary) -> str:
    """`[low, high]` of the 95% CI, or "-"."""
    if m.ci_low is None or m.ci_high is None:
        return "-"
    return f"[{format_score(m.ci_low)}, {format_score(m.ci_high)}]"


def criterion_reason(m: MetricSummary, gating: str, runs: Sequence[EvalCaseResult] = ()) -> str:
    """Why a criterion got its verdict: the reason stored with it (in the summary; for a single
    run that passed, in that run, given as `runs`). For a document without reasons (written by
    an older version, or by ADK), the score against the threshold (one run), or the mean, CI
    and passed runs under the gating rule (several runs); or that it was not evaluated."""
    if m.reason is not None:
        return m.reason if m.eval_status != EvalStatus.NOT_EVALUATED else f"not evaluated: {m.reason}"
    if len(runs) == 1 and (own := runs[0].reason(m.metric_name)) is not None:
        return own
    thr = "-" if m.threshold is None else format_score(m.threshold)
    if m.eval_status == EvalStatus.NOT_EVALUATED or m.mean is None:
        scored = f" ({m.scored_runs} of {m.runs} runs scored)" if m.runs > 1 else ""
        return f"not evaluated{scored}"
    if m.runs == 1:  # "<" only when true: a criterion may set its own status
        below = m.threshold is not None and m.mean < m.threshold
        return f"score {format_score(m.mean)} {'<' if below else 'vs'} threshold {thr}"
    return (f"mean {format_score(m.mean)} (95% CI {ci_text(m)}) vs threshold {thr}; "
            f"passed {m.passed_runs}/{m.runs} runs (gating: {gating})")


def result_reason(m: EvalMetricResult, stored: str | None, run: EvalCaseResult | None = None,
                  invocation: int | None = None) -> str | None:
    """Why one metric result (`run`'s, or its `invocation`'s) got its status: the reason
    stored with it; not evaluated, with the metric error of that invocation (else of the whole
    run) as the reason; for a document without reasons, the score against the threshold where
    it did not pass; None for a passing result with no stored reason."""
    if stored is not None:
        return stored
    if m.eval_status == EvalStatus.NOT_EVALUATED:
        errors = {e.invocation_index: e.message for e in (run.metric_errors if run else ())
                  if e.metric_name == m.metric_name}
        why = errors.get(invocation, errors.get(None))
        return "not evaluated" if why is None else f"not evaluated: {why}"
    if m.eval_status != EvalStatus.FAILED or m.score is None:
        return None
    thr = "-" if m.threshold is None else format_score(m.threshold)
    return f"score {format_score(m.score)} < threshold {thr}"


def criterion_problem(m: MetricSummary, gating: str) -> str:
    """Why a criterion failed, in one line: its name and `criterion_reason`."""
    return f"{m.metric_name}: {criterion_reason(m, gating)}"


def summary_problems(case: CaseOutcome) -> list[str]:
    """Why a case did not pass, from its criterion summaries alone (the history database's,
    which holds no runs but keeps a criterion's reason for not being evaluated): one
    `criterion_problem` line each."""
    return [criterion_problem(m, case.gating) for m in case.failing_metrics()]


# A case not passed without a criterion that did not pass: these say what else decided it (the
# runner's verdict, `verdicts.aggregate`): the agent's error in one of its runs (FAILED; the
# history's summary holds no runs, so not the error itself), or no gating criterion with a
# verdict (NOT_EVALUATED). Every report says it in these words.
AGENT_FAILED = "the agent failed (its error is kept with the case's runs)"
NO_GATING_VERDICT = "no gating criterion produced a verdict"
NOT_GATED = f"not evaluated: {NO_GATING_VERDICT}"


def not_gated(case: CaseOutcome) -> str:
    """`NOT_GATED`, naming the judged criteria its runs made advisory (a judge without the
    certificate `judge_certificates.require` asks for: scored, never gating), when there are:
    a case whose only criteria are advisory has no gating verdict, and is not evaluated
    rather than passed or failed on an uncalibrated judge's word."""
    advisory = sorted({n.metric_name for run in case.runs for n in run.judge_certificates if n.advisory})
    if not advisory:
        return NOT_GATED
    return (f"{NOT_GATED}: {', '.join(advisory)} {'is' if len(advisory) == 1 else 'are'} advisory, "
            "not gating (no certificate that judge_certificates.require accepts)")


def summary_why(case: CaseOutcome) -> list[str]:
    """Why a case did not pass, from its summary alone: `summary_problems`, else what else
    decided it (`AGENT_FAILED` or `not_gated`); [] for a case that passed. The words
    `runs show` and the web's run page both give."""
    if case.status == EvalStatus.PASSED:
        return []
    return summary_problems(case) or [AGENT_FAILED if case.status == EvalStatus.FAILED else not_gated(case)]


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
    """Every reason a case did not pass, one line each: failing criteria (their stored
    reasons; for one run, a not-evaluated criterion without one takes its metric error:
    `X: not evaluated: <error>`), other metric errors, inference errors, and the rationales of
    (at most `max_judge`) negative judge verdicts (every one, from the audit records, where a
    criterion's reason names the first that decided); a case not evaluated without a failing
    criterion starts with `not_gated`."""
    multi = case.num_runs > 1
    lines, said = [], set()
    for m in case.failing_metrics():
        # One run: a criterion that was not evaluated and stores no reason takes its (whole-run)
        # metric error as the reason (`unevaluated_reason`, as the history keeps it), one line
        # "X: not evaluated: <error>" rather than two.
        if not multi and m.eval_status == EvalStatus.NOT_EVALUATED and m.reason is None \
                and (why := unevaluated_reason(m, case.runs)) is not None:
            said.add(m.metric_name)
            lines.append(f"{m.metric_name}: not evaluated: {why}")
        else:
            lines.append(criterion_problem(m, case.gating))
    for run in case.runs:
        run_tag = f"run {run.run_index}: " if multi else ""
        if run.error_message:
            lines.append(f"{run_tag}inference failed: {run.error_message}")
        for err in run.metric_errors:
            if err.metric_name in said and err.invocation_index is None:
                continue  # said on its criterion's line
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
    if case.status == EvalStatus.NOT_EVALUATED and not case.failing_metrics():
        # First, whatever else is said: a negative verdict of an advisory judge alone read as
        # if it had failed the case (and no reason at all, as an empty one).
        lines.insert(0, not_gated(case))
    return lines


def report_why(case: CaseOutcome) -> list[str]:
    """Why a case did not pass as the file reports give it (Markdown's details, JUnit's
    failure text): `problems`, then each judged criterion's certificate line."""
    return [*problems(case), *map(certificates.line, certificates.notes(case.runs).values())]


def shown_why(summary: CaseOutcome, read: CaseOutcome | None) -> list[str]:
    """Why a case did not pass, as `runs show` and the web's run page say it: `report_why` of
    the case as its document holds it (`read`), else (its document not read) its summary's
    words (`summary_why`)."""
    return summary_why(summary) if read is None else report_why(read)


def call_lines(calls: Sequence[FunctionCall]) -> list[str]:
    """Tool calls as `name(arg=value)` lines."""
    return [format_call(c) for c in calls]


def fmt_seconds(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.3f}"


__all__ = [
    "AGENT_FAILED",
    "NOT_GATED",
    "NO_GATING_VERDICT",
    "call_lines",
    "ci_text",
    "criterion_problem",
    "criterion_reason",
    "fmt_seconds",
    "is_negative",
    "not_gated",
    "problems",
    "record_where",
    "report_why",
    "result_reason",
    "shown_why",
    "summary_problems",
    "summary_why",
]
