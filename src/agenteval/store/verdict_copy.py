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

import atexit
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from agenteval.schema import EvalStatus
from agenteval.store.kept import DERIVED
from agenteval.store.sqlite import let_wal_go

ATTACHED = "journal"
"""The schema name the journal is attached under."""

_PASSED, _INFORMATIONAL = int(EvalStatus.PASSED), int(EvalStatus.INFORMATIONAL)
_CHANCE = f"CASE WHEN m.status = {_INFORMATIONAL} THEN NULL ELSE (m.status = {_PASSED}) * 1.0 END"
DERIVED_SUMMARY = (f"m.metric_name, m.threshold, 1, m.score IS NOT NULL, m.status = {_PASSED}, m.score, "
                   "CASE WHEN m.score IS NULL THEN NULL ELSE 0.0 END, m.score, m.score, "
                   f"{_CHANCE}, {_CHANCE}, m.status, NULL")
"""The summary row's columns after the run and eval ids (`metric_name` to `status`) that a
metric row `m` of a case of one run gives, as `store.kept.derived_summaries` makes them (values
copied and constants, no reason: the same values and types as a stored row's): what the history's
`case_summaries` view derives for a case whose summaries are not stored."""


def add(total: float | None, value: float | None) -> float | None:
    """`total` + `value`, either of them absent (None: neither present), added in case order as
    the Python recording does (so both ways give the same float)."""
    if value is None:
        return total
    return value if total is None else total + value


_closing: list[threading.Thread] = []  # `beside`'s threads not yet waited for


@contextmanager
def closed_beside(conn: sqlite3.Connection, path: Path) -> Iterator[sqlite3.Connection]:
    """`conn` (a recording's, `RunStore.record_copied`'s, to the history at `path`), closed when
    the block ends: at once if it raised, else on a thread of its own (`settle` waits for it).
    Its close is the history's checkpoint (it copies the run's pages from the WAL into the file
    and syncs both): the recording is durable once committed, so that need not hold up what
    follows (`RunStore.recording` turns its checkpoints at commit off; a process ending first
    leaves the WAL to the history's next connection, as a kill would). The connection a resume's
    claim kept (`store.sqlite.hold_wal`) is closed first, here: with `conn` open it is not the
    last, so its close merges nothing and `conn`'s does."""
    try:
        yield conn
    except BaseException:
        conn.close()
        raise
    held = let_wal_go(path)
    if held is not None:
        held.close()
    beside(conn.close, "agenteval-history-close")


def beside(work: Callable[[], None], name: str) -> threading.Thread:
    """Runs `work` (closing a connection: its checkpoint's syncs; removing a file) on a thread of
    its own, named `name` and returned, which `settle` waits for, as does the process's exit."""
    thread = threading.Thread(target=work, name=name, daemon=True)
    thread.start()
    _closing.append(thread)
    return thread


@atexit.register
def settle() -> None:
    """Waits for the work `beside` is doing (`closed_beside`'s closes, `Journal.forget`'s
    checkpoint and the forgotten run's rows file's removal); the process's exit waits for it too."""
    while _closing:
        _closing.pop().join()


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
    copy_rows(conn, run_id, journal_run_id, eval_set_id)
    return case_totals(conn, ATTACHED, journal_run_id, eval_set_id)


def _selects(j: str, told: str | None, after: tuple[int, int] = (0, 0)) -> tuple[str, str, str]:
    """The history's `cases`, `case_metrics` and `metric_summaries` rows (but their first column,
    the document's run id) of the verdicts of one eval set of one journaled run, read from the
    journal as schema `j`: what follows `SELECT`, with two parameters (the journaled run's id,
    the eval set's), and `told` (e.g. `{c} <= 12`, `{c} > 3 AND {c} <= 9`, `{c}` standing for
    the column) bounding the verdicts' numbers; the metric and summary rows read are those after
    the rowids `after` (`rows_after`; 0: all)."""
    def upto(column: str) -> str:
        return "" if told is None else f" AND {told.format(c=column)}"

    # The journal's metric and summary tables have no index (the writer appends to them all run
    # long): a copy of the verdicts told since the last reads only the rows appended since, a
    # range of rowids, instead of scanning every row of the run again (41-63 ms of the copy
    # thread a 5,000-case run, 8 copies: bench/README.md, session 23). The rows stay the outer
    # loop (`CROSS JOIN`): with a rowid range SQLite would otherwise scan the verdicts and read
    # the range again for each.
    def since(alias: str, rowid: int) -> str:
        return f" AND {alias}.rowid > {int(rowid)}" if rowid else ""

    # Each verdict's rows by its `told` number: rows a stale verdict left behind match no verdict.
    # Each row looks its verdict up by its `told` number (`journal_verdicts_told`); the eval set is
    # not matched by an index (`+`), or SQLite would scan the set's verdicts for every row; nor is
    # the bound on the rows' `told`, which led SQLite to look the verdicts up by it instead, and to
    # scan every row for each verdict.
    return (f"eval_id, position, status, runs, seconds, tokens, json_extract(record, '$[1]'), "
            f"substr(record, 1, 3) = '[{DERIVED},' FROM {j}.journal_verdicts "
            f"WHERE run_id = ? AND eval_set_id = ?{upto('told')}",
            f"v.eval_id, m.run_index, m.metric_name, m.score, m.threshold, m.status "
            f"FROM {j}.journal_metrics m CROSS JOIN {j}.journal_verdicts v "
            f"ON v.run_id = m.run_id AND v.told = m.told "
            f"WHERE m.run_id = ? AND +v.eval_set_id = ?{upto('+m.told')}{since('m', after[0])}",
            f"v.eval_id, s.metric_name, s.threshold, s.runs, s.scored_runs, s.passed_runs, s.mean, s.std, "
            f"s.ci_low, s.ci_high, s.pass_at_k, s.pass_pow_k, s.status, s.reason "
            f"FROM {j}.journal_summaries s CROSS JOIN {j}.journal_verdicts v "
            f"ON v.run_id = s.run_id AND v.told = s.told "
            f"WHERE s.run_id = ? AND +v.eval_set_id = ?{upto('+s.told')}{since('s', after[1])}")


CASE_TABLES = ("cases", "case_metrics", "metric_summaries")
"""The history's tables of a run's cases (every table referring to `runs`), in `_selects`' order."""


def copy_rows(conn: sqlite3.Connection, run_id: str, journal_run_id: str, eval_set_id: str,
              told: int | None = None) -> None:
    """`copy_cases` but the totals; with `told`, only the verdicts told up to that number."""
    _copy_between(conn, ATTACHED, run_id, journal_run_id, eval_set_id, None if told is None else (0, told))


def _copy_between(conn: sqlite3.Connection, schema: str, run_id: str, journal_run_id: str, eval_set_id: str,
                  told: tuple[int, int] | None, after: tuple[int, int] = (0, 0)) -> None:
    """Inserts the rows of the verdicts (of eval set `eval_set_id` of the journaled run
    `journal_run_id`, read from `schema`) told after `told[0]` and up to `told[1]` (None: all),
    their metric and summary rows looked for after the rowids `after` only."""
    bound = None if told is None else f"{{c}} > {int(told[0])} AND {{c}} <= {int(told[1])}"
    for table, select in zip(CASE_TABLES, _selects(schema, bound, after), strict=True):
        conn.execute(f"INSERT INTO {table} SELECT ?, {select}", (run_id, journal_run_id, eval_set_id))


def case_totals(conn: sqlite3.Connection, schema: str, journal_run_id: str, eval_set_id: str) -> CaseTotals:
    """What the run's row sums over the verdicts of eval set `eval_set_id` of the journaled run
    `journal_run_id`, the journal being `schema` of `conn` ("main": a connection to it)."""
    j = schema
    of_set = (journal_run_id, eval_set_id)
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


@dataclass
class Summed:
    """What the run's row sums (`totals`) over the verdicts of places 0 to `next` - 1 of one eval
    set, added in document order as a run's rows are staged (`sum_told`, `store.staging`)."""

    totals: CaseTotals = field(default_factory=CaseTotals)
    next: int = 0


_TOTALLED = ("position, status, runs, seconds, tokens, json_extract(record, '$[3]'), "
             "json_extract(record, '$[2]')")
_STATUSES = {int(status): status for status in EvalStatus}


def sum_told(conn: sqlite3.Connection, schema: str, journal_run_id: str, eval_set_id: str,
             told: tuple[int, int], summed: Summed | None) -> Summed | None:
    """`summed` with the verdicts (of eval set `eval_set_id` of the journaled run
    `journal_run_id`, read from `schema`) told after `told[0]` and up to `told[1]` added, when
    they are the places `summed.next` onwards in the order told; else None (nor with `summed`
    None). Each stage sums the verdicts it copies (on the stages' thread; kept with the stage, so
    a resume goes on from a killed run's sums), so the recording's end reads only the last few
    instead of every verdict of the run (three reads
    of each, 15 ms of the main thread's CPU and up to 80 ms of wall through the end's cold
    snapshot at 5,000 cases: bench/README.md, session 25). A fresh run tells its cases in
    document order, so its verdicts come so; a verdict told again (its case's runs retried)
    comes again, at a place already summed, and ends the sums (`copied_totals` then reads all)."""
    if summed is None:
        return None
    # (By the verdicts' `told` index, in the order told; the eval set is not matched by an index.)
    found = conn.execute(f"SELECT {_TOTALLED} FROM {schema}.journal_verdicts WHERE run_id = ? AND told > ? "
                         "AND told <= ? AND +eval_set_id = ? ORDER BY told",
                         (journal_run_id, int(told[0]), int(told[1]), eval_set_id)).fetchall()
    if [v[0] for v in found] != list(range(summed.next, summed.next + len(found))):
        return None
    sums = summed.totals
    counts: dict[int, int] = {}
    judges: set[str] = set()  # (each distinct list of judge models, as JSON: almost always "[]")
    for _, status, runs, seconds, tokens, judge_tokens, models in found:
        counts[status] = counts.get(status, 0) + 1
        sums.max_runs = max(sums.max_runs, runs)
        sums.judge_tokens += judge_tokens or 0
        sums.agent_seconds = add(sums.agent_seconds, seconds)  # (in document order: see `add`)
        sums.total_tokens = add(sums.total_tokens, tokens)
        judges.add(models)
    for status, count in counts.items():
        sums.statuses[_STATUSES[status]] += count
    for models in judges.difference(("[]", None)):
        sums.judges.update(json.loads(models))
    summed.next += len(found)
    return summed


def copied_totals(conn: sqlite3.Connection, schema: str, journal_run_id: str, eval_set_id: str,
           summed: Summed | None) -> CaseTotals:
    """What the run's row sums over the verdicts of eval set `eval_set_id` of the journaled run
    `journal_run_id` read from `schema`: `summed`'s totals when it summed each of them once, in
    document order (it summed places 0 to `next` - 1 once each, and the set has `next` verdicts:
    a verdict deleted or told again since it was summed would leave fewer, or repeat a place);
    else `case_totals`."""
    if summed is not None:
        (held,) = conn.execute(f"SELECT count(*) FROM {schema}.journal_verdicts WHERE run_id = ? "
                               "AND eval_set_id = ?", (journal_run_id, eval_set_id)).fetchone()
        if held == summed.next:
            return summed.totals
    return case_totals(conn, schema, journal_run_id, eval_set_id)


def rows_after(conn: sqlite3.Connection, schema: str, journal_run_id: str) -> tuple[int, int]:
    """The rowids of the journaled run's last metric row and last summary row in the journal read
    as `schema` (0: none). A verdict told after the last one `schema` holds has its rows after
    them: the writer appends a run's rows in the order it numbers the verdicts, SQLite gives a
    new row a rowid above the table's largest, and a run's rows stay, with their rowids, until
    it is forgotten (so the largest is at least these, whatever other runs' rows come and go;
    only a journal that holds no run is rebuilt by `VACUUM`, which renumbers: `journal_file.shrink`)."""
    last = "SELECT rowid FROM {}.{} WHERE run_id = ?1 ORDER BY rowid DESC LIMIT 1"  # (read from the end)
    found = conn.execute(f"SELECT ({last.format(schema, 'journal_metrics')}), "
                         f"({last.format(schema, 'journal_summaries')})", (journal_run_id,)).fetchone()
    return int(found[0] or 0), int(found[1] or 0)


def copy_told_after(conn: sqlite3.Connection, schema: str, run_id: str, journal_run_id: str, eval_set_id: str,
                    told: int, after: tuple[int, int] = (0, 0)) -> int:
    """More of a document's rows copied up to verdict `told` (`store.staging`): the verdicts
    told since, read from the journal attached as `schema` (a transaction reads one snapshot of
    it, taken when it first reads it), as rows of `conn`'s history, replacing those a case had (a
    case told again: its runs retried); their metric and summary rows are looked for after the
    rowids `after` only (`rows_after` of the snapshot copied up to `told`). Returns the last
    verdict number copied."""
    (last,) = conn.execute(f"SELECT max(told) FROM {schema}.journal_verdicts WHERE run_id = ?",
                           (journal_run_id,)).fetchone()
    if last is None or last <= told:
        return told
    for table in CASE_TABLES:  # (a case told again: its earlier rows go)
        conn.execute(f"DELETE FROM {table} WHERE run_id = ? AND eval_id IN (SELECT eval_id FROM "
                     f"{schema}.journal_verdicts WHERE run_id = ? AND eval_set_id = ? AND told > ? "
                     "AND told <= ?)", (run_id, journal_run_id, eval_set_id, told, last))
    _copy_between(conn, schema, run_id, journal_run_id, eval_set_id, (told, last), after)
    return int(last)


__all__ = ["ATTACHED", "CASE_TABLES", "DERIVED_SUMMARY", "CaseTotals", "Summed", "add", "beside",
           "case_totals", "closed_beside", "copied_totals", "copy_cases", "copy_rows", "copy_told_after",
           "rows_after", "settle", "sum_told"]
