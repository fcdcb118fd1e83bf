"""The run database's layout (tables, indexes, the summaries' view) and its migration: a
database of an older version gains its columns in place, one of a newer version is refused.
The schema's version is in `schema_version`; the tables (`store.db` reads and writes them):

* `runs` — one row per recorded result: id (`eval_set_result_id`), created (the result's
  timestamp, epoch seconds), recorded, eval set id, file and sha256, command, agent, agent and
  judge models, gating, runs per case, case counts, wall-clock and agent seconds, agent tokens,
  judge prompt tokens, config and meta as JSON, the result file's path (relative to the
  root when inside it), and (since version 2) the run it belongs to (`run_group`, shared by the
  documents of one run over several eval sets) with its header as JSON (`spec_json`).
* `cases` — per run and eval id: position (case order), verdict over runs, runs, agent seconds
  and tokens, first inference error, and (since version 3) `summaries_derived`: 1 when the
  case's criterion summaries are not stored but derived from its metric rows (below).
* `case_metrics` — per run, eval id, run index and criterion: score, threshold, status (ADK's
  integers). Trends come from joining it with `runs`.
* `metric_summaries` — per run, eval id and criterion: the summary over repeated runs (mean,
  std, 95% CI, passed runs, pass@k, pass^k, status) and (since version 4) the reason of a
  criterion not evaluated (NULL for any other status: readers describe the others from their
  scores), stored for the cases whose summaries are not derived (a case with a criterion not
  evaluated never is).
* `case_summaries` (a view, since version 3) — every case's criterion summaries, as readers
  read them: the stored rows, and for a case of `summaries_derived` its metric rows' summaries
  as `store.kept.derived_summaries` makes them (a case of one run whose summary is its score as
  mean and bounds, deviation 0, pass@1 and pass^1 1 or 0: values copied and constants, so the
  view gives exactly the rows that would have been stored). Most cases are of that kind; not
  storing their summaries halves the rows a recording inserts (the summaries were ≈45% of
  copying a resumed 10,000-case run into the history: bench/README.md, sessions 19–20). A
  database of an older version keeps its stored rows (its cases read `summaries_derived` 0).
* `staged` (since version 5) — the documents whose case rows a journaled run is writing as it
  goes (`store.staging`): document id, the journaled run and eval set, the last verdict number
  staged, the journal's rowids after which later verdicts' rows lie, and what the run's row
  sums over the verdicts staged (JSON; NULL: summed at the end). A staged document has
  rows in `cases`, `case_metrics` and `metric_summaries` but no `runs` row, and every reader
  starts from `runs` (a run's id, its alias or prefix, its group), so none sees them; its
  recording writes the `runs` row and deletes the `staged` one in one transaction. An older
  database gains the table (empty) in place.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agenteval.errors import DataError
from agenteval.store.verdict_copy import DERIVED_SUMMARY

SCHEMA_VERSION = 5

SCHEMA = [
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS runs (
        run_id TEXT PRIMARY KEY, created REAL NOT NULL, recorded REAL NOT NULL,
        eval_set_id TEXT NOT NULL, eval_set_file TEXT, eval_set_sha256 TEXT, command TEXT,
        agent TEXT, agent_model TEXT, judge_model TEXT, gating TEXT NOT NULL,
        num_runs INTEGER NOT NULL, cases_total INTEGER NOT NULL, cases_passed INTEGER NOT NULL,
        cases_failed INTEGER NOT NULL, cases_not_evaluated INTEGER NOT NULL,
        duration_seconds REAL, agent_seconds REAL, total_tokens REAL, judge_prompt_tokens INTEGER,
        config_json TEXT, meta_json TEXT, result_path TEXT NOT NULL, run_group TEXT, spec_json TEXT)""",
    "CREATE INDEX IF NOT EXISTS runs_created ON runs (created)",
    "CREATE INDEX IF NOT EXISTS runs_eval_set ON runs (eval_set_id, created)",
    "CREATE INDEX IF NOT EXISTS runs_group ON runs (run_group)",
    """CREATE TABLE IF NOT EXISTS cases (
        run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE, eval_id TEXT NOT NULL,
        position INTEGER NOT NULL, status INTEGER NOT NULL, runs INTEGER NOT NULL,
        agent_seconds REAL, total_tokens REAL, error_message TEXT,
        summaries_derived INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (run_id, eval_id)) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS cases_eval_id ON cases (eval_id)",
    """CREATE TABLE IF NOT EXISTS case_metrics (
        run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE, eval_id TEXT NOT NULL,
        run_index INTEGER NOT NULL, metric_name TEXT NOT NULL, score REAL, threshold REAL,
        status INTEGER NOT NULL, PRIMARY KEY (run_id, eval_id, run_index, metric_name)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS metric_summaries (
        run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE, eval_id TEXT NOT NULL,
        metric_name TEXT NOT NULL, threshold REAL, runs INTEGER NOT NULL, scored_runs INTEGER NOT NULL,
        passed_runs INTEGER NOT NULL, mean REAL, std REAL, ci_low REAL, ci_high REAL,
        pass_at_k REAL, pass_pow_k REAL, status INTEGER NOT NULL, reason TEXT,
        PRIMARY KEY (run_id, eval_id, metric_name)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS staged (
        run_id TEXT PRIMARY KEY, journal_run_id TEXT NOT NULL, eval_set_id TEXT NOT NULL,
        told INTEGER NOT NULL, after_metrics INTEGER NOT NULL, after_summaries INTEGER NOT NULL,
        sums TEXT)""",
    f"""CREATE VIEW IF NOT EXISTS case_summaries AS
        SELECT run_id, eval_id, metric_name, threshold, runs, scored_runs, passed_runs, mean, std, ci_low,
               ci_high, pass_at_k, pass_pow_k, status, reason FROM metric_summaries
        UNION ALL
        SELECT c.run_id, c.eval_id, {DERIVED_SUMMARY} FROM cases c CROSS JOIN case_metrics m
            ON m.run_id = c.run_id AND m.eval_id = c.eval_id WHERE c.summaries_derived""",
    # (CROSS JOIN: each case's metric rows by one seek; the planner's order, a case looked up per
    # metric row, made a 10,000-case run's summaries 30% slower to read.)
]

# Older databases gain the columns in place (their cases' summaries stay stored).
V2_COLUMNS = ("ALTER TABLE runs ADD COLUMN run_group TEXT", "ALTER TABLE runs ADD COLUMN spec_json TEXT")
V3_COLUMNS = ("ALTER TABLE cases ADD COLUMN summaries_derived INTEGER NOT NULL DEFAULT 0",)
# (The view is made again to read the new column.)
V4_COLUMNS = ("ALTER TABLE metric_summaries ADD COLUMN reason TEXT", "DROP VIEW IF EXISTS case_summaries")


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Brings the database at `path` (open as `conn`) to `SCHEMA_VERSION`, in one transaction;
    a DataError naming `schema_version` when a newer agenteval wrote it."""
    row = conn.execute("SELECT name FROM sqlite_master WHERE name = 'schema_version'").fetchone()
    if row is not None:
        version = conn.execute("SELECT max(version) FROM schema_version").fetchone()[0]
        if version is not None and version > SCHEMA_VERSION:
            raise DataError(path, "schema_version", f"version {version} was written by a newer "
                            f"agenteval (this one reads up to {SCHEMA_VERSION})")
        if version == SCHEMA_VERSION:
            return
    else:
        # Tables but no version: another program's database, which gaining agenteval's tables
        # would change (a fresh file has none and is made ours).
        others = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name LIMIT 4")]
        if others:
            raise DataError(path, "", "not an agenteval run database (it holds other tables: "
                            f"{', '.join(others[:3])}{', ...' if len(others) > 3 else ''}); "
                            "nothing was written to it")
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = None
        if conn.execute("SELECT name FROM sqlite_master WHERE name = 'runs'").fetchone():
            version = conn.execute("SELECT max(version) FROM schema_version").fetchone()[0]
        if version == 1:
            for statement in V2_COLUMNS:
                conn.execute(statement)
        columns = {r[1] for r in conn.execute("PRAGMA table_info(cases)")}
        if columns and "summaries_derived" not in columns:  # (before the view that reads it)
            for statement in V3_COLUMNS:
                conn.execute(statement)
        summary_columns = {r[1] for r in conn.execute("PRAGMA table_info(metric_summaries)")}
        if summary_columns and "reason" not in summary_columns:
            for statement in V4_COLUMNS:
                conn.execute(statement)
        for statement in SCHEMA:
            conn.execute(statement)
        conn.execute("DELETE FROM schema_version")
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


__all__ = ["SCHEMA", "SCHEMA_VERSION", "migrate"]
