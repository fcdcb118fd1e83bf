"""Console report: the run summary, a per-case criterion table, and per-invocation details.

Functions build rich renderables; printing them is the front end's job. The tables are built
for the width they are printed at (`reporting.tables`): at 80 columns they change layout rather
than break criterion names mid-word or squeeze columns to nothing. Values, calls and scores are
written as every report writes them (`reporting.format`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

import agenteval.reporting.certificates as certificates
from agenteval.reporting.format import format_calls, format_score, terminal_visible
from agenteval.reporting.tables import ID_FLOOR, ByWidth, Col, fit_table, pack
from agenteval.schema import (
    CaseSummary,
    EvalCaseResult,
    EvalMetricResult,
    EvalSetResult,
    EvalStatus,
    MetricSummary,
    content_text,
)

# Case runs a run's table lists at most (then only those that did not pass): a 10,000-row table
# helps nobody and costs more than scoring.
TABLE_CASES = 50

_STYLE = {
    EvalStatus.PASSED: "green",
    EvalStatus.FAILED: "red",
    EvalStatus.NOT_EVALUATED: "yellow",
    EvalStatus.INFORMATIONAL: "cyan",
}


def status_text(status: EvalStatus) -> Text:
    return Text(status.name, style=_STYLE[status])


INDENT = "  "  # criteria under their case in the grouped layouts


def _longest(names: Iterable[str], least: int = 0) -> int:
    return max([least, *(cell_len(n) for n in names)])


# --- the tables -----------------------------------------------------------------------------


def summary(results: Sequence[EvalSetResult]) -> RenderableType:
    """The Eval Run Summary: passed, failed and not evaluated cases per eval set (over runs, by
    the gating rule). A long eval set id folds; it is never cut."""
    counts = []
    for result in results:
        statuses = [c.final_eval_status for c in result.summary]
        counts.append((result.eval_set_id, statuses.count(EvalStatus.PASSED),
                       statuses.count(EvalStatus.FAILED), statuses.count(EvalStatus.NOT_EVALUATED)))
    return summary_table(counts)


def summary_table(counts: Sequence[tuple[str, int, int, int]]) -> RenderableType:
    """The Eval Run Summary from (eval set id, passed, failed, not evaluated) counts; the not
    evaluated column only when a set has such a case (counted apart, as Markdown and JUnit
    count them: it was counted as failed)."""
    apart = any(n for *_, n in counts)
    rows = [(eval_set_id, str(passed), str(failed), *([str(n)] if apart else []))
            for eval_set_id, passed, failed, n in counts]
    cols = (Col("eval set", floor=ID_FLOOR), Col("passed", "right", style="green"),
            Col("failed", "right", style="red"),
            *([Col("not evaluated", "right", style="yellow")] if apart else []))
    return ByWidth(lambda width: fit_table(cols, rows, width, force=True, title="Eval Run Summary",
                                           title_justify="left"))


def _ci(m: MetricSummary) -> str:
    return "-" if m.ci_low is None else f"[{format_score(m.ci_low)}, {format_score(m.ci_high)}]"


def repeat_table(results: Sequence[EvalSetResult]) -> RenderableType:
    """Per case and criterion over repeated runs: mean ± std, 95% CI, pass@k, pass^k, verdict.
    A column per statistic where they fit; narrower, each case on a row above its criteria and
    the statistics, labelled, on lines beneath each criterion's name."""
    cases = [(case, [m for m in case.metrics if m.eval_status != EvalStatus.INFORMATIONAL])
             for result in results for case in result.summary]
    names = _longest(m.metric_name for _, metrics in cases for m in metrics)
    verdicts = _longest((m.eval_status.name for _, metrics in cases for m in metrics), len("verdict"))
    gating = f"gating: {results[0].gating if results else 'mean'}"

    def wide(width: int) -> Table | None:
        rows = [(case.eval_id if i == 0 else "", str(case.runs) if i == 0 else "", m.metric_name,
                 format_score(m.mean), format_score(m.std), _ci(m), format_score(m.pass_at_k),
                 format_score(m.pass_pow_k), status_text(m.eval_status))
                for case, metrics in cases for i, m in enumerate(metrics)]
        cols = (Col("eval id", floor=ID_FLOOR), Col("runs", "right"), Col("criterion", floor=names),
                *(Col(h, "right") for h in ("mean", "std", "95% CI", "pass@k", "pass^k")), Col("verdict"))
        return fit_table(cols, rows, width, title="Repeated runs", title_justify="left", caption=gating)

    def stacked(width: int) -> Table:
        # The first column takes all the width the verdicts leave; the statistics are packed
        # into it so that a label never parts from its value.
        room = width - (3 * 2 + 1) - verdicts - len(INDENT) * 2  # two boxed, padded columns
        rows: list[tuple[Text, Text]] = []
        for case, metrics in cases:
            rows.append((Text(case.eval_id, style="bold") + Text(f"  {case.runs} runs", style="dim"),
                         Text("")))
            for m in metrics:
                stats = (f"mean {format_score(m.mean)}", f"std {format_score(m.std)}", f"95% CI {_ci(m)}",
                         f"pass@k {format_score(m.pass_at_k)}", f"pass^k {format_score(m.pass_pow_k)}")
                lines = pack(stats, room, "  ").split("\n")
                label = Text(INDENT + m.metric_name)
                for line in lines:
                    label.append(f"\n{INDENT * 2}{line}", style="dim")
                rows.append((label, status_text(m.eval_status)))
        cols = (Col("eval id / criterion", floor=max(names + len(INDENT), ID_FLOOR)), Col("verdict"))
        return fit_table(cols, rows, width, force=True, title="Repeated runs", title_justify="left",
                         caption=gating)

    return ByWidth(lambda width: wide(width) or stacked(width))


def _threshold(m: EvalMetricResult) -> str:
    return "-" if m.threshold is None else format_score(m.threshold)


@dataclass(frozen=True)
class _Line:
    """One criterion of a case in `case_table`: name, status, score, threshold, and any error."""

    name: str
    status: Text
    score: str
    threshold: str
    error: str | None = None


def _lines(case: EvalCaseResult) -> list[_Line]:
    if case.error_message:
        return [_Line("(inference)", status_text(EvalStatus.FAILED), "-", "-")]
    errors = {e.metric_name: e.message for e in case.metric_errors if e.invocation_index is None}
    # A judged criterion's name carries its calibration certificate's tag.
    certs = certificates.notes([case])
    # Under a criterion that did not pass: its error, else the reason stored with it.
    return [_Line(certificates.named(m.metric_name, certs), status_text(m.eval_status),
                  format_score(m.score), _threshold(m),
                  errors.get(m.metric_name) or (certificates.untagged(case.reason(m.metric_name),
                                                                      certs.get(m.metric_name))
                                                if m.eval_status != EvalStatus.PASSED else None))
            for m in case.overall_eval_metric_results
            # Informational metrics are shown in the detailed report; here they are noise. An
            # advisory judge (informational for want of a certificate) is shown, saying so.
            if m.eval_status != EvalStatus.INFORMATIONAL
            or (m.metric_name in certs and certs[m.metric_name].advisory)]


def _indented(text: str, width: int, indent: str) -> str:
    """`text` wrapped at spaces to `width`, every line behind `indent` (a word too long for a
    line is left for rich to fold)."""
    return "\n".join(indent + line for para in text.split("\n")
                     for line in pack(para.split(" "), width - cell_len(indent), " ").split("\n"))


def case_table(results: Iterable[EvalCaseResult]) -> RenderableType:
    """One row per case and criterion: status, score, threshold, and any error (else, for a
    criterion that did not pass, the reason stored with it). Built for the
    width it is printed at: a column per field where they fit (a long eval id folds);
    narrower, each case (id, run, status) on a row above its indented criteria; narrower
    still, each criterion's score and threshold on a line beneath its name. A criterion name
    is never broken while the narrowest layout has room for it. Run numbers are shown only
    when some case ran more than once. A case run's `warnings` (a conversation the simulator's
    turn limit ended, a value that lost information) follow its criteria, passed or not."""
    cases = [(case, _lines(case)) for case in results]
    names = _longest((line.name for _, lines in cases for line in lines), len("(inference)"))
    statuses = _longest([*(line.status.plain for _, lines in cases for line in lines),
                         *(case.final_eval_status.name for case, _ in cases)], len("status"))
    runs = any(case.run_index for case, _ in cases)  # show run numbers only when there are several

    def wide(width: int) -> Table | None:
        rows: list[tuple[str | Text, ...]] = []
        for case, lines in cases:
            for i, line in enumerate(lines):
                label = Text(line.name)
                if line.error:
                    label.append(f"\n{line.error}", style="yellow")
                rows.append((case.eval_id if i == 0 else "", str(case.run_index) if i == 0 else "",
                             status_text(case.final_eval_status) if i == 0 else "",
                             label, line.status, line.score, line.threshold))
            if case.error_message:
                rows.append(("", "", "", Text(case.error_message, style="red"), "", "", ""))
            rows += [("", "", "", Text(f"warning: {w}", style="yellow"), "", "", "") for w in case.warnings]
        cols = [Col("eval id", floor=ID_FLOOR), Col("run", "right"), Col("case"),
                Col("criterion", floor=names), Col("status"), Col("score", "right"),
                Col("threshold", "right")]
        if not runs:  # every case ran once: a column of zeros says nothing
            cols.pop(1)
            rows = [r[:1] + r[2:] for r in rows]
        return fit_table(cols, rows, width)

    def grouped(width: int, stack: bool) -> tuple[list[Col], list[tuple[str | Text, ...]]]:
        cols = [Col("eval id / criterion", floor=max(names + len(INDENT), ID_FLOOR)), Col("status")]
        if not stack:
            cols += [Col("score", "right"), Col("threshold", "right")]
        # The first column gets what the others leave; messages are wrapped to it by hand so
        # that they stay indented under their criterion.
        others = statuses + (0 if stack else (
            _longest((line.score for _, lines in cases for line in lines), len("score"))
            + _longest((line.threshold for _, lines in cases for line in lines), len("threshold"))))
        room = width - 3 * len(cols) - 1 - others
        rows: list[tuple[str | Text, ...]] = []
        for case, lines in cases:
            head = Text(case.eval_id, style="bold")
            if runs:
                head.append(f"  run {case.run_index}", style="dim")
            rows.append((head, status_text(case.final_eval_status), "", ""))
            for line in lines:
                label = Text(INDENT + line.name)
                if stack and (line.score, line.threshold) != ("-", "-"):
                    label.append(f"\n{INDENT * 2}score {line.score}  threshold {line.threshold}",
                                 style="dim")
                if line.error:
                    label.append("\n" + _indented(line.error, room, INDENT * 2), style="yellow")
                rows.append((label, line.status, line.score, line.threshold))
            if case.error_message:
                rows.append((Text(_indented(case.error_message, room, INDENT), style="red"), "", "", ""))
            rows += [(Text(_indented(f"warning: {w}", room, INDENT), style="yellow"), "", "", "")
                     for w in case.warnings]
        return cols, [r[:len(cols)] for r in rows]

    def build(width: int) -> Table:
        return (wide(width) or fit_table(*grouped(width, False), width)
                or fit_table(*grouped(width, True), width, force=True))

    return ByWidth(build)


def invocation_details(case: EvalCaseResult) -> RenderableType:
    """Per invocation: prompt, expected and actual response and tool calls, and scores with the
    reasons stored with them."""
    parts: list[RenderableType] = [
        Text(terminal_visible(f"{case.eval_set_id} / {case.eval_id}  run {case.run_index}: "), style="bold")
        + status_text(case.final_eval_status)
    ]
    if case.error_message:
        parts.append(Text(terminal_visible(f"inference failed: {case.error_message}"), style="red"))
    for note in case.judge_certificates:
        parts.append(Text(certificates.line(note), style="dim" if note.status == "certified" else "yellow"))
    for i, per in enumerate(case.eval_metric_result_per_invocation):
        table = Table(title=f"invocation {i}", title_justify="left", show_header=False,
                      show_lines=True, expand=True)
        table.add_column("field", style="bold", no_wrap=True)
        # All the spare width goes to the values; the labels keep their natural width.
        table.add_column("value", overflow="fold", ratio=1)
        expected = per.expected_invocation
        actual = per.actual_invocation
        # The values as plain Text: an answer's "[/]" is data, never rich markup.
        table.add_row("prompt", Text(terminal_visible(content_text(actual.user_content))))
        if expected is not None:
            table.add_row("expected response", Text(terminal_visible(content_text(expected.final_response))))
        table.add_row("actual response", Text(terminal_visible(content_text(actual.final_response))))
        if expected is not None:
            table.add_row("expected tool calls", Text(terminal_visible(format_calls(expected))))
        table.add_row("actual tool calls", Text(terminal_visible(format_calls(actual))))
        scores = Text()
        for m in per.eval_metric_results:
            scores.append(f"{m.metric_name}: ")
            if m.eval_status == EvalStatus.INFORMATIONAL:
                scores.append(format_score(m.score))
            else:
                scores.append(f"{m.eval_status.name} ({format_score(m.score)})",
                              style=_STYLE[m.eval_status])
            if (why := case.reason(m.metric_name, i)) is not None:
                scores.append(terminal_visible(f" — {why}"), style="dim")
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
                lines.append(terminal_visible(f" — {r.rationale or r.error or ''}") + "\n")
                if r.screened:
                    cut = "; ".join(repr(c) for c in r.screened)
                    lines.append(f"  cut before judging (addressed to the judge): {cut}\n", style="dim")
                if r.flagged:  # in tool results, user turns or the reference: quoted whole
                    found = "; ".join(repr(c) for c in r.flagged)
                    lines.append(f"  addressed to the judge in the quoted material: {found}\n", style="dim")
            lines.rstrip()
            table.add_row("judge rationales", lines)
        parts.append(table)
        if case.trace is not None:
            # (imported here: the trace's tree, with `html`, is for detailed reports only)
            from agenteval.reporting.trace import trace_tree

            parts.append(trace_tree(case.trace, f"trace of invocation {i}", invocation=i))
    for err in case.metric_errors:
        where = "" if err.invocation_index is None else f" (invocation {err.invocation_index})"
        parts.append(Text(terminal_visible(f"{err.metric_name}{where}: {err.message}"), style="yellow"))
    return Group(*parts)


# Where a table of some case runs says the others are (`eval` and `score` print them all with
# --print_detailed_results).
SHOWS_ALL = "all are in the result document; --print_detailed_results shows all"


def streamed_cases(case_runs: int, first: Sequence[EvalCaseResult], not_passed: Sequence[EvalCaseResult],
                   max_cases: int, shows_all: str = SHOWS_ALL) -> list[RenderableType]:
    """The head of `streamed_report`: the case table (of the first case runs, or past
    `max_cases` of those that did not pass, after a line that says so and where the others
    are: `shows_all`)."""
    out: list[RenderableType] = []
    shown = first
    if case_runs > max_cases:
        shown = not_passed
        out.append(f"{case_runs} case runs; showing {len(shown)} that did not pass ({shows_all})")
    out.append(case_table(shown))
    return out


def streamed_report(eval_set_id: str, case_runs: int, cases: int, passed: int,
                    first: Sequence[EvalCaseResult], not_passed: Sequence[EvalCaseResult],
                    summaries: Sequence[CaseSummary], max_cases: int, not_evaluated: int = 0,
                    cases_table: bool = True, gating: str = "mean",
                    shows_all: str = SHOWS_ALL) -> list[RenderableType]:
    """`console_report` of a run scored in bounded memory, from its counts, its first
    `max_cases` case runs, its first `max_cases` that did not pass, and its first `max_cases`
    cases' verdicts over their runs (the repeated-run table, when cases ran more than once).
    Without `cases_table`, all but its head (`streamed_cases`, printed already). `gating`: the
    run's `repeat_gating`, named under the repeated-run table."""
    out = streamed_cases(case_runs, first, not_passed, max_cases, shows_all) if cases_table else []
    if any(s.runs > 1 for s in summaries):
        shell = EvalSetResult(eval_set_result_id="", eval_set_id=eval_set_id, summary=list(summaries),
                              gating=gating)
        if cases > len(summaries):
            out.append(f"{cases} cases; repeated runs of the first {len(summaries)} below "
                       "(all are in the result document)")
        out.append(repeat_table([shell]))
    out.append(summary_table([(eval_set_id, passed, cases - passed - not_evaluated, not_evaluated)]))
    return out


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
        out.append(f"{len(cases)} case runs; showing {len(shown)} that did not pass ({SHOWS_ALL})")
    out.append(case_table(shown))
    if any(s.runs > 1 for r in results for s in r.summary):
        out.append(repeat_table(results))
    out.append(summary(results))
    return out
