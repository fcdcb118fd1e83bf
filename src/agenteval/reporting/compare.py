"""Comparing two results of the same eval set: per case and criterion, what changed.

A criterion's score is its summary mean (the score itself for a single run). Per criterion, in
this order: `added` / `removed` (present on one side only); `newly failed` (PASSED before, not
PASSED now — failed or not evaluated); `newly passed` (the reverse); `regressed` (score dropped
by more than `margin`); `improved` (rose by more than `margin`); else `unchanged`. A case is
added / removed, newly failed / passed by its verdict, else regressed if any criterion regressed
or newly failed, improved if any improved or newly passed, else unchanged. Regressions are
`regressed` and `newly failed`, at either level. Informational metrics are not compared. When
both sides ran a case more than once, `significant` tells whether the 95% CIs are disjoint
(shown, not used by the rule). Differences within 1e-9 are float noise and never count.

Two stored runs are compared without reading their summaries: SQLite gives each case's
verdicts and its criteria's changes, by the criterion rule spelt in SQL (`CRITERION_CODE`), and
`case_changes` makes each case's change from them (`CaseChanges`: what the web pages through, a
few MB for 50,000 cases); `compare_rows` then reads only the cases of the rows the table and the
Markdown show (`ComparisonRows`), and `case_delta` makes one case's rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Literal

from rich.console import Group, RenderableType
from rich.text import Text

from agenteval.reporting.format import format_score
from agenteval.reporting.markdown import md_escape
from agenteval.reporting.outcome import ci_text
from agenteval.reporting.tables import ID_FLOOR, ByWidth, Col, fit_table
from agenteval.schema import CaseSummary, EvalSetResult, EvalStatus, MetricSummary
from agenteval.verdicts.outcome import CaseOutcome, outcomes

_EPS = 1e-9


class Change(str, Enum):
    """What happened to a case or criterion between the baseline and the candidate."""

    NEWLY_FAILED = "newly failed"
    REGRESSED = "regressed"
    NEWLY_PASSED = "newly passed"
    IMPROVED = "improved"
    ADDED = "added"
    REMOVED = "removed"
    UNCHANGED = "unchanged"


REGRESSIONS = frozenset({Change.REGRESSED, Change.NEWLY_FAILED})
_ORDER = list(Change)
_STYLE = {Change.NEWLY_FAILED: "bold red", Change.REGRESSED: "red", Change.NEWLY_PASSED: "bold green",
          Change.IMPROVED: "green", Change.ADDED: "cyan", Change.REMOVED: "yellow", Change.UNCHANGED: ""}


@dataclass(frozen=True)
class CriterionDelta:
    """One criterion of one case: before (baseline) and after (candidate) summaries."""

    metric_name: str
    change: Change
    before: MetricSummary | None
    after: MetricSummary | None

    @property
    def delta(self) -> float | None:
        """after − before mean score; None unless both were scored."""
        if self.before is None or self.after is None or self.before.mean is None or self.after.mean is None:
            return None
        return self.after.mean - self.before.mean

    @property
    def significant(self) -> bool | None:
        """Whether the 95% CIs are disjoint; None unless both sides ran more than once."""
        b, a = self.before, self.after
        if b is None or a is None or b.runs < 2 or a.runs < 2:
            return None
        bl, bh, al, ah = b.ci_low, b.ci_high, a.ci_low, a.ci_high
        if bl is None or bh is None or al is None or ah is None:
            return None
        return ah < bl or al > bh


@dataclass(frozen=True)
class CaseDelta:
    """One eval id: verdicts before and after, and its criteria."""

    eval_id: str
    change: Change
    before: EvalStatus | None
    after: EvalStatus | None
    criteria: list[CriterionDelta]

    @property
    def regressed(self) -> bool:
        return self.change in REGRESSIONS or any(c.change in REGRESSIONS for c in self.criteria)


@dataclass(frozen=True)
class Comparison:
    """Baseline vs candidate, case by case (in candidate order, then removed cases)."""

    baseline_id: str
    candidate_id: str
    baseline_set: str
    candidate_set: str
    margin: float
    cases: list[CaseDelta]

    @property
    def regressions(self) -> list[CaseDelta]:
        """Cases that regressed or newly failed, or have a criterion that did."""
        return [c for c in self.cases if c.regressed]

    @property
    def has_regressions(self) -> bool:
        return bool(self.regressions)

    def counts(self) -> dict[Change, int]:
        """Cases per change (every Change present, zero included)."""
        out = dict.fromkeys(Change, 0)
        for c in self.cases:
            out[c.change] += 1
        return out

    def shown(self, show_unchanged: bool = False) -> ComparisonRows:
        """What the table and the Markdown show of it: every changed row."""
        rows = _rows(self, show_unchanged)
        return ComparisonRows(self.baseline_id, self.candidate_id, self.baseline_set, self.candidate_set,
                              self.margin, self.counts(), len(self.regressions), rows, len(rows))


@dataclass(frozen=True)
class ComparisonRows:
    """What `comparison_table` and `comparison_markdown` show of a comparison: its cases per
    change, how many regressed, and its changed rows (regressions first; `rows` the first of
    them, `total_rows` how many there are)."""

    baseline_id: str
    candidate_id: str
    baseline_set: str
    candidate_set: str
    margin: float
    counts: dict[Change, int]
    regressions: int
    rows: list[tuple[CaseDelta, CriterionDelta | None]]
    total_rows: int

    @property
    def has_regressions(self) -> bool:
        return self.regressions > 0


def _criterion(name: str, b: MetricSummary | None, a: MetricSummary | None, margin: float) -> CriterionDelta:
    if b is None or a is None:
        return CriterionDelta(name, Change.ADDED if b is None else Change.REMOVED, b, a)
    was, now = b.eval_status == EvalStatus.PASSED, a.eval_status == EvalStatus.PASSED
    change = Change.UNCHANGED
    if was and not now:
        change = Change.NEWLY_FAILED
    elif now and not was:
        change = Change.NEWLY_PASSED
    elif b.mean is not None and a.mean is not None:
        delta = a.mean - b.mean
        if delta < -(margin + _EPS):
            change = Change.REGRESSED
        elif delta > margin + _EPS:
            change = Change.IMPROVED
    return CriterionDelta(name, change, b, a)


def _case_change(before: EvalStatus | None, after: EvalStatus | None, changes: set[Change]) -> Change:
    """A case's change from its verdicts (None: the run lacks it) and its criteria's changes."""
    if before is None or after is None:
        return Change.ADDED if before is None else Change.REMOVED
    if before == EvalStatus.PASSED and after != EvalStatus.PASSED:
        return Change.NEWLY_FAILED
    if before != EvalStatus.PASSED and after == EvalStatus.PASSED:
        return Change.NEWLY_PASSED
    if changes & REGRESSIONS:
        return Change.REGRESSED
    if changes & {Change.IMPROVED, Change.NEWLY_PASSED}:
        return Change.IMPROVED
    return Change.UNCHANGED


def _case(eval_id: str, b: CaseOutcome | None, a: CaseOutcome | None, margin: float) -> CaseDelta:
    def gating(c: CaseOutcome | None) -> dict[str, MetricSummary]:
        return {m.metric_name: m for m in c.gating_metrics()} if c else {}

    before, after = gating(b), gating(a)
    names = list(dict.fromkeys([*after, *before]))
    criteria = [_criterion(n, before.get(n), after.get(n), margin) for n in names]
    was, now = b.status if b else None, a.status if a else None
    return CaseDelta(eval_id, _case_change(was, now, {c.change for c in criteria}), was, now, criteria)


def compare(a: EvalSetResult, b: EvalSetResult, margin: float = 0.0) -> Comparison:
    """Compares baseline `a` with candidate `b` (see the module docstring for the rules)."""
    if margin < 0:
        raise ValueError("margin must be ≥ 0")
    base = {c.eval_id: c for c in outcomes(a)}
    cand = {c.eval_id: c for c in outcomes(b)}
    ids = list(dict.fromkeys([*cand, *base]))
    return Comparison(a.eval_set_result_id, b.eval_set_result_id, a.eval_set_id, b.eval_set_id, margin,
                      [_case(i, base.get(i), cand.get(i), margin) for i in ids])


Pair = tuple[str, CaseSummary | None, CaseSummary | None]
"""A case's eval id and its summaries in the baseline and in the candidate (None: a run lacks it)."""


def compare_rows(changes: CaseChanges, pairs: Callable[[list[str]], Iterable[Pair]], a: EvalSetResult,
                 b: EvalSetResult, keep: int = 200) -> ComparisonRows:
    """`compare(a, b, margin).shown()` from `changes` (of runs `a` and `b`, their heads: see
    `case_changes`), keeping only the first `keep` changed rows (at least as many as the table
    or the Markdown is asked to show): only those rows' cases are read, by `pairs` (their
    `Pair`s, given their eval ids)."""
    counts = changes.counts()
    # A change's rows past its first `keep` are never among the first `keep` of all.
    picked: dict[Change, list[str]] = {c: [] for c in Change}
    rows_of = dict.fromkeys(Change, 0)
    for line in changes.cases:
        if line.rows and rows_of[line.change] < keep:
            picked[line.change].append(line.eval_id)
            rows_of[line.change] += line.rows
    ids = [i for change in _ORDER for i in picked[change]]
    cases = {i: case_delta(i, x, y, a, b, changes.margin) for i, x, y in pairs(ids)}
    rows = [r for i in ids for r in _case_rows(cases[i], show_unchanged=False)][:keep]
    c = changes
    return ComparisonRows(c.baseline_id, c.candidate_id, c.baseline_set, c.candidate_set, c.margin, counts,
                          sum(x.regressed for x in c.cases), rows, sum(x.rows for x in c.cases))


def case_delta(eval_id: str, before: CaseSummary | None, after: CaseSummary | None, a: EvalSetResult,
               b: EvalSetResult, margin: float = 0.0) -> CaseDelta:
    """One case of `compare(a, b, margin)` from its summaries (None where a run lacks it), of
    runs `a` and `b` (their heads)."""
    return _case(eval_id, _outcome(a, before), _outcome(b, after), margin)


Shown = Literal["all", "changed", "regressed", "improved", "unchanged", "added", "removed"]
_SHOWN: dict[str, frozenset[Change]] = {
    "improved": frozenset({Change.IMPROVED, Change.NEWLY_PASSED}), "unchanged": frozenset({Change.UNCHANGED}),
    "added": frozenset({Change.ADDED}), "removed": frozenset({Change.REMOVED})}


@dataclass(frozen=True, slots=True)
class CaseLine:
    """One case of a comparison without its summaries."""

    eval_id: str
    change: Change
    regressed: bool
    """It or one of its criteria regressed or newly failed (`CaseDelta.regressed`)."""
    rows: int
    """Its rows among the changed rows that the table and the Markdown show (none unless it or a
    criterion changed; one a changed criterion, else one for the case)."""

    @property
    def changed(self) -> bool:
        """Among the changed rows that the table and the Markdown show."""
        return self.rows > 0

    def shown(self, which: Shown) -> bool:
        """Whether it is among the cases `which` names: all, changed (as `changed`), regressed
        (as `regressed`), improved (improved or newly passed), unchanged, added, removed."""
        if which == "all":
            return True
        if which == "changed":
            return self.changed
        if which == "regressed":
            return self.regressed
        return self.change in _SHOWN[which]


@dataclass(frozen=True)
class CaseChanges:
    """A comparison's cases without their summaries (a 50,000-case comparison: a few MB), in
    `compare`'s order: counts, regressions, and the cases to page through (their rows are made
    again from their summaries by `case_delta`)."""

    baseline_id: str
    candidate_id: str
    baseline_set: str
    candidate_set: str
    margin: float
    cases: list[CaseLine]

    def counts(self) -> dict[Change, int]:
        """Cases per change (every Change present, zero included)."""
        out = dict.fromkeys(Change, 0)
        for c in self.cases:
            out[c.change] += 1
        return out

    @property
    def has_regressions(self) -> bool:
        return any(c.regressed for c in self.cases)


_CODE = {c: str(i) for i, c in enumerate(_ORDER)}
_PASSED = int(EvalStatus.PASSED)
CRITERION_CODE = (
    f"CASE WHEN was = 0 THEN '{_CODE[Change.ADDED]}' WHEN now = 0 THEN '{_CODE[Change.REMOVED]}' "
    f"WHEN was_status = {_PASSED} AND now_status != {_PASSED} THEN '{_CODE[Change.NEWLY_FAILED]}' "
    f"WHEN now_status = {_PASSED} AND was_status != {_PASSED} THEN '{_CODE[Change.NEWLY_PASSED]}' "
    f"WHEN was_mean IS NULL OR now_mean IS NULL THEN '{_CODE[Change.UNCHANGED]}' "
    f"WHEN now_mean - was_mean < :low THEN '{_CODE[Change.REGRESSED]}' "
    f"WHEN now_mean - was_mean > :high THEN '{_CODE[Change.IMPROVED]}' ELSE '{_CODE[Change.UNCHANGED]}' END")
"""`_criterion`'s rule in SQL, over a criterion's columns `was` / `now` (whether the baseline /
the candidate has it gating), `was_status`, `was_mean`, `now_status`, `now_mean`: its change as
one character (`_CODE`), with `criterion_params`' bounds. (The two spellings agree: tested.)"""


def criterion_params(margin: float) -> dict[str, object]:
    """`CRITERION_CODE`'s parameters for `margin`: the bounds `_criterion` compares a score's
    change with, computed as it computes them (the same floats)."""
    if margin < 0:
        raise ValueError("margin must be ≥ 0")
    return {"low": -(margin + _EPS), "high": margin + _EPS}


def case_changes(coded: Iterable[tuple[str, int | None, int | None, str]], a: EvalSetResult,
                 b: EvalSetResult, margin: float = 0.0) -> CaseChanges:
    """`compare(a, b, margin)`'s cases without their summaries, from each case's eval id, its
    verdicts in `a` and in `b` (None: the run lacks it) and its gating criteria's codes
    (`CRITERION_CODE` with `criterion_params(margin)`), given in `compare`'s order."""
    criterion_params(margin)
    # (Most cases share their verdicts and codes: each combination is decided once.)
    decided: dict[tuple[int | None, int | None, str], tuple[Change, bool, int]] = {}
    lines = []
    for eval_id, was, now, codes in coded:
        line = decided.get((was, now, codes))
        if line is None:
            line = decided[was, now, codes] = _coded_line(was, now, codes)
        lines.append(CaseLine(eval_id, *line))
    return CaseChanges(a.eval_set_result_id, b.eval_set_result_id, a.eval_set_id, b.eval_set_id, margin,
                       lines)


def _coded_line(was: int | None, now: int | None, codes: str) -> tuple[Change, bool, int]:
    """A case's change, whether it regressed, and its rows in the table, from its verdicts and
    its criteria's codes (see `case_changes`)."""
    changes = {_ORDER[int(c)] for c in set(codes)}
    change = _case_change(None if was is None else EvalStatus(was), None if now is None else EvalStatus(now),
                          changes)
    changed = len(codes) - codes.count(_CODE[Change.UNCHANGED])
    rows = max(changed, 1) if changed or change != Change.UNCHANGED else 0
    return change, change in REGRESSIONS or bool(changes & REGRESSIONS), rows


def _outcome(run: EvalSetResult, summary: CaseSummary | None) -> CaseOutcome | None:
    return None if summary is None else CaseOutcome(run.eval_set_id, run.gating, summary, [])


def _value(m: MetricSummary | None) -> str:
    if m is None:
        return "-"
    score = format_score(m.mean)
    return f"{score} {ci_text(m)}" if m.runs > 1 and m.mean is not None else score


def _case_rows(case: CaseDelta, show_unchanged: bool) -> list[tuple[CaseDelta, CriterionDelta | None]]:
    changed = [d for d in case.criteria if show_unchanged or d.change != Change.UNCHANGED]
    if case.change == Change.UNCHANGED and not changed:
        return []
    return [(case, d) for d in changed] or [(case, None)]


def _rows(c: Comparison, show_unchanged: bool) -> list[tuple[CaseDelta, CriterionDelta | None]]:
    cases = sorted(c.cases, key=lambda d: _ORDER.index(d.change))
    return [row for case in cases for row in _case_rows(case, show_unchanged)]


def _headline(c: ComparisonRows) -> str:
    counts = ", ".join(f"{n} {ch.value}" for ch, n in c.counts.items() if n)
    sets = c.baseline_set if c.baseline_set == c.candidate_set else f"{c.baseline_set} → {c.candidate_set}"
    return (f"{sets}: {c.baseline_id} → {c.candidate_id} (margin {c.margin:g}): "
            f"{counts or 'no cases'}; {c.regressions} regression(s)")


def comparison_table(of: Comparison | ComparisonRows, show_unchanged: bool = False,
                     max_rows: int = 100) -> RenderableType:
    """A table of the changed cases and criteria (regressions first; at most `max_rows` rows,
    the rest counted), with a headline, laid out for the printing width: every column where it
    fits; narrower, each case on a row of its own above its criteria, the intervals and "CIs
    apart" dropped, before and after in one column; criterion names never break (eval ids
    fold). (`ComparisonRows` are shown as they were made: `show_unchanged` is theirs.)"""
    c = of.shown(show_unchanged) if isinstance(of, Comparison) else of
    rows = c.rows[:max_rows]
    wide: list[list[str | Text]] = []
    narrow: list[list[str | Text]] = []
    last = None
    for case, d in rows:
        first = case is not last
        last = case
        delta = "-" if d is None or d.delta is None else f"{d.delta:+.4g}"
        before = _value(d.before) if d else (case.before.name if case.before else "-")
        after = _value(d.after) if d else (case.after.name if case.after else "-")
        change = Text(case.change.value, style=_STYLE[case.change]) if first else Text("")
        criterion = d.metric_name if d else "-"  # (no criterion: the case added or removed)
        crit_change = Text(d.change.value, style=_STYLE[d.change]) if d else Text("")
        wide.append([case.eval_id if first else "", change, criterion, crit_change, before, after, delta,
                     {None: "-", True: "yes", False: "no"}[d.significant if d else None]])
        if first:  # the case on a row of its own: its change in the criterion column
            narrow.append([case.eval_id, Text(f"case: {case.change.value}", style=_STYLE[case.change]),
                           "", "", ""])
        if d is not None:
            narrow.append(["", criterion, crit_change, f"{_short(d.before)} → {_short(d.after)}", delta])
        else:
            narrow.append(["", "-", "", f"{before} → {after}", delta])
    wide_cols = (Col("eval id", floor=ID_FLOOR), Col("case", floor=8), Col("criterion"),
                 Col("change", floor=8), Col("before", floor=6), Col("after", floor=6), Col("Δ", "right"),
                 Col("CIs apart"))
    narrow_cols = (Col("eval id", floor=8), Col("criterion"), Col("change"), Col("before → after"),
                   Col("Δ", "right"))
    style = "red" if c.has_regressions else "green"
    title = "Comparison (per case, by margin)"
    more = max(c.total_rows - max_rows, 0)

    def build(width: int) -> RenderableType:
        table = fit_table(wide_cols, wide, width, title=title, title_justify="left")
        if table is None:
            table = fit_table(narrow_cols, narrow, width, force=True, title=title, title_justify="left")
        if more:
            table.caption = f"… and {more} more changed row(s)"
        return Group(table, Text(_headline(c), style=style))

    return ByWidth(build)


def _short(m: MetricSummary | None) -> str:
    return "-" if m is None else format_score(m.mean)


def comparison_markdown(of: Comparison | ComparisonRows, max_rows: int = 200) -> str:
    """The comparison as Markdown: headline, counts, and a table of changes (regressions first)."""
    c = of.shown() if isinstance(of, Comparison) else of
    icon = "❌" if c.has_regressions else "✅"
    out = [f"## {icon} agenteval compare", "", md_escape(_headline(c)), "",
           "| change | cases |", "|---|---:|"]
    out += [f"| {ch.value} | {n} |" for ch, n in c.counts.items()]
    rows = c.rows
    if rows:
        out += ["", "| eval id | case | criterion | change | before | after | Δ |",
                "|---|---|---|---|---|---|---:|"]
        for case, d in rows[:max_rows]:
            delta = d.delta if d else None
            before, after = (_value(d.before), _value(d.after)) if d else ("-", "-")
            out.append(f"| {md_escape(case.eval_id)} | {case.change.value} | "
                       f"{md_escape(d.metric_name) if d else '-'} | {d.change.value if d else ''} | "
                       f"{md_escape(before)} | {md_escape(after)} | "
                       f"{'-' if delta is None else f'{delta:+.4g}'} |")
        if c.total_rows > max_rows:
            out += ["", f"… and {c.total_rows - max_rows} more changed row(s)."]
    return "\n".join(out) + "\n"


__all__ = [
    "CRITERION_CODE",
    "REGRESSIONS",
    "CaseChanges",
    "CaseDelta",
    "CaseLine",
    "Change",
    "Comparison",
    "ComparisonRows",
    "CriterionDelta",
    "Pair",
    "Shown",
    "case_changes",
    "case_delta",
    "compare",
    "compare_rows",
    "comparison_markdown",
    "comparison_table",
    "criterion_params",
]
