"""A journaled run's case rows written into the run history as the run goes, hidden until it is
recorded (the history's `staged` table: `store.history_schema`).

Why: recording a run copies its cases' rows from the journal into the history (`INSERT ...
SELECT`, `store.verdict_copy`). Copied in one transaction, held open from near the run's end,
a killed run's copy was rolled back with the process, and its resume copied every kept case
again: 9,900 of a 10,000-case run, ≈ 940 M instructions and 0.3 s of CPU beside the run
(bench/README.md, session 38). Staged, a run's rows are committed as the run goes (`stage`, on a
thread: `store.kept_copy`), so a killed run leaves them, and its resume takes the same document
id (`staged_document`) and adds only the cases told since.

Visibility: a staged document has case rows and no `runs` row, and every reader of the history
starts from `runs` (an id, a prefix, an alias, a run group, a listing), so none sees a run half
recorded. Its recording (`finish`, in the recording's one transaction) adds the verdicts told
since the last stage, deletes the `staged` row and writes the `runs` row; it checks that the
history holds one case per verdict of the set, and else copies them all again (a verdict the
journal lost after it was staged). What a killed run leaves stays until its resume finishes it;
the stages of a journaled run the journal no longer holds (recorded under another document,
pruned after 30 days, the journal removed) are dropped by the next recording (`drop_unowned`,
from `store.record.tidy`), and those of the same run and eval set by that document's recording
(`drop_others`).

Their `FOREIGN KEY` to `runs` is not checked for them (the connection staging them turns the
checks off, as every recording does for its copy): until recorded, `PRAGMA foreign_key_check`
lists them.

Locks: a stage takes the history's write lock for its own transaction only (tens of ms), by
writing before it reads; the attached journal is only read (its writer never waits for it).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from agenteval.schema import EvalStatus
from agenteval.store.verdict_copy import (
    ATTACHED,
    CASE_TABLES,
    CaseTotals,
    Summed,
    copied_totals,
    copy_rows,
    copy_told_after,
    rows_after,
    sum_told,
)


def staged_document(conn: sqlite3.Connection, journal_run_id: str, eval_set_id: str) -> str | None:
    """The document id the journaled run `journal_run_id` staged rows of eval set `eval_set_id`
    under (the latest, if several), for its resume to take; None: none."""
    row = conn.execute("SELECT run_id FROM staged WHERE journal_run_id = ? AND eval_set_id = ? "
                       "ORDER BY rowid DESC LIMIT 1", (journal_run_id, eval_set_id)).fetchone()
    return None if row is None else str(row[0])


def stage(conn: sqlite3.Connection, run_id: str, journal_run_id: str, eval_set_id: str) -> int | None:
    """Stages, in a transaction of its own, the rows of the verdicts (of eval set `eval_set_id`
    of the journaled run `journal_run_id`, the journal attached to `conn` as `ATTACHED`) told
    since the document `run_id` was last staged; returns the last verdict number staged, None
    when the document is recorded already (nothing is done)."""
    conn.execute("BEGIN")
    try:
        # A write first: the history's write lock is taken (waited for) before anything is read,
        # so the transaction never needs to turn a stale read into a write (SQLite refuses that
        # at once, without waiting); a deferred BEGIN leaves the attached journal unlocked.
        conn.execute("INSERT INTO staged VALUES (?, ?, ?, 0, 0, 0, NULL) ON CONFLICT (run_id) DO NOTHING",
                     (run_id, journal_run_id, eval_set_id))
        if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is not None:
            conn.execute("ROLLBACK")
            return None
        told, _ = _copy_since(conn, run_id, journal_run_id, eval_set_id)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return told


def _copy_since(conn: sqlite3.Connection, run_id: str, journal_run_id: str,
                eval_set_id: str) -> tuple[int, Summed | None]:
    """Copies the verdicts told since document `run_id`'s stage (its `staged` row, which must
    exist) and moves the stage on, with what the run's row sums over the verdicts staged
    (`sum_told`: each stage sums those it copies, so the recording's end reads only the last few
    of the journal's verdicts, not all of them: 30 ms of the run's thread at 10,000); returns
    the last verdict number staged and those sums (None: not summed, `case_totals` sums them at
    the end)."""
    told, after_metrics, after_summaries, of_run, of_set, sums = conn.execute(
        "SELECT told, after_metrics, after_summaries, journal_run_id, eval_set_id, sums FROM staged "
        "WHERE run_id = ?", (run_id,)).fetchone()
    if (of_run, of_set) != (journal_run_id, eval_set_id):  # (staged by another run: begun again)
        told = 0
    if told == 0:  # (the first stage: every verdict so far, no case told again to look for)
        (last,) = conn.execute(f"SELECT max(told) FROM {ATTACHED}.journal_verdicts WHERE run_id = ?",
                               (journal_run_id,)).fetchone()
        if last is None:
            return 0, Summed()
        _clear(conn, "run_id = ?", (run_id,))
        copy_rows(conn, run_id, journal_run_id, eval_set_id, int(last))
        summed = sum_told(conn, ATTACHED, journal_run_id, eval_set_id, (0, int(last)), Summed())
    else:
        last = copy_told_after(conn, ATTACHED, run_id, journal_run_id, eval_set_id, int(told),
                               (int(after_metrics), int(after_summaries)))
        summed = sum_told(conn, ATTACHED, journal_run_id, eval_set_id, (int(told), int(last)), _loads(sums))
    if last != told:
        # (Read in the snapshot just copied: the rows of every verdict told later lie after them.)
        after = rows_after(conn, ATTACHED, journal_run_id)
        conn.execute("UPDATE staged SET journal_run_id = ?, eval_set_id = ?, told = ?, after_metrics = ?, "
                     "after_summaries = ?, sums = ? WHERE run_id = ?",
                     (journal_run_id, eval_set_id, int(last), *after, _dumps(summed), run_id))
    return int(last), summed


def _dumps(summed: Summed | None) -> str | None:
    """`summed` as the `staged` row keeps it (JSON: a float's repr reads back the same float)."""
    if summed is None:
        return None
    t = summed.totals
    return json.dumps([summed.next, {int(k): v for k, v in t.statuses.items() if v}, t.max_runs,
                       t.agent_seconds, t.total_tokens, sorted(t.judges), t.judge_tokens])


def _loads(text: str | None) -> Summed | None:
    """The sums `_dumps` kept (None: none)."""
    if text is None:
        return None
    after, statuses, max_runs, seconds, tokens, judges, judge_tokens = json.loads(text)
    totals = CaseTotals(max_runs=max_runs, agent_seconds=seconds, total_tokens=tokens, judges=set(judges),
                        judge_tokens=judge_tokens)
    for status, count in statuses.items():
        totals.statuses[EvalStatus(int(status))] = count
    return Summed(totals, after)


def finish(conn: sqlite3.Connection, run_id: str, journal_run_id: str, eval_set_id: str) -> CaseTotals | None:
    """In the recording's transaction (the journal attached as `ATTACHED`): document `run_id`'s
    stage completed with the verdicts told since, checked (one case per verdict of the set, else
    every row copied again) and its `staged` row deleted; what the run's row sums over its cases
    (`copied_totals`). None: it was not staged by this run (nothing done: the caller copies
    every row)."""
    if conn.execute("SELECT 1 FROM staged WHERE run_id = ? AND journal_run_id = ? AND eval_set_id = ?",
                    (run_id, journal_run_id, eval_set_id)).fetchone() is None:
        return None
    _, summed = _copy_since(conn, run_id, journal_run_id, eval_set_id)
    conn.execute("DELETE FROM staged WHERE run_id = ?", (run_id,))
    # A stage replaces the rows of a case told again, so it holds one case per verdict, unless
    # the journal dropped a verdict after it was staged: two counts by index decide.
    (held,) = conn.execute("SELECT count(*) FROM cases WHERE run_id = ?", (run_id,)).fetchone()
    (verdicts,) = conn.execute(f"SELECT count(*) FROM {ATTACHED}.journal_verdicts WHERE run_id = ? "
                               "AND eval_set_id = ?", (journal_run_id, eval_set_id)).fetchone()
    if held != verdicts:
        _clear(conn, "run_id = ?", (run_id,))
        copy_rows(conn, run_id, journal_run_id, eval_set_id)
        summed = None
    return copied_totals(conn, ATTACHED, journal_run_id, eval_set_id, summed)


def drop_others(conn: sqlite3.Connection, run_id: str, journal_run_id: str, eval_set_id: str) -> None:
    """In a recording's transaction: the stages of the same journaled run and eval set under
    another document id than `run_id` (a resume that did not take them) dropped."""
    _drop(conn, "journal_run_id = ? AND eval_set_id = ? AND run_id != ?",
          (journal_run_id, eval_set_id, run_id))


def drop_unowned(conn: sqlite3.Connection, journaled: Callable[[], set[str]],
                 seen: set[str] | None = None) -> int:
    """Drops the stages of journaled runs that `journaled()` (the run journal's run ids, read
    once the history's write lock is held: a run's stage is committed after its journal row, so
    no stage begun meanwhile is taken for an orphan) does not name; the number dropped. Nothing
    is locked while every stage is of a run in `seen` (the journal's run ids read before; None:
    read now)."""
    of = {r[0] for r in conn.execute("SELECT DISTINCT journal_run_id FROM staged")}
    if not of or of <= (journaled() if seen is None else seen):  # (the usual cases)
        return 0
    conn.execute("BEGIN IMMEDIATE")
    try:
        of = {r[0] for r in conn.execute("SELECT DISTINCT journal_run_id FROM staged")}
        gone = sorted(of - journaled())
        for i in range(0, len(gone), 500):  # under SQLite's bound-parameter limit
            chunk = gone[i:i + 500]
            _drop(conn, f"journal_run_id IN ({', '.join('?' * len(chunk))})", tuple(chunk))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return len(gone)


def _drop(conn: sqlite3.Connection, where: str, args: tuple[str, ...]) -> None:
    """The stages `where` selects (of `staged`), their case rows first."""
    _clear(conn, f"run_id IN (SELECT run_id FROM staged WHERE {where})", args)
    conn.execute(f"DELETE FROM staged WHERE {where}", args)


def _clear(conn: sqlite3.Connection, where: str, args: tuple[str, ...]) -> None:
    for table in CASE_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE {where}", args)


__all__ = ["drop_others", "drop_unowned", "finish", "stage", "staged_document"]
