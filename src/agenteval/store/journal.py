"""The run journal: every finished case run, committed the moment it is known.

`<root>/.agenteval/journal.sqlite` (WAL; a busy timeout, so several processes can share it).
A run is `begun` with its header and a fingerprint of what it covers (eval-set files, case
selection, config, repeats); each (case, run) result is `append`ed in its own transaction as it
finishes; `finish` marks the run done. After a crash (`kill -9` included) the journal still
holds the run as `running` with what it finished; a run whose process is gone is reported as
`interrupted`, and `agenteval eval ... --resume RUN` runs only what is missing.

Results are stored as compact JSON (one row per case run), so a journal row can be read back
into exactly the result the run would have written.
"""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from agenteval.errors import DataError
from agenteval.schema import EvalCaseResult, RunSpec
from agenteval.store.sqlite import connect

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS journal_runs (
        run_id TEXT PRIMARY KEY, started REAL NOT NULL, updated REAL NOT NULL,
        status TEXT NOT NULL, pid INTEGER, host TEXT, fingerprint TEXT NOT NULL,
        total INTEGER NOT NULL, spec_json TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS journal_cases (
        run_id TEXT NOT NULL REFERENCES journal_runs (run_id) ON DELETE CASCADE,
        eval_set_id TEXT NOT NULL, eval_id TEXT NOT NULL, run_index INTEGER NOT NULL,
        status INTEGER NOT NULL, error INTEGER NOT NULL, result_json TEXT NOT NULL,
        PRIMARY KEY (run_id, eval_set_id, eval_id, run_index)) WITHOUT ROWID""",
]

CaseKey = tuple[str, str, int]  # (eval set id, eval id, run index)


def journal_path(root: str | Path) -> Path:
    return Path(root) / ".agenteval" / "journal.sqlite"


def _alive(pid: int | None, host: str | None) -> bool:
    if pid is None or host != os.uname().nodename:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


@dataclass(frozen=True)
class JournalRun:
    """A journaled run: `status` is `running`, `finished` or `interrupted` (its process is gone
    before it finished); `done` case runs of `total`, `errors` of them ended in an error."""

    run_id: str
    started: float
    updated: float
    status: str
    done: int
    errors: int
    total: int
    fingerprint: str


class Journal:
    """The journal of one store root. Every call opens its own connection (safe across
    threads and processes)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.path = journal_path(root)

    def _connect(self, create: bool) -> AbstractContextManager[sqlite3.Connection | None]:
        return connect(self.path, create, self._prepare, "the run journal")

    @staticmethod
    def _prepare(conn: sqlite3.Connection) -> None:
        """WAL mode and the tables, changed only when needed: with several processes sharing the
        journal, a write at every connection is a lock taken for nothing."""
        conn.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at each checkpoint, never corrupt
        conn.execute("PRAGMA foreign_keys=ON")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"journal_runs", "journal_cases"} <= tables:
            for statement in _SCHEMA:
                conn.execute(statement)

    def begin(self, spec: RunSpec, fingerprint: str, total: int) -> None:
        """Records a run as started by this process (a resumed run keeps its finished cases)."""
        now = time.time()
        with self._connect(create=True) as conn:
            assert conn is not None
            conn.execute(
                "INSERT INTO journal_runs VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?) "
                "ON CONFLICT (run_id) DO UPDATE SET status = 'running', updated = excluded.updated, "
                "pid = excluded.pid, host = excluded.host, total = excluded.total",
                (spec.run_id, spec.started or now, now, os.getpid(), os.uname().nodename, fingerprint,
                 total, spec.model_dump_json()))

    def append(self, run_id: str, eval_set_id: str, result: EvalCaseResult) -> None:
        """Commits one finished case run (replacing an earlier attempt at the same one)."""
        row = (run_id, eval_set_id, result.eval_id, result.run_index, int(result.final_eval_status),
               int(bool(result.error_message or result.metric_errors)),
               result.model_dump_json(exclude_none=False))
        with self._connect(create=True) as conn:
            assert conn is not None
            conn.execute("INSERT OR REPLACE INTO journal_cases VALUES (?, ?, ?, ?, ?, ?, ?)", row)
            conn.execute("UPDATE journal_runs SET updated = ? WHERE run_id = ?", (time.time(), run_id))

    def finish(self, run_id: str) -> None:
        with self._connect(create=True) as conn:
            assert conn is not None
            conn.execute("UPDATE journal_runs SET status = 'finished', updated = ? WHERE run_id = ?",
                         (time.time(), run_id))

    def runs(self) -> list[JournalRun]:
        """Journaled runs, newest first."""
        with self._connect(create=False) as conn:
            if conn is None:
                return []
            rows = conn.execute(
                "SELECT r.run_id, r.started, r.updated, r.status, r.pid, r.host, r.total, r.fingerprint, "
                "count(c.eval_id), coalesce(sum(c.error), 0) FROM journal_runs r LEFT JOIN journal_cases c "
                "ON c.run_id = r.run_id GROUP BY r.run_id ORDER BY r.started DESC").fetchall()
        out = []
        for run_id, started, updated, status, pid, host, total, fingerprint, done, errors in rows:
            if status == "running" and not _alive(pid, host):
                status = "interrupted"
            out.append(JournalRun(run_id, started, updated, status, done, errors, total, fingerprint))
        return out

    def get(self, run_id: str) -> JournalRun:
        """The journaled run `run_id` (or a unique prefix of it); DataError when unknown."""
        found = [r for r in self.runs() if r.run_id == run_id] or \
            [r for r in self.runs() if r.run_id.startswith(run_id)]
        if len(found) != 1:
            what = "no journaled run" if not found else "more than one journaled run"
            raise DataError(self.path, "", f"{what} {run_id!r}")
        return found[0]

    def spec(self, run_id: str) -> RunSpec:
        with self._connect(create=False) as conn:
            row = conn.execute("SELECT spec_json FROM journal_runs WHERE run_id = ?",
                               (run_id,)).fetchone() if conn else None
        if row is None:
            raise DataError(self.path, "", f"no journaled run {run_id!r}")
        return RunSpec.model_validate_json(row[0])

    def results(self, run_id: str) -> dict[CaseKey, EvalCaseResult]:
        """The finished case runs of a run, by (eval set id, eval id, run index)."""
        with self._connect(create=False) as conn:
            rows = conn.execute("SELECT eval_set_id, eval_id, run_index, result_json FROM journal_cases "
                                "WHERE run_id = ?", (run_id,)).fetchall() if conn else []
        return {(s, e, i): EvalCaseResult.model_validate_json(j) for s, e, i, j in rows}


__all__ = ["CaseKey", "Journal", "JournalRun", "journal_path"]
