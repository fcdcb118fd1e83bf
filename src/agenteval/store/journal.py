"""The run journal: every finished case run, committed the moment it is known.

`<root>/.agenteval/journal.sqlite` (WAL; a busy timeout, so several processes can share it).
A run is `begun` with its header and a fingerprint of what it covers (eval-set files, case
selection, config, repeats); each (case, run) result is `append`ed in its own transaction as it
finishes. One process owns a run (`claim`: an OS lock held for the run's life, see
`agenteval.store.claim`); `begin` claims it. Once the run's documents are recorded in the run
history, `forget` removes it from the journal, which thus holds only unfinished runs. After a
crash (`kill -9` included) the journal still holds the run with what it finished; a run nobody
owns is reported as `interrupted`, and `agenteval eval ... --resume RUN` runs only what is
missing.

Results are stored as compact JSON (one row per case run), so a journal row can be read back
into exactly the result the run would have written.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from agenteval.errors import DataError
from agenteval.schema import EvalCaseResult, RunSpec
from agenteval.store.claim import Claim, claim, lock_path, owner
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
    """Whether the process that began a run is alive (for runs journaled without a lock)."""
    if pid is None or host != os.uname().nodename:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


class RunOwned(DataError):
    """The run is owned by another live process (see `Journal.claim`)."""


@dataclass(frozen=True)
class JournalRun:
    """A journaled run, which is not recorded in the run history yet: `status` is `running` (a
    live process owns it) or `interrupted` (nobody does: resumable); `done` case runs of
    `total`, `errors` of them ended in an error."""

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
    threads and processes). The runs this object claimed stay owned by this process until
    `release`d (or the process ends)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.path = journal_path(root)
        self._claims: dict[str, Claim] = {}

    def claim(self, run_id: str) -> None:
        """Makes this process the owner of run `run_id` (again a no-op when it already is);
        `RunOwned` when another live process owns it. A killed owner owns nothing."""
        if run_id in self._claims:
            return
        held = claim(lock_path(self.root, run_id))
        if held is None:
            who = owner(lock_path(self.root, run_id)) or "another process"
            raise RunOwned(self.path, "", f"run {run_id} is owned by a live process ({who}): one "
                           "process runs a run at a time; wait for it to end, or see `agenteval runs`")
        self._claims[run_id] = held

    def owned_here(self, run_id: str) -> bool:
        return run_id in self._claims

    def release(self, run_id: str) -> None:
        """Gives up this process's ownership of the run (an unfinished one becomes
        `interrupted`, and resumable); its lock file goes when the journal no longer holds it."""
        held = self._claims.pop(run_id, None)
        if held is not None:
            held.release(remove=not self._holds(run_id))

    def close(self) -> None:
        """Releases every run this object owns."""
        for run_id in list(self._claims):
            self.release(run_id)

    def _holds(self, run_id: str) -> bool:
        with self._connect(create=False) as conn:
            return conn is not None and conn.execute(
                "SELECT 1 FROM journal_runs WHERE run_id = ?", (run_id,)).fetchone() is not None

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
            if not tables:  # a new journal: pages of forgotten runs can be given back at once
                conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
                conn.execute("VACUUM")  # (the file exists already, in WAL mode: the flag needs this)
            for statement in _SCHEMA:
                conn.execute(statement)

    def begin(self, spec: RunSpec, fingerprint: str, total: int) -> None:
        """Records a run as started by this process, which claims it (`RunOwned` when another
        owns it); a resumed run keeps its finished cases."""
        self.claim(spec.run_id)
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
        self.append_all(run_id, [result], eval_set_id)

    def append_all(self, run_id: str, results: Iterable[EvalCaseResult],
                   eval_set_id: str | None = None) -> None:
        """Commits finished case runs in one transaction (each under `eval_set_id`, else its own)."""
        rows = [(run_id, eval_set_id or r.eval_set_id, r.eval_id, r.run_index, int(r.final_eval_status),
                 int(bool(r.error_message or r.metric_errors)), r.model_dump_json(exclude_none=False))
                for r in results]
        with self._connect(create=True) as conn:
            assert conn is not None
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany("INSERT OR REPLACE INTO journal_cases VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
                conn.execute("UPDATE journal_runs SET updated = ? WHERE run_id = ?", (time.time(), run_id))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def fingerprint(self, run_id: str) -> str | None:
        """The fingerprint the run was begun with (None: the journal does not hold it)."""
        with self._connect(create=False) as conn:
            row = conn.execute("SELECT fingerprint FROM journal_runs WHERE run_id = ?",
                               (run_id,)).fetchone() if conn else None
        return None if row is None else str(row[0])

    def forget(self, run_id: str) -> None:
        """Removes a run from the journal (its results are in the run history now): the journal
        holds only unfinished runs, and the space they took is given back. The run's ownership
        by this process, if any, ends."""
        with self._connect(create=False) as conn:
            if conn is None:
                return
            conn.execute("DELETE FROM journal_runs WHERE run_id = ?", (run_id,))
            _shrink(conn)
        if run_id in self._claims:
            self.release(run_id)

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
            lock = lock_path(self.root, run_id)
            alive = (run_id in self._claims or owner(lock) is not None) if lock.exists() \
                else _alive(pid, host)  # journaled by an agenteval that took no lock
            if status == "finished" or not alive:  # `finished`: marked by an older agenteval
                status = "interrupted"                # before its history was written
            out.append(JournalRun(run_id, started, updated, status, done, errors, total, fingerprint))
        return out

    def get(self, run_id: str) -> JournalRun:
        """The journaled run `run_id` (or a unique prefix of it, or `latest`: the newest);
        DataError when unknown."""
        runs = self.runs()
        if run_id == "latest":
            runs.sort(key=lambda r: (r.started, r.run_id), reverse=True)
            found = runs[:1]
        else:
            found = [r for r in runs if r.run_id == run_id] or \
                [r for r in runs if r.run_id.startswith(run_id)]
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


def _shrink(conn: sqlite3.Connection) -> None:
    """Gives the pages of forgotten runs back to the file system: at once in a journal made
    with incremental vacuum; an older journal is rebuilt that way once it holds no run (cheap
    then). Best effort: a busy journal is shrunk another time."""
    try:
        if conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2:
            conn.executescript("PRAGMA incremental_vacuum")  # stepped to the end: every free page
        elif conn.execute("SELECT count(*) FROM journal_runs").fetchone()[0] == 0:
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
            conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.OperationalError:
        pass


__all__ = ["CaseKey", "Journal", "JournalRun", "RunOwned", "journal_path"]
