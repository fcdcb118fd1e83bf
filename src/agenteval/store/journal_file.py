"""The run journal's SQLite file: its tables, a new file's layout, a run's rows deleted and the
file given back its space (`store.journal` opens, fills and prunes it with these)."""

from __future__ import annotations

import contextlib
import sqlite3
from contextlib import closing

from agenteval.store.sqlite import use_wal

SCHEMA = [
    """CREATE TABLE IF NOT EXISTS journal_runs (
        run_id TEXT PRIMARY KEY, started REAL NOT NULL, updated REAL NOT NULL,
        status TEXT NOT NULL, pid INTEGER, host TEXT, fingerprint TEXT NOT NULL,
        total INTEGER NOT NULL, spec_json TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS journal_cases (
        run_id TEXT NOT NULL REFERENCES journal_runs (run_id) ON DELETE CASCADE,
        eval_set_id TEXT NOT NULL, eval_id TEXT NOT NULL, run_index INTEGER NOT NULL,
        status INTEGER NOT NULL, error INTEGER NOT NULL, result_json TEXT NOT NULL, digest TEXT,
        row_at INTEGER, row_size INTEGER, PRIMARY KEY (run_id, eval_set_id, eval_id, run_index))""",
    # What `runs` counts and `finished_keys` reads, without reading the rows' results.
    """CREATE INDEX IF NOT EXISTS journal_cases_done ON journal_cases
        (run_id, error, eval_set_id, eval_id, run_index)""",
    # Each told case's verdict (`store.kept`), in the order the cases were told.
    """CREATE TABLE IF NOT EXISTS journal_verdicts (
        run_id TEXT NOT NULL REFERENCES journal_runs (run_id) ON DELETE CASCADE,
        eval_set_id TEXT NOT NULL, eval_id TEXT NOT NULL, position INTEGER NOT NULL, runs INTEGER NOT NULL,
        status INTEGER NOT NULL, seconds REAL, tokens REAL, agent_errors INTEGER NOT NULL,
        metric_errors INTEGER NOT NULL, uncertain INTEGER NOT NULL, escalated INTEGER NOT NULL,
        summary BLOB NOT NULL, record TEXT NOT NULL, summary_at INTEGER, summary_size INTEGER,
        told INTEGER, PRIMARY KEY (run_id, eval_set_id, eval_id))""",
    # Each verdict's history rows (`store.kept`), by its `told` number: appended, never looked up
    # one by one (the history copies them with one `INSERT ... SELECT`: `store.verdict_copy`).
    """CREATE TABLE IF NOT EXISTS journal_metrics (
        run_id TEXT NOT NULL, told INTEGER NOT NULL, run_index INTEGER NOT NULL, metric_name TEXT NOT NULL,
        score REAL, threshold REAL, status INTEGER NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS journal_summaries (
        run_id TEXT NOT NULL, told INTEGER NOT NULL, metric_name TEXT NOT NULL, threshold REAL,
        runs INTEGER NOT NULL, scored_runs INTEGER NOT NULL, passed_runs INTEGER NOT NULL, mean REAL,
        std REAL, ci_low REAL, ci_high REAL, pass_at_k REAL, pass_pow_k REAL, status INTEGER NOT NULL,
        reason TEXT)""",
]
# A verdict by its `told` number, as the history's copy joins its rows to it (made after the
# columns are added: a journal made before has no `told` until then).
TOLD_INDEX = "CREATE INDEX IF NOT EXISTS journal_verdicts_told ON journal_verdicts (run_id, told)"
# Columns added since journals were first made (before digests; before rows files; before a
# criterion not evaluated kept its reason in its summary row), each added
# to a journal that lacks it when this agenteval opens it.
ADDED = (("journal_cases", "digest", "TEXT"), ("journal_cases", "row_at", "INTEGER"),
          ("journal_cases", "row_size", "INTEGER"), ("journal_verdicts", "summary_at", "INTEGER"),
          ("journal_verdicts", "summary_size", "INTEGER"), ("journal_verdicts", "told", "INTEGER"),
         ("journal_summaries", "reason", "TEXT"))
VERDICTS_LAYOUT = " escalated "  # in the table's SQL: verdicts of another layout are dropped
TABLES = {"journal_runs", "journal_cases", "journal_cases_done", "journal_verdicts", "journal_verdicts_told",
           "journal_metrics", "journal_summaries"}
# SQLite's default pages: the rows and summaries are in rows files, what is left is small, and
# each commit writes its pages whole into the WAL (with the 64 KiB pages journals had while they
# held the rows, 5,000 cases wrote 67 MB of WAL against 28 MB: bench/README.md, session 12).
# Journals made before keep their layout: the statements are the same for both.
_PAGE_SIZE = 4096


def delete_run(conn: sqlite3.Connection, run_id: str) -> None:
    """Deletes a run and its rows. The journal's only run (the usual case: it holds unfinished
    runs only) has its rows dropped in one statement, which frees their pages without visiting
    a row (SQLite's truncation of a table, which foreign-key checks would turn off); deleting
    tens of megabytes of rows one by one was most of what recording a run cost the journal."""
    conn.execute("PRAGMA foreign_keys=OFF")  # (not in a transaction: there it does nothing)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            alone = conn.execute("SELECT 1 FROM journal_runs WHERE run_id != ? LIMIT 1",
                                 (run_id,)).fetchone() is None
            for table in ("journal_cases", "journal_verdicts", "journal_metrics", "journal_summaries"):
                conn.execute(f"DELETE FROM {table}" + ("" if alone else " WHERE run_id = ?"),
                             () if alone else (run_id,))
            conn.execute("DELETE FROM journal_runs WHERE run_id = ?", (run_id,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.execute("PRAGMA foreign_keys=ON")


def layout(conn: sqlite3.Connection) -> None:
    """A new journal's pages: `_PAGE_SIZE` bytes, and incremental vacuum (forgotten runs' pages
    given back at once). Both need the empty file rebuilt (`VACUUM`), and the page size needs it
    out of WAL mode for that; another process preparing the same new journal may hold it, and
    then it keeps the default page size (best effort: the layout is a speed, not a meaning)."""
    try:
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute(f"PRAGMA page_size = {_PAGE_SIZE}")
    except sqlite3.OperationalError:
        pass
    try:
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("VACUUM")
    finally:
        use_wal(conn)


def shrink(conn: sqlite3.Connection, checkpoint: bool = True) -> None:
    """Gives the pages of forgotten runs back to the file system. A journal that holds no run
    any more (the usual case) is rebuilt (`VACUUM`: cheap when empty, where an incremental vacuum
    moved every freed page through the WAL, as much as the run's rows), an older journal then
    with incremental vacuum from then on; a journal still holding runs frees its pages at once
    when made with incremental vacuum; then (`checkpoint`) the WAL is checkpointed and emptied.
    Best effort: a busy journal is shrunk another time."""
    try:
        incremental = conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
        if conn.execute("SELECT count(*) FROM journal_runs").fetchone()[0] == 0:
            if not incremental:
                conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
            try:
                conn.execute("VACUUM")
            except sqlite3.OperationalError:  # another connection is reading: free what is free
                if not incremental:
                    raise
                conn.executescript("PRAGMA incremental_vacuum")
        elif incremental:
            conn.executescript("PRAGMA incremental_vacuum")  # stepped to the end: every free page
        if checkpoint:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.OperationalError:
        pass


def checkpoint_and_close(conn: sqlite3.Connection) -> None:
    with closing(conn), contextlib.suppress(sqlite3.Error):  # (best effort, as in `shrink`)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


__all__ = ["ADDED", "SCHEMA", "TABLES", "TOLD_INDEX", "VERDICTS_LAYOUT", "checkpoint_and_close", "delete_run",
           "layout", "shrink"]
