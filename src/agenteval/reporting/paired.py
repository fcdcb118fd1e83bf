"""A paired comparison (`verdicts.paired`) as the console, Markdown and JUnit show it.

Every form says the decision first (REGRESSION / NO REGRESSION), then per measure (the case
verdict, "overall", and each criterion): pass rate A → B, its difference in percentage points
with the 95% bootstrap interval, the exact McNemar p-value and its Holm-adjusted value; the mean
score A → B, its difference with the interval and the sign test's p-value; then the cases that
did not stay UNCHANGED (REGRESSED first) with their passes and runs on either side, and pass@k /
pass^k on either side. The console form fits 80 columns: a criterion's name never breaks
(too long for its column, it gets a line of its own above its numbers).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from typing import Any

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.text import Text

from agenteval.reporting.junit import xml_safe
from agenteval.reporting.markdown import md_escape
from agenteval.reporting.tables import ID_FLOOR, ByWidth, Col, fit_table
from agenteval.verdicts.paired import CaseChange, CaseStat, MeasureStat, PairedComparison, fewest_runs_to_tell

_CASE_ORDER = [CaseChange.REGRESSED, CaseChange.IMPROVED, CaseChange.INCONCLUSIVE, CaseChange.ADDED,
               CaseChange.REMOVED, CaseChange.UNCHANGED]
_CASE_STYLE = {CaseChange.REGRESSED: "bold red", CaseChange.IMPROVED: "bold green",
               CaseChange.INCONCLUSIVE: "yellow", CaseChange.ADDED: "cyan", CaseChange.REMOVED: "yellow",
               CaseChange.UNCHANGED: ""}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _p(x: float | None) -> str:
    if x is None:
        return "-"
    return "<0.001" if x < 0.001 else f"{x:.3f}"


def _diff(d: float | None, ci: tuple[float, float] | None, scale: float, digits: int) -> str:
    if d is None:
        return "-"
    out = f"{d * scale:+.{digits}f}"
    return out if ci is None else f"{out} [{ci[0] * scale:+.{digits}f}, {ci[1] * scale:+.{digits}f}]"


def _flag(c: PairedComparison, m: MeasureStat) -> str:
    if not c.significant(m):
        return ""
    return "▼ sig" if m.direction == "regression" else "▲ sig"


_NOTE = ("p: exact McNemar test on the run pairs' pass / fail, sign test on their scores (two-sided); "
         "sig: significant after Holm's adjustment. Intervals: paired bootstrap over cases.")


def measure_rows(c: PairedComparison) -> list[tuple[str, str, str, str, str, str]]:
    """Per measure, one or two rows: (name, what, A → B, Δ [95% CI], p, flag); the score row
    only when the measure has scores."""
    rows = []
    for m in c.measures:
        rows.append((m.name, "pass", f"{_pct(m.pass_a)} → {_pct(m.pass_b)}",
                     _diff(m.pass_diff, m.pass_ci, 100, 1) + " pt", _p(m.p_value), _flag(c, m)))
        if m.score_a is not None:
            rows.append(("", "score", f"{_num(m.score_a)} → {_num(m.score_b)}",
                         _diff(m.score_diff, m.score_ci, 1, 3), _p(m.score_p), ""))
    return rows


def _measures_block(c: PairedComparison, width: int) -> RenderableType:
    """The measure rows as aligned lines: the name beside its numbers when everything fits in
    `width`, else on a line of its own above them (names never break)."""
    rows = measure_rows(c)
    heads = ("measure", "", "A → B", "Δ B−A [95% CI]", "p", "")
    widths = [max(cell_len(h), *(cell_len(r[i]) for r in rows)) for i, h in enumerate(heads)]
    inline = sum(widths) + 2 * (len(heads) - 1) <= width
    first = 0 if inline else 1
    indent = "" if inline else "  "

    def line(cells: tuple[str, ...], style: str = "") -> Text:
        parts = [cells[i].rjust(widths[i]) if heads[i] == "p" else cells[i].ljust(widths[i])
                 for i in range(first, len(heads))]
        return Text(indent + "  ".join(parts).rstrip(), style=style)

    out = [line(heads, "bold") if inline else Text(indent + "  ".join(
        h.rjust(widths[i]) if h == "p" else h.ljust(widths[i])
        for i, h in enumerate(heads) if i >= first).rstrip(), style="bold")]
    for row in rows:
        flag = row[-1]
        style = "red" if flag.startswith("▼") else "green" if flag.startswith("▲") else ""
        if not inline and row[0]:
            out.append(Text(row[0], style="bold"))
        out.append(line(row, style))
    return Group(*out)


def case_pass_k(x: CaseStat, k: int) -> tuple[str, str]:
    """("pass@k A → B", "pass^k A → B") of one case, k capped at each side's runs."""
    a, b = x.pass_at(k, "a"), x.pass_at(k, "b")

    def side(v: tuple[float, float] | None, i: int) -> str:
        return "-" if v is None else f"{v[i]:.2f}"

    return f"{side(a, 0)} → {side(b, 0)}", f"{side(a, 1)} → {side(b, 1)}"


def _case_cells(x: CaseStat, k: int) -> list[str | Text]:
    return [x.eval_id, Text(x.change.value, style=_CASE_STYLE[x.change]),
            f"{x.passed_a}/{x.runs_a}" if x.runs_a else "-",
            f"{x.passed_b}/{x.runs_b}" if x.runs_b else "-", _p(x.p_value), case_pass_k(x, k)[1]]


def shown_cases(c: PairedComparison, show_unchanged: bool = False) -> list[CaseStat]:
    """The cases to list: every change but UNCHANGED (unless asked), REGRESSED first."""
    cases = [x for x in c.cases if show_unchanged or x.change != CaseChange.UNCHANGED]
    return sorted(cases, key=lambda x: _CASE_ORDER.index(x.change))


def counts_line(c: PairedComparison) -> str:
    """"cases: 2 REGRESSED, 10 UNCHANGED" (changes with no case left out)."""
    counts = ", ".join(f"{n} {ch.value}" for ch, n in c.counts().items() if n)
    return f"cases: {counts or 'none'}"


def inconclusive_line(c: PairedComparison) -> str | None:
    """Why cases are INCONCLUSIVE and what would decide them; None when none is."""
    inconclusive = [x for x in c.cases if x.change == CaseChange.INCONCLUSIVE]
    if not inconclusive:
        return None
    need = fewest_runs_to_tell(c.alpha)
    if min(min(x.runs_a, x.runs_b) for x in inconclusive) < need:
        advice = (f"run them at least {need} times a side (--num_runs {need}: {need}/{need} against "
                  f"0/{need} is the least that can show a change at alpha {c.alpha:g})")
    else:
        advice = "more runs a side would tell (--num_runs)"
    return (f"{len(inconclusive)} INCONCLUSIVE: their pass rates differ, but each case's own runs "
            f"are too few to tell (Fisher p ≥ {c.alpha:g}); {advice}, or let eval --until_decided "
            "choose the runs. The measures above pool every case's runs.")


def config_differences(a: Mapping[str, Any], b: Mapping[str, Any],
                       settings: Callable[[str, Any], Any] | None = None) -> list[str]:
    """What differs between two runs' configs (their run headers' `config`) that changes what
    passes: criteria on one side only, thresholds, a criterion's other settings (each named, A →
    B, nested ones dotted: `judge_model_options.num_samples 5 → 1`), `repeat_gating` and
    `not_evaluated`. `settings(name, entry)` fills in what an entry leaves at its default
    (`Registry.settings`), so that a default written out is not a difference. Empty when either
    config is unknown (an empty mapping)."""
    if not a or not b:
        return []
    ca, cb = a.get("criteria") or {}, b.get("criteria") or {}

    def flat(name: str, value: Any) -> dict[str, Any]:  # a bare threshold, or the criterion object
        value = settings(name, value) if settings is not None else value
        out: dict[str, Any] = {}

        def walk(v: Any, key: str) -> None:
            if isinstance(v, dict) and v:
                for k, inner in v.items():
                    walk(inner, f"{key}.{k}" if key else str(k))
            else:
                out[key] = v
        walk(value if isinstance(value, dict) else {"threshold": value}, "")
        return out

    def shown(value: Any) -> str:
        if isinstance(value, bool) or value is None:
            return "unset" if value is None else str(value).lower()
        if isinstance(value, int | float):
            return f"{value:g}"
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 40 else text[:39] + "…"

    out = [f"{name}: only in {'A' if name in ca else 'B'}" for name in sorted(ca.keys() ^ cb.keys())]
    for name in sorted(ca.keys() & cb.keys()):
        x, y = flat(name, ca[name]), flat(name, cb[name])
        keys = sorted(x.keys() | y.keys(), key=lambda k: (k != "threshold", k))
        changed = [f"{k} {shown(x.get(k))} → {shown(y.get(k))}" for k in keys if x.get(k) != y.get(k)]
        if changed:
            out.append(f"{name}: {', '.join(changed)}")
    out += [f"{key}: {a.get(key)} → {b.get(key)}" for key in ("repeat_gating", "not_evaluated")
            if a.get(key) != b.get(key)]
    return out


def pass_k_line(c: PairedComparison) -> str:
    """pass@k and pass^k, A → B (means over the cases on both sides)."""
    a, b = c.pass_k("a"), c.pass_k("b")
    if a is None or b is None:
        return f"pass@{c.k}: -"
    return (f"pass@{c.k} {a[0]:.3f} → {b[0]:.3f}; pass^{c.k} {a[1]:.3f} → {b[1]:.3f} "
            f"(per case, k capped at its runs)")


def _heading(c: PairedComparison) -> str:
    sets = c.baseline_set if c.baseline_set == c.candidate_set else f"{c.baseline_set} → {c.candidate_set}"
    return f"{sets}: A = {c.baseline_id}, B = {c.candidate_id}"


def paired_console(c: PairedComparison, show_unchanged: bool = False, max_rows: int = 50) -> RenderableType:
    """The decision, the measures and the changed cases, laid out for the printing width."""

    def build(width: int) -> RenderableType:
        parts: list[RenderableType] = [
            Text(c.decision(), style="bold red" if c.gate_failed else "bold green"),
            Text(_heading(c), overflow="fold"), Text(""), _measures_block(c, width),
            Text(_NOTE, style="dim"), Text(""), Text(counts_line(c)), Text(pass_k_line(c))]
        if (why := inconclusive_line(c)) is not None:
            parts.append(Text(why, style="yellow"))
        cases = shown_cases(c, show_unchanged)
        if cases:
            cols = (Col("eval id", floor=ID_FLOOR), Col("change"), Col("A", "right"), Col("B", "right"),
                    Col("p Fisher", "right"), Col(f"pass^{c.k} A → B"))
            table = fit_table(cols, [_case_cells(x, c.k) for x in cases[:max_rows]], width, force=True,
                              title="Cases (from their own runs)", title_justify="left")
            if len(cases) > max_rows:
                table.caption = f"… and {len(cases) - max_rows} more"
            parts.append(table)
        return Group(*parts)

    return ByWidth(build)


def paired_markdown(c: PairedComparison, max_rows: int = 200) -> str:
    """The comparison as Markdown for a pull-request comment: decision, measures, changed cases."""
    icon = "❌" if c.gate_failed else "✅"
    out = [f"## {icon} agenteval compare: {md_escape(c.decision())}", "", md_escape(_heading(c)), "",
           "| measure | | A → B | Δ B−A [95% CI] | p | p (Holm) | |", "|---|---|---|---|---:|---:|---|"]
    adjusted = {m.name: m.p_adjusted for m in c.measures}
    for name, what, ab, diff, p, flag in measure_rows(c):
        holm = _p(adjusted[name]) if name else ""
        out.append(f"| {md_escape(name)} | {what} | {ab} | {diff} | {p} | {holm} | {flag} |")
    out += ["", md_escape(_NOTE), "", md_escape(counts_line(c)) + "  ", md_escape(pass_k_line(c))]
    if (why := inconclusive_line(c)) is not None:
        out += ["", md_escape(why)]
    cases = shown_cases(c)
    if cases:
        out += ["", f"| eval id | change | A passed | B passed | p (Fisher) | pass@{c.k} A → B | "
                f"pass^{c.k} A → B |", "|---|---|---:|---:|---:|---|---|"]
        for x in cases[:max_rows]:
            a, b = (f"{x.passed_a}/{x.runs_a}" if x.runs_a else "-"), (f"{x.passed_b}/{x.runs_b}"
                                                                        if x.runs_b else "-")
            at, power = case_pass_k(x, c.k)
            out.append(f"| {md_escape(x.eval_id)} | {x.change.value} | {a} | {b} | {_p(x.p_value)} | {at} | "
                       f"{power} |")
        if len(cases) > max_rows:
            out += ["", f"… and {len(cases) - max_rows} more case(s)."]
    return "\n".join(out) + "\n"


def paired_junit(c: PairedComparison) -> str:
    """JUnit XML: a suite `agenteval compare` with one test per measure (a `failure` when the
    gate counts it as a significant regression, so the report fails exactly when the gate does)
    and one per case (its change and counts in `system-out`; never a failure: a case's own runs
    are few, and the gate decides)."""
    root = ET.Element("testsuites")
    suite = ET.SubElement(root, "testsuite", name="agenteval compare")
    failures = 0
    for m in c.measures:
        el = ET.SubElement(suite, "testcase", classname="measures", name=xml_safe(m.name))
        text = (f"pass {_pct(m.pass_a)} -> {_pct(m.pass_b)}, diff {_diff(m.pass_diff, m.pass_ci, 100, 1)} "
                f"pt, McNemar p {_p(m.p_value)} (Holm {_p(m.p_adjusted)}), {m.a_only} pair(s) passed "
                f"in A only, {m.b_only} in B only")
        if m.score_a is not None:
            text += (f"; score {_num(m.score_a)} -> {_num(m.score_b)}, diff "
                     f"{_diff(m.score_diff, m.score_ci, 1, 3)}, sign test p {_p(m.score_p)}")
        if m in c.regressions:
            failures += 1
            failure = ET.SubElement(el, "failure", message=xml_safe(f"significant regression: {text}"))
            failure.text = xml_safe(text)
        ET.SubElement(el, "system-out").text = xml_safe(text)
    for x in c.cases:
        el = ET.SubElement(suite, "testcase", classname="cases", name=xml_safe(x.eval_id))
        at, power = case_pass_k(x, c.k)
        ET.SubElement(el, "system-out").text = xml_safe(
            f"{x.change.value}: A passed {x.passed_a}/{x.runs_a}, B passed {x.passed_b}/{x.runs_b}, "
            f"Fisher p {_p(x.p_value)}, pass@{c.k} {at}, pass^{c.k} {power}")
    suite.set("tests", str(len(c.measures) + len(c.cases)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")  # required by the schema CI servers validate against (junit-10)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


__all__ = ["case_pass_k", "config_differences", "counts_line", "inconclusive_line", "measure_rows",
           "paired_console", "paired_junit", "paired_markdown", "pass_k_line", "shown_cases"]
