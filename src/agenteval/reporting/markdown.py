"""A Markdown summary for CI job pages (GitHub's `$GITHUB_STEP_SUMMARY`, GitLab, PR comments).

Totals per eval set, the judges' certificates, the case runs' warnings (passed or not), then
one table row per failing criterion of each failing case (score vs threshold; mean and 95% CI
when the case ran more than once), then each failing case's reasons in a collapsed `<details>`
block. Output stays well under GitHub's 1 MiB summary limit: at most
`max_cases` failing cases are listed (the rest are counted). All text from the result is
HTML-escaped and Markdown-escaped, so responses cannot inject markup; each character HTML
may not hold (NUL, ESC, ...) is written as `\\uXXXX`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

import agenteval.reporting.certificates as certificates
from agenteval.reporting.format import format_score, html_visible
from agenteval.reporting.outcome import ci_text, report_why
from agenteval.schema import EvalSetResult, EvalStatus, JudgeCertificateNote
from agenteval.verdicts.outcome import CaseOutcome, SetCounts, outcomes, set_counts

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
    certs = certificates.notes(case.runs)
    for m in case.failing_metrics():
        status = "not evaluated" if m.eval_status == EvalStatus.NOT_EVALUATED else "failed"
        criterion = md_escape(certificates.named(m.metric_name, certs))
        rows.append(f"| {name} | {criterion} | {_score_cell(case, m.mean, ci_text(m))} "
                    f"| {format_score(m.threshold)} | {status} |")
        name = ""
    if any(r.error_message for r in case.runs):
        rows.append(f"| {name} | (inference) | - | - | agent error |")
    elif not rows:  # no criterion with a verdict (a failed case has one, or an agent error)
        rows.append(f"| {name} | - | - | - | not evaluated |")
    return rows


def _details(case: CaseOutcome) -> str:
    text = "\n".join(report_why(case))
    if len(text) > _DETAIL_LIMIT:
        text = text[:_DETAIL_LIMIT] + "\n…"
    runs = f" ({case.num_runs} runs)" if case.num_runs > 1 else ""
    summary = html.escape(f"{case.eval_set_id} / {case.eval_id}{runs}")
    return (f"<details><summary>{summary}</summary>\n\n<pre>{html.escape(text)}</pre>\n\n"
            "</details>")


def _warning_lines(case: CaseOutcome) -> list[str]:
    """A case's runs' `warnings` (passed or not), one list item each."""
    runs = case.num_runs > 1
    name = f"{md_escape(case.eval_set_id)} / **{md_escape(case.eval_id)}**"
    return [f"- {name}{f' run {run.run_index}' if runs else ''}: {md_escape(w)}"
            for run in case.runs for w in run.warnings]


def markdown_summary(results: Sequence[EvalSetResult], max_cases: int = 100) -> str:
    """The Markdown summary of one or more eval-set results (see the module docstring)."""
    per_set = [(r, outcomes(r)) for r in results]
    counts = [(r.eval_set_id, set_counts(r, cases), r.gating) for r, cases in per_set]
    failed = [c for _, cases in per_set for c in cases if c.status != EvalStatus.PASSED]
    judges = certificates.notes(run for _, cases in per_set for c in cases for run in c.runs)
    warned = [line for _, cases in per_set for c in cases for line in _warning_lines(c)]
    return _render(counts, failed[:max_cases], len(failed), judges, (warned[:max_cases], len(warned)))


def _render(counts: Sequence[tuple[str, SetCounts, str]], shown: Sequence[CaseOutcome],
            failed: int, judges: dict[str, JudgeCertificateNote] | None = None,
            warned: tuple[Sequence[str], int] = ((), 0)) -> str:
    total = sum(c.total for _, c, _ in counts)
    icon = "✅" if total and not failed else "❌"
    out = [f"## {icon} agenteval: {total - failed} of {total} case(s) passed", "",
           "| eval set | cases | passed | failed | not evaluated | runs | gating |",
           "|---|---:|---:|---:|---:|---:|---|"]
    for eval_set_id, c, gating in counts:
        out.append(f"| {md_escape(eval_set_id)} | {c.total} | {c.passed} | {c.failed} "
                   f"| {c.not_evaluated} | {c.max_runs} | {md_escape(gating)} |")
    if judges:  # every judged criterion's calibration certificate, or that it has none
        out += ["", *(f"- judge certificate, {md_escape(certificates.line(n))}" for n in judges.values())]
    lines, total_warned = warned
    if lines:  # what runs said of themselves, passed or not (a conversation the turn limit ended)
        out += ["", "### Warnings", "", *lines]
        if total_warned > len(lines):
            out.append(f"- … and {total_warned - len(lines)} more warning(s), in the result document")
    if not failed:
        return html_visible("\n".join(out)) + "\n"
    out += ["", "### Failing cases", "",
            "| case | criterion | score | threshold | status |", "|---|---|---|---:|---|"]
    for case in shown:
        out += _failure_rows(case)
    if failed > len(shown):
        out += ["", f"… and {failed - len(shown)} more failing case(s), not listed here; "
                "see the HTML or JUnit report."]
    out += ["", "### Details", ""]
    out += [_details(case) for case in shown]
    return html_visible("\n".join(out)) + "\n"  # (a response's NUL or ESC is no text for a page)


class MarkdownStream:
    """The Markdown summary of one eval set's run, gathered as its cases are decided: counts,
    and the first `max_cases` cases that did not pass (all the summary lists), so memory does
    not grow with the run. `text` gives what `markdown_summary` gives for the same run."""

    def __init__(self, max_cases: int = 100) -> None:
        self.max_cases = max_cases
        self.statuses = dict.fromkeys(EvalStatus, 0)
        self.max_runs = 0
        self.shown: list[CaseOutcome] = []
        self.judges: dict[str, JudgeCertificateNote] = {}
        self.warned: list[str] = []
        self.total_warned = 0

    def add(self, case: CaseOutcome) -> None:
        # The weakest note of the run's cases, as `markdown_summary` shows (not the first case's).
        certificates.keep_weakest(self.judges, certificates.notes(case.runs).values())
        warned = _warning_lines(case)
        self.warned += warned[:self.max_cases - len(self.warned)]
        self.total_warned += len(warned)
        self.statuses[case.status] += 1
        self.max_runs = max(self.max_runs, case.num_runs)
        if case.status != EvalStatus.PASSED and len(self.shown) < self.max_cases:
            self.shown.append(case)

    def text(self, result: EvalSetResult) -> str:
        """The summary, for the document `result` (its eval set and gating)."""
        s = self.statuses
        counts = SetCounts(sum(s.values()), s[EvalStatus.PASSED], s[EvalStatus.FAILED],
                           s[EvalStatus.NOT_EVALUATED], self.max_runs)
        return _render([(result.eval_set_id, counts, result.gating)], self.shown,
                       counts.total - counts.passed, self.judges, (self.warned, self.total_warned))


__all__ = ["MarkdownStream", "markdown_summary", "md_escape"]
