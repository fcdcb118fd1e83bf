"""A journaled run's cases recorded in the run history by SQLite alone, from the journal.

A journaled run's verdicts (`store.kept`, record version 2) keep each case's history rows beside
them in the journal (`journal_metrics`, `journal_summaries`, by the verdict's `told` number), as
the writer thread commits them. Recording the run then copies them into the history's tables
with one `INSERT ... SELECT` per table over the journal, attached to the history's connection
(`RunStore.record_copied`): no row passes through Python. Inserting 65,000 rows (5,000 trivial
cases) from Python with `executemany` cost 0.14 s; the same rows copied in SQLite, 0.03 s; a
resume records its kept cases this way too. The copy runs inside the history's recording
transaction, so a run is still recorded whole or not at all. The summaries of a `DERIVED`
verdict's case (one run) are not copied at all: the history derives them where they are read
(its `case_summaries` view).

`CaseTotals` is what the run's row sums over its cases, from either way of recording.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from agenteval.schema import EvalStatus
from agenteval.store.kept import DERIVED

ATTACHED = "journal"
"""The schema name the journal is attached under."""

_PASSED, _INFORMATIONAL = int(EvalStatus.PASSED), int(EvalStatus.INFORMATIONAL)
_CHANCE = f"CASE WHEN m.status = {_INFORMATIONAL} THEN NULL ELSE (m.status = {_PASSED}) * 1.0 END"
DERIVED_SUMMARY = (f"m.metric_name, m.threshold, 1, m.score IS NOT NULL, m.status = {_PASSED}, m.score, "
                   "CASE WHEN m.score IS NULL THEN NULL ELSE 0.0 END, m.score, m.score, "
                   f"{_CHANCE}, {_CHANCE}, m.status")
"""The summary row's columns after the run and eval ids (`metric_name` to `status`) that a
metric row `m` of a case of one run gives, as `store.kept.derived_summaries` makes them (values
copied and constants: the same values and types as a stored row's): what the history's
`case_summaries` view derives for a case whose summaries are not stored."""


def add(total: float | None, value: float | None) -> float | None:
    """`total` + `value`, either of them absent (None: neither present), added in case order as
    the Python recording does (so both ways give the same float)."""
    if value is None:
        return total
    return value if total is None else total + value


@dataclass
class CaseTotals:
    """What the run's row sums over its cases: verdicts by status, the largest number of runs,
    agent seconds and tokens (None: no case had any), judge models and prompt tokens."""

    statuses: dict[EvalStatus, int] = field(default_factory=lambda: dict.fromkeys(EvalStatus, 0))
    max_runs: int = 0
    agent_seconds: float | None = None
    total_tokens: float | None = None
    judges: set[str] = field(default_factory=set)
    judge_tokens: int = 0


def copy_cases(conn: sqlite3.Connection, run_id: str, journal_run_id: str, eval_set_id: str) -> CaseTotals:
    """Inserts the history's rows (`cases`, `case_metrics`, `metric_summaries`) of document
    `run_id` from the verdicts of eval set `eval_set_id` of the journaled run `journal_run_id`
    (the journal attached as `ATTACHED`, every verdict of a version beside it:
    `Journal.copyable`), and returns what the run's row sums over them. A `DERIVED` verdict's
    case is marked `summaries_derived`, its summaries not stored: the history derives them
    (`DERIVED_SUMMARY`) where they are read."""
    j = ATTACHED
    of_set = (journal_run_id, eval_set_id)
    conn.execute("INSERT INTO cases SELECT ?, eval_id, position, status, runs, seconds, tokens, "
                 f"json_extract(record, '$[1]'), substr(record, 1, 3) = '[{DERIVED},' "
                 f"FROM {j}.journal_verdicts WHERE run_id = ? AND eval_set_id = ?",
                 (run_id, *of_set))
    # Each verdict's rows by its `told` number: rows a stale verdict left behind match no verdict.
    # Each row looks its verdict up by its `told` number (`journal_verdicts_told`); the eval set is
    # not matched by an index (`+`), or SQLite would scan the set's verdicts for every row.
    conn.execute("INSERT INTO case_metrics SELECT ?, v.eval_id, m.run_index, m.metric_name, m.score, "
                 f"m.threshold, m.status FROM {j}.journal_metrics m JOIN {j}.journal_verdicts v "
                 "ON v.run_id = m.run_id AND v.told = m.told WHERE m.run_id = ? AND +v.eval_set_id = ?",
                 (run_id, *of_set))
    conn.execute("INSERT INTO metric_summaries SELECT ?, v.eval_id, s.metric_name, s.threshold, s.runs, "
                 "s.scored_runs, s.passed_runs, s.mean, s.std, s.ci_low, s.ci_high, s.pass_at_k, "
                 f"s.pass_pow_k, s.status FROM {j}.journal_summaries s JOIN {j}.journal_verdicts v "
                 "ON v.run_id = s.run_id AND v.told = s.told WHERE s.run_id = ? AND +v.eval_set_id = ?",
                 (run_id, *of_set))
    totals = CaseTotals()
    for status, count, most, judge_tokens in conn.execute(
            "SELECT status, count(*), max(runs), sum(json_extract(record, '$[3]')) "
            f"FROM {j}.journal_verdicts WHERE run_id = ? AND eval_set_id = ? GROUP BY status", of_set):
        totals.statuses[EvalStatus(status)] += count
        totals.max_runs = max(totals.max_runs, most)
        totals.judge_tokens += judge_tokens or 0
    # Summed here, in document order, as the Python recording sums them (SQLite's `sum` of reals
    # is compensated: its last bits may differ).
    for seconds, tokens in conn.execute(f"SELECT seconds, tokens FROM {j}.journal_verdicts WHERE run_id = ? "
                                        "AND eval_set_id = ? ORDER BY position", of_set):
        totals.agent_seconds = add(totals.agent_seconds, seconds)
        totals.total_tokens = add(totals.total_tokens, tokens)
    totals.judges.update(name for (name,) in conn.execute(
        f"SELECT DISTINCT n.value FROM {j}.journal_verdicts v, json_each(v.record, '$[2]') n "
        "WHERE v.run_id = ? AND v.eval_set_id = ?", of_set))
    return totals


__all__ = ["ATTACHED", "DERIVED_SUMMARY", "CaseTotals", "add", "copy_cases"]
