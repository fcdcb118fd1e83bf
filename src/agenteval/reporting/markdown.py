"""A Markdown summary for CI job pages (GitHub's `$GITHUB_STEP_SUMMARY`, GitLab, PR comments).

Totals per eval set, then one table row per failing criterion of each failing case (score vs
threshold; mean and 95% CI when the case ran more than once), then each failing case's reasons
in a collapsed `<details>` block. Output stays well under GitHub's 1 MiB summary limit: at most
`max_cases` failing cases are listed (the rest are counted). All text from the result is
HTML-escaped and Markdown-escaped, so responses cannot inject markup.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from agenteval.reporting.console import format_score
from agenteval.reporting.outcome import ci_text, problems
from agenteval.schema import EvalSetResult, EvalStatus
from agenteval.verdicts.outcome import CaseOutcome, outcomes, set_counts

# Characters Markdown acts on inside a table cell; `_` only at a word boundary (GFM ignores
# intraword underscores, so `case_0001` stays readable).
_MD_SPECIAL = re.compile(r"([\\`*\[\]|~])|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
_DETAIL_LIMIT = 2000


def md_escape(text: str) -> str:
    """Text safe inside a Markdown table cell: HTML-escaped, Markdown emphasis, code, link and
    pipe characters backslash-escaped, newlines as `<br>`."""
    escaped = html.escape(text, quote=False)
    escaped = _MD_SPECIAL.sub(lambda m: "\\" + m.group(), escaped)
    return escaped.replace("\r\n", "\n").replace("\n", "<br>")


def _score_cell(case: CaseOutcome, value: float | None, ci: str) -> str:
    if case.num_runs > 1 and value is not None:
        return f"{format_score(value)} {md_escape(ci)} (mean of {case.num_runs})"
    return format_score(value)


def _failure_rows(case: CaseOutcome) -> list[str]:
    name = f"{md_escape(case.eval_set_id)} / **{md_escape(case.eval_id)}**"
    rows = []
    for m in case.failing_metrics():
        status = "not evaluated" if m.eval_status == EvalStatus.NOT_EVALUATED else "failed"
        rows.append(f"| {name} | {md_escape(m.metric_name)} | {_score_cell(case, m.mean, ci_text(m))} "
                    f"| {format_score(m.threshold)} | {status} |")
        name = ""
    if any(r.error_message for r in case.runs):
        rows.append(f"| {name} | (inference) | - | - | agent error |")
    elif not rows:
        rows.append(f"| {name} | - | - | - | failed |")
    return rows


def _details(case: CaseOutcome) -> str:
    text = "\n".join(problems(case))
    if len(text) > _DETAIL_LIMIT:
        text = text[:_DETAIL_LIMIT] + "\n…"
    runs = f" ({case.num_runs} runs)" if case.num_runs > 1 else ""
    summary = html.escape(f"{case.eval_set_id} / {case.eval_id}{runs}")
    return (f"<details><summary>{summary}</summary>\n\n<pre>{html.escape(text)}</pre>\n\n"
            "</details>")


def markdown_summary(results: Sequence[EvalSetResult], max_cases: int = 100) -> str:
    """The Markdown summary of one or more eval-set results (see the module docstring)."""
    per_set = [(r, outcomes(r)) for r in results]
    counts = [(r, set_counts(r, cases)) for r, cases in per_set]
    total = sum(c.total for _, c in counts)
    failed = [c for _, cases in per_set for c in cases if c.status != EvalStatus.PASSED]
    icon = "✅" if total and not failed else "❌"
    out = [f"## {icon} agenteval: {total - len(failed)} of {total} case(s) passed", "",
           "| eval set | cases | passed | failed | not evaluated | runs | gating |",
           "|---|---:|---:|---:|---:|---:|---|"]
    for r, c in counts:
        out.append(f"| {md_escape(r.eval_set_id)} | {c.total} | {c.passed} | {c.failed} "
                   f"| {c.not_evaluated} | {c.max_runs} | {md_escape(r.gating)} |")
    if not failed:
        return "\n".join(out) + "\n"
    shown = failed[:max_cases]
    out += ["", "### Failing cases", "",
            "| case | criterion | score | threshold | status |", "|---|---|---|---:|---|"]
    for case in shown:
        out += _failure_rows(case)
    if len(failed) > len(shown):
        out += ["", f"… and {len(failed) - len(shown)} more failing case(s), not listed here; "
                "see the HTML or JUnit report."]
    out += ["", "### Details", ""]
    out += [_details(case) for case in shown]
    return "\n".join(out) + "\n"


__all__ = ["markdown_summary", "md_escape"]
