"""Console report: the run summary, a per-case criterion table, and per-invocation details.

Functions build rich renderables; printing them is the front end's job.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agenteval.schema import (
    EvalCaseResult,
    EvalMetricResult,
    EvalSetResult,
    EvalStatus,
    FunctionCall,
    Invocation,
    content_text,
)

_STYLE = {
    EvalStatus.PASSED: "green",
    EvalStatus.FAILED: "red",
    EvalStatus.NOT_EVALUATED: "yellow",
    EvalStatus.INFORMATIONAL: "cyan",
}


def status_text(status: EvalStatus) -> Text:
    return Text(status.name, style=_STYLE[status])


def format_value(value: Any) -> str:
    """A compact, readable value: JSON for containers and strings, repr otherwise."""
    if isinstance(value, (dict, list, str)):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def format_call(call: FunctionCall) -> str:
    """`name(arg=value, ...)`."""
    args = ", ".join(f"{k}={format_value(v)}" for k, v in (call.args or {}).items())
    return f"{call.name}({args})"


def format_calls(inv: Invocation | None) -> str:
    return "\n".join(format_call(c) for c in inv.tool_calls()) if inv else ""


def format_score(score: float | None) -> str:
    if score is None:
        return "-"
    return f"{score:.4g}"


def summary(results: Sequence[EvalSetResult]) -> RenderableType:
    """The Eval Run Summary: passed and failed cases per eval set (over runs, by the gating rule)."""
    table = Table(title="Eval Run Summary", title_justify="left")
    table.add_column("eval set")
    table.add_column("passed", justify="right", style="green")
    table.add_column("failed", justify="right", style="red")
    for result in results:
        cases = result.summary
        passed = sum(1 for c in cases if c.final_eval_status == EvalStatus.PASSED)
        table.add_row(result.eval_set_id, str(passed), str(len(cases) - passed))
    return table


def repeat_table(results: Sequence[EvalSetResult]) -> RenderableType:
    """Per case and criterion over repeated runs: mean ± std, 95% CI, pass@k, pass^k, verdict."""
    table = Table(title="Repeated runs", title_justify="left")
    for col in ("eval id", "runs", "criterion", "mean", "std", "95% CI", "pass@k", "pass^k", "verdict"):
        table.add_column(col, overflow="fold")
    for result in results:
        for case in result.summary:
            first = True
            for m in case.metrics:
                if m.eval_status == EvalStatus.INFORMATIONAL:
                    continue
                ci = "-" if m.ci_low is None else f"[{format_score(m.ci_low)}, {format_score(m.ci_high)}]"
                table.add_row(case.eval_id if first else "", str(case.runs) if first else "",
                              m.metric_name, format_score(m.mean), format_score(m.std), ci,
                              format_score(m.pass_at_k), format_score(m.pass_pow_k),
                              status_text(m.eval_status))
                first = False
    table.caption = f"gating: {results[0].gating if results else 'mean'}"
    return table


def _threshold(m: EvalMetricResult) -> str:
    return "-" if m.threshold is None else format_score(m.threshold)


def case_table(results: Iterable[EvalCaseResult]) -> RenderableType:
    """One row per case and criterion: status, score, threshold, and any error."""
    table = Table(show_lines=False)
    for col in ("eval id", "run", "case", "criterion", "status", "score", "threshold"):
        table.add_column(col, justify="right" if col in ("score", "threshold", "run") else "left",
                         overflow="fold", min_width=6 if col != "criterion" else 24)
    for case in results:
        first = True
        errors = {e.metric_name: e.message for e in case.metric_errors if e.invocation_index is None}
        rows: list[tuple[str, Text, str, str]] = [
            (m.metric_name, status_text(m.eval_status), format_score(m.score), _threshold(m))
            for m in case.overall_eval_metric_results
            # Informational metrics are shown in the detailed report; here they are noise.
            if m.eval_status != EvalStatus.INFORMATIONAL
        ]
        if case.error_message:
            rows = [("(inference)", status_text(EvalStatus.FAILED), "-", "-")]
        for name, status, score, thr in rows:
            label = Text(name)
            if name in errors:
                label.append(f"\n{errors[name]}", style="yellow")
            table.add_row(case.eval_id if first else "", str(case.run_index) if first else "",
                          status_text(case.final_eval_status) if first else Text(""),
                          label, status, score, thr)
            first = False
        if case.error_message:
            table.add_row("", "", "", Text(case.error_message, style="red"), "", "", "")
    return table


def invocation_details(case: EvalCaseResult) -> RenderableType:
    """Per invocation: prompt, expected and actual response and tool calls, and scores."""
    parts: list[RenderableType] = [
        Text(f"{case.eval_set_id} / {case.eval_id}  run {case.run_index}: ", style="bold")
        + status_text(case.final_eval_status)
    ]
    if case.error_message:
        parts.append(Text(f"inference failed: {case.error_message}", style="red"))
    for i, per in enumerate(case.eval_metric_result_per_invocation):
        table = Table(title=f"invocation {i}", title_justify="left", show_header=False,
                      show_lines=True, expand=True)
        table.add_column("field", style="bold", no_wrap=True)
        table.add_column("value", overflow="fold")
        expected = per.expected_invocation
        actual = per.actual_invocation
        table.add_row("prompt", content_text(actual.user_content))
        if expected is not None:
            table.add_row("expected response", content_text(expected.final_response))
        table.add_row("actual response", content_text(actual.final_response))
        if expected is not None:
            table.add_row("expected tool calls", format_calls(expected))
        table.add_row("actual tool calls", format_calls(actual))
        scores = Text()
        for m in per.eval_metric_results:
            scores.append(f"{m.metric_name}: ")
            if m.eval_status == EvalStatus.INFORMATIONAL:
                scores.append(format_score(m.score))
            else:
                scores.append(f"{m.eval_status.name} ({format_score(m.score)})",
                              style=_STYLE[m.eval_status])
            scores.append("\n")
        scores.rstrip()
        table.add_row("scores", scores)
        verdicts = [r for r in case.judge_records if r.invocation_index == i]
        if verdicts:
            lines = Text()
            for r in verdicts:
                label = f"{r.metric_name}{f' [{r.item}]' if r.item else ''}: "
                lines.append(label, style="bold")
                if r.step and not r.error:  # a preparatory note, not a verdict
                    lines.append(r.step, style="cyan")
                else:
                    style = "green" if r.score == 1.0 else "red" if r.score == 0.0 else "yellow"
                    lines.append(f"{r.verdict or 'no verdict'}", style=style)
                lines.append(f" — {r.rationale or r.error or ''}\n")
                if r.screened:
                    cut = "; ".join(repr(c) for c in r.screened)
                    lines.append(f"  cut before judging (addressed to the judge): {cut}\n", style="dim")
            lines.rstrip()
            table.add_row("judge rationales", lines)
        parts.append(table)
    for err in case.metric_errors:
        where = "" if err.invocation_index is None else f" (invocation {err.invocation_index})"
        parts.append(Text(f"{err.metric_name}{where}: {err.message}", style="yellow"))
    return Group(*parts)


def console_report(results: Sequence[EvalSetResult], detailed: bool = False,
                   max_cases: int | None = None) -> list[RenderableType]:
    """What a run's report shows, in order: per-invocation details (when `detailed`), the case
    table, the repeated-run table (when cases ran more than once) and the summary. Past
    `max_cases` case runs (and not `detailed`) the table lists only those that did not pass,
    at most `max_cases`, after a line that says so."""
    cases = [c for r in results for c in r.eval_case_results]
    out: list[RenderableType] = []
    if detailed:
        out += [invocation_details(case) for case in cases]
    shown = cases
    if max_cases is not None and len(cases) > max_cases and not detailed:
        # A 10,000-row table helps nobody and costs more than scoring: show what did not pass.
        shown = [c for c in cases if c.final_eval_status != EvalStatus.PASSED][:max_cases]
        out.append(f"{len(cases)} case runs; showing {len(shown)} that did not pass "
                   "(all are in the result document; --print_detailed_results shows all)")
    out.append(case_table(shown))
    if any(s.runs > 1 for r in results for s in r.summary):
        out.append(repeat_table(results))
    out.append(summary(results))
    return out
