"""One self-contained HTML report: inline CSS, no external assets, no script.

Layout: the run summary (cases passed / failed per eval set, gating, criterion pass rates), then
one collapsible block per case (failing cases first, the first 50 expanded): status, the
criterion table (score, threshold, status; mean, std, 95% CI, pass@k, pass^k when the case ran
more than once; why: the reason stored with the criterion's verdict), metric and inference
errors, and per run and invocation the prompt, expected vs actual response, a tool-call diff (a
visual aid: why the trajectory criterion decided as it did is its stored reason) and
per-invocation scores with their reasons, plus judge verdicts with
rationales (judge prompts and replies too for negative verdicts) and per-rubric scores. A
checkbox hides passing cases without warnings (CSS only). Every string from the result is escaped with
`html.escape`, and each character HTML may not hold (NUL, ESC, ...) written as `\\uXXXX`.

Size cap: per-invocation detail (and judge records) is rendered for at most `detail_limit`
cases, failing cases first, then passing ones in order; the other cases keep their status,
criterion table and errors, and say that detail was omitted. Texts longer than `text_limit`
characters are clipped. The 10,000-case bench corpus gives 10.6 MB with the defaults, 6.6 MB with
`detail_limit=0` (bench/README.md).
"""

from __future__ import annotations

import difflib
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime, timezone
from html import escape

import agenteval.reporting.certificates as certificates
from agenteval.errors import DataError
from agenteval.reporting.agent_tree import agent_tree_html, case_agents, multi_agent
from agenteval.reporting.format import format_score, html_visible
from agenteval.reporting.outcome import (
    call_lines,
    ci_text,
    criterion_reason,
    fmt_seconds,
    is_negative,
    not_gated,
    record_where,
)
from agenteval.reporting.trace import trace_html
from agenteval.schema import (
    EvalCaseResult,
    EvalMetricResultPerInvocation,
    EvalSetResult,
    EvalStatus,
    JudgeCertificateNote,
    JudgeRecord,
    content_text,
)
from agenteval.verdicts.outcome import CaseOutcome, SetCounts, outcomes, set_counts

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:1.5em;color:#1d1d1f}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.4em}h4,h5{margin:.6em 0 .2em}
table{border-collapse:collapse;margin:.3em 0}th,td{border:1px solid #d8d8d8;padding:2px 7px;
text-align:left;vertical-align:top}th{background:#f4f4f6}td.n{text-align:right}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font:12px/1.4 ui-monospace,Menlo,monospace}
.P{color:#17702f}.F{color:#b3261e}.N{color:#8a6100}.I{color:#33658a}
details.c{border-left:4px solid #17702f;margin:.35em 0;padding:.1em .6em}
details.c.cF,details.c.cN{border-color:#b3261e}summary{cursor:pointer}
.io td{width:45%}.io th{width:8em}.m{background:#fde3e1}.x{background:#fff1c2}.e{color:#555}
.agents ul{margin:0}.note{color:#666;font-size:.92em}.err{color:#b3261e}ul{margin:.2em 0;padding-left:1.4em}
#hp:checked~#cases .cP:not(.cW){display:none}
.trace{font-size:.92em;margin:.2em 0 .6em}
"""
_OPEN = 50  # failing cases shown expanded
_LETTER = {EvalStatus.PASSED: "P", EvalStatus.FAILED: "F", EvalStatus.NOT_EVALUATED: "N",
           EvalStatus.INFORMATIONAL: "I"}


def _e(text: str, limit: int | None = None) -> str:
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"… ({len(text) - limit} more characters)"
    return escape(text, quote=True)


def _status(status: EvalStatus) -> str:
    return f'<b class="{_LETTER[status]}">{status.name}</b>'


def _row(cells: Sequence[str], head: bool = False) -> str:
    tag = "th" if head else "td"
    return "<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>"


def tool_call_diff(expected: Sequence[str], actual: Sequence[str]) -> list[tuple[str, str]]:
    """An order-aware line diff of formatted calls: (" ", call) in both, ("-", call) expected
    but not made, ("+", call) made but not expected. A visual aid only: the trajectory
    criterion's match type (EXACT / IN_ORDER / ANY_ORDER) decides the score."""
    out: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(a=list(expected), b=list(actual), autojunk=False)
    for op, a1, a2, b1, b2 in matcher.get_opcodes():
        if op == "equal":
            out += [(" ", line) for line in expected[a1:a2]]
        else:
            out += [("-", line) for line in expected[a1:a2]]
            out += [("+", line) for line in actual[b1:b2]]
    return out


def _diff_html(per: EvalMetricResultPerInvocation, limit: int) -> str:
    actual = call_lines(per.actual_invocation.tool_calls())
    if per.expected_invocation is None:
        lines = [(" ", c) for c in actual]
    else:
        lines = tool_call_diff(call_lines(per.expected_invocation.tool_calls()), actual)
    if not lines:
        return '<span class="e">(no tool calls)</span>'
    cls = {"-": ' class="m"', "+": ' class="x"', " ": ""}
    return "<pre>" + "\n".join(f"<span{cls[k]}>{k} {_e(v, limit)}</span>" for k, v in lines) + "</pre>"


def _kv(label: str, value: str) -> str:
    return f"<tr><th>{label}</th><td>{value}</td></tr>"


def _invocation(i: int, per: EvalMetricResultPerInvocation, reasons: dict[str, str],
                limit: int) -> str:
    """One invocation: prompt, responses, tool-call diff, and each metric's score with the
    reason stored for it (`reasons`, by metric name)."""
    exp, act = per.expected_invocation, per.actual_invocation
    scores = "<br>".join(
        f"{_e(m.metric_name)} {format_score(m.score)}"
        + ("" if m.eval_status == EvalStatus.INFORMATIONAL else f" {_status(m.eval_status)}")
        + (f' <span class="e">— {_e(why, limit)}</span>' if (why := reasons.get(m.metric_name)) else "")
        for m in per.eval_metric_results)
    got = content_text(act.final_response)
    want = content_text(exp.final_response) if exp is not None else None
    took = f" · {fmt_seconds(act.duration)} s" if act.duration is not None else ""
    return (f"<h5>invocation {i}{took}</h5><table class=io>"
            + _kv("prompt", f"<pre>{_e(content_text(act.user_content), limit)}</pre>")
            + _kv("expected response", '<span class="e">(no reference)</span>' if want is None
                  else f"<pre>{_e(want, limit)}</pre>")
            + _kv("actual response", '<span class="e">(identical to expected)</span>' if got == want
                  else f"<pre>{_e(got, limit)}</pre>")
            + _kv("tool calls", _diff_html(per, limit)) + _kv("scores", scores or "-") + "</table>")


def _judge(records: Sequence[JudgeRecord], limit: int) -> str:
    rows = [_row(["verdict of", "verdict", "score", "rationale"], head=True)]
    for r in records:
        audit = ""
        if is_negative(r):
            replies = "\n---\n".join(r.replies)
            audit = (f"<details><summary>judge prompt and replies ({_e(r.judge_model)})</summary>"
                     f"<pre>{_e(r.prompt, limit)}</pre><hr><pre>{_e(replies, limit)}</pre></details>")
        verdict = _e(r.step if r.step and not r.error else r.verdict or "no verdict")
        rationale = _e(r.rationale or r.error or "", limit)
        if r.screened:
            cut = "; ".join(repr(c) for c in r.screened)
            rationale += f'<br><span class="e">cut before judging: {_e(cut, limit)}</span>'
        if r.flagged:  # in tool results, user turns or the reference: quoted whole
            found = "; ".join(repr(c) for c in r.flagged)
            rationale += ('<br><span class="e">addressed to the judge in the quoted material: '
                          f'{_e(found, limit)}</span>')
        css = ' class="F"' if is_negative(r) else ""
        rows.append(_row([_e(record_where(r)), f"<span{css}>{verdict}</span>",
                          format_score(r.score), rationale + audit]))
    return "<h5>judge verdicts</h5><table>" + "".join(rows) + "</table>"


def _rubrics(run: EvalCaseResult, limit: int) -> str:
    rows = [_row([_e(m.metric_name), _e(s.rubric_id), format_score(s.score), _e(s.rationale or "", limit)])
            for m in run.overall_eval_metric_results for s in (m.details.rubric_scores or [])]
    if not rows:
        return ""
    return ("<h5>rubric scores</h5><table>" + _row(["criterion", "rubric", "score", "rationale"], True)
            + "".join(rows) + "</table>")


def _run(run: EvalCaseResult, multi: bool, limit: int) -> str:
    parts = [f"<h4>run {run.run_index}: {_status(run.final_eval_status)}</h4>"] if multi else []
    if multi_agent(agents := case_agents(run)):
        parts.append(agent_tree_html(agents))
    reasons: dict[int, dict[str, str]] = {}
    for r in run.reasons:
        if r.invocation_index is not None:
            reasons.setdefault(r.invocation_index, {})[r.metric_name] = r.reason
    parts += [_invocation(i, per, reasons.get(i, {}), limit)
              + (trace_html(run.trace, i) if run.trace is not None else "")
              for i, per in enumerate(run.eval_metric_result_per_invocation)]
    parts.append(_rubrics(run, limit))
    if run.judge_records:
        parts.append(_judge(run.judge_records, limit))
    return "".join(parts)


def _certified(name: str, certs: dict[str, JudgeCertificateNote]) -> str:
    """A criterion's name and, when it is judged, its certificate's tag (the full text on hover)."""
    note = certs.get(name)
    if note is None:
        return _e(name)
    kind = "P" if note.status == "certified" else "N"
    return (f'{_e(name)} <span class="{kind}" title="{_e(note.text)}">'
            f"[{_e(certificates.tag(note))}]</span>")


def _criteria(case: CaseOutcome, limit: int) -> str:
    """The criterion table: verdict, score (statistics over runs), threshold and why."""
    multi = case.num_runs > 1
    head = ["criterion", "status", "mean" if multi else "score", "threshold"]
    if multi:
        head += ["std", "95% CI", "passed runs", "pass@k", "pass^k"]
    rows = [_row([*head, "why"], head=True)]
    certs = certificates.notes(case.runs)
    for m in case.gating_metrics():
        cells = [_certified(m.metric_name, certs), _status(m.eval_status), format_score(m.mean),
                 format_score(m.threshold)]
        if multi:
            cells += [format_score(m.std), ci_text(m), f"{m.passed_runs}/{m.runs}",
                      format_score(m.pass_at_k), format_score(m.pass_pow_k)]
        rows.append(_row([*cells, _e(criterion_reason(m, case.gating, case.runs), limit)]))
    info = " · ".join(f"{_certified(m.metric_name, certs)} {format_score(m.mean)}"
                      for m in case.summary.metrics if m.eval_status == EvalStatus.INFORMATIONAL)
    advisory = [c for c in certs.values() if c.advisory]
    if advisory:  # why these judged criteria did not gate
        info += "".join(f"<br>{_e(certificates.line(c), limit)}" for c in advisory)
    mean = " (mean over runs)" if multi else ""
    # Headers over no row said nothing (an agent error before any scoring: the errors below).
    table = ("<table>" + "".join(rows) + "</table>" if len(rows) > 1
             else '<p class="note">no criterion was scored</p>')
    return (table
            + (f'<p class="note">informational{mean}: {info}</p>' if info else ""))


def _errors(case: CaseOutcome, limit: int) -> str:
    items = []
    for run in case.runs:
        tag = f"run {run.run_index}: " if case.num_runs > 1 else ""
        if run.error_message:
            items.append(f'<li class="err">{_e(tag)}inference failed: {_e(run.error_message, limit)}</li>')
        for err in run.metric_errors:
            where = "" if err.invocation_index is None else f" (invocation {err.invocation_index})"
            items.append(f"<li>{_e(tag + err.metric_name + where)}: {_e(err.message, limit)}</li>")
    return f"<h5>errors</h5><ul>{''.join(items)}</ul>" if items else ""


def _warnings(case: CaseOutcome, limit: int) -> str:
    """What the case's runs said of themselves, passed or not (a conversation the simulator's
    turn limit ended, a value that lost characters to be written)."""
    items = [f"<li>{_e(f'run {run.run_index}: ' if case.num_runs > 1 else '')}{_e(w, limit)}</li>"
             for run in case.runs for w in run.warnings]
    return f"<h5>warnings</h5><ul>{''.join(items)}</ul>" if items else ""


def _case(case: CaseOutcome, index: int, detailed: bool, opened: bool, limit: int) -> str:
    letter = _LETTER[case.status]
    runs = f" · {case.num_runs} runs" if case.num_runs > 1 else ""
    failing = ", ".join(f"{m.metric_name} {format_score(m.mean)}" for m in case.failing_metrics())
    # An agent error too, else the line of a case the agent failed named only its warnings.
    errored = sum(1 for run in case.runs if run.error_message)
    if errored:
        failing += (", " if failing else "") + "agent error" + (
            f" in {errored} of {case.num_runs} runs" if case.num_runs > 1 else "")
    warned = sum(len(run.warnings) for run in case.runs)
    warns = f" · {warned} warning{'s' if warned > 1 else ''}" if warned else ""
    # A passed case with warnings keeps them in view when passing cases are hidden (`cW`).
    css = f"c c{letter} cW" if warned else f"c c{letter}"
    parts = [f'<details class="{css}" id="c{index}"{" open" if opened else ""}>'
             f"<summary>{_status(case.status)} "
             f"<code>{_e(case.eval_set_id)} / {_e(case.eval_id)}</code>{runs}"
             f"{' · ' + _e(failing) if failing else ''}{warns}</summary>", _criteria(case, limit),
             _errors(case, limit), _warnings(case, limit)]
    if case.status == EvalStatus.NOT_EVALUATED and not failing:
        parts.append(f'<p class="note">{_e(not_gated(case))}</p>')  # (it said nothing of why)
    if detailed:
        parts += [_run(run, case.num_runs > 1, limit) for run in case.runs]
    else:
        parts.append('<p class="note">Invocation detail omitted (over detail_limit).</p>')
    parts.append("</details>")
    return html_visible("".join(parts))  # (a response's NUL or ESC is no text HTML may hold)


def _tally(crit: dict[str, list[int]], case: CaseOutcome) -> None:
    """Counts `case`'s gating criteria in `crit` (name: [cases passed, cases])."""
    for m in case.gating_metrics():
        tally = crit.setdefault(m.metric_name, [0, 0])
        tally[0] += m.eval_status == EvalStatus.PASSED
        tally[1] += 1


def _summary(per_set: Sequence[tuple[EvalSetResult, SetCounts]], crit: dict[str, list[int]]) -> str:
    rows = [_row(["eval set", "result id", "created (UTC)", "cases", "passed", "failed",
                  "not evaluated", "runs", "gating"], head=True)]
    for result, c in per_set:
        stamp = result.creation_timestamp
        created = (datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
                   if stamp else "-")
        rows.append(_row([_e(result.eval_set_id), _e(result.eval_set_result_id), created, str(c.total),
                          f'<span class="P">{c.passed}</span>', f'<span class="F">{c.failed}</span>',
                          str(c.not_evaluated), str(c.max_runs), _e(result.gating)]))
    crows = [_row(["criterion", "cases passed", "pass rate"], head=True)]
    crows += [_row([_e(name), f"{p}/{n}", f"{p / n:.1%}"]) for name, (p, n) in crit.items()]
    return ("<h2>Summary</h2><table>" + "".join(rows) + "</table><table>" + "".join(crows) + "</table>")


def _head(title: str, passed: int, total: int, summary: str) -> str:
    """The document up to the first case (which follows on a new line)."""
    verdict = "P" if total and passed == total else "F"
    body = [f"<h1>{_e(title)}</h1>",
            f'<p class="{verdict}"><b>{passed} of {total} case(s) passed</b></p>', summary,
            '<h2>Cases</h2><input type="checkbox" id="hp">'
            '<label for="hp"> hide passing cases (not those with warnings)</label>',
            '<p class="note">Failing cases first. Tool-call diffs are order-aware line diffs '
            "(− expected but not called, + called but not expected); the trajectory criterion's "
            "match type decides the score.</p>", '<div id="cases">']
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width,initial-scale=1">'
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>\n" + html_visible("\n".join(body)))


_TAIL = "\n</div>\n</body></html>\n"


def html_report(results: Sequence[EvalSetResult], *, detail_limit: int = 2000,
                text_limit: int = 4000, title: str = "agenteval report") -> str:
    """The report as one HTML document (see the module docstring for layout and size caps)."""
    per_set = [(r, outcomes(r)) for r in results]
    cases = [c for _, cs in per_set for c in cs]
    order = sorted(range(len(cases)), key=lambda i: cases[i].status == EvalStatus.PASSED)
    detailed = set(order[:detail_limit])
    crit: dict[str, list[int]] = {}
    for case in cases:
        _tally(crit, case)
    passed = sum(1 for c in cases if c.status == EvalStatus.PASSED)
    head = _head(title, passed, len(cases), _summary([(r, set_counts(r, cs)) for r, cs in per_set], crit))
    return head + "".join(
        "\n" + _case(cases[i], i, i in detailed, rank < _OPEN and cases[i].status != EvalStatus.PASSED,
                     text_limit) for rank, i in enumerate(order)) + _TAIL


def html_stream(result: EvalSetResult, cases: Callable[[], Iterable[CaseOutcome]], *,
                detail_limit: int = 2000, text_limit: int = 4000,
                title: str = "agenteval report") -> Iterator[str]:
    """The text `html_report([result])` gives, in pieces, for a run whose case outcomes
    `cases()` reads one at a time (`store.outcome_stream`), holding none: memory is flat in
    the number of cases. `cases()` is called twice and must give the same cases both times.
    The first pass counts and renders the cases that did not pass (they come first) to a
    temporary file; nothing is given before it ends, so an error while reading leaves nothing
    half written. The second pass renders the passing ones."""
    crit: dict[str, list[int]] = {}
    total = passed = failed = not_evaluated = max_runs = 0
    with tempfile.TemporaryFile("w+", encoding="utf-8", newline="") as spool:
        for i, case in enumerate(cases()):
            total += 1
            max_runs = max(max_runs, case.num_runs)
            _tally(crit, case)
            if case.status == EvalStatus.PASSED:
                passed += 1
                continue
            failed += case.status == EvalStatus.FAILED
            not_evaluated += case.status == EvalStatus.NOT_EVALUATED
            rank = i - passed  # among the cases that did not pass, in order
            spool.write("\n" + _case(case, i, rank < detail_limit, rank < _OPEN, text_limit))
        counts = SetCounts(total, passed, failed, not_evaluated, max_runs)
        yield _head(title, passed, total, _summary([(result, counts)], crit))
        spool.seek(0)
        while block := spool.read(1 << 20):
            yield block
    rank, seen = total - passed, 0
    for i, case in enumerate(cases()):
        seen += 1
        if case.status == EvalStatus.PASSED:
            yield "\n" + _case(case, i, rank < detail_limit, False, text_limit)
            rank += 1
    if seen != total or rank != total:
        raise DataError(result.eval_set_result_id, "", "the run's cases changed while the report was written")
    yield _TAIL


__all__ = ["html_report", "html_stream", "tool_call_diff"]
