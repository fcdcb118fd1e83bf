"""The journal's runs as `agenteval runs` and `--resume` see them: listed with their case runs
counted (`listed`), and found by a reference (`find`: an id, a unique prefix of one, or `latest`).

A run is `running` while a live process owns it (its lock, `store.claim`; a run journaled by an
agenteval that took no lock: its process is alive), else `interrupted`; its counts add the case
runs of its rows file that SQLite does not name yet (`store.journal_tail`)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path

from agenteval.errors import DataError
from agenteval.store.claim import lock_path, owner
from agenteval.store.journal_rows import rows_path
from agenteval.store.journal_tail import counted, tail


class UnjournaledRun(DataError):
    """A run reference the journal does not know."""


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


def listed(conn: sqlite3.Connection, root: Path, claimed: Container[str]) -> list[JournalRun]:
    """The runs of the journal `conn` reads (of store root `root`), newest first; those in
    `claimed` are owned by this process."""
    rows = conn.execute(
        "SELECT r.run_id, r.started, r.updated, r.status, r.pid, r.host, r.total, r.fingerprint, "
        "count(c.eval_id), coalesce(sum(c.error), 0), coalesce(max(c.row_at + c.row_size), 0) "
        "FROM journal_runs r LEFT JOIN journal_cases c "
        "ON c.run_id = r.run_id GROUP BY r.run_id ORDER BY r.started DESC").fetchall()
    tails = [counted(conn, r[0], tail(conn, rows_path(root, r[0]), r[0], r[10])) for r in rows]
    out = []
    for (run_id, started, updated, status, pid, host, total, fingerprint, done, errors, _), more in \
            zip(rows, tails, strict=True):
        done, errors = done + more[0], errors + more[1]
        lock = lock_path(root, run_id)
        alive = (run_id in claimed or owner(lock) is not None) if lock.exists() \
            else _alive(pid, host)  # journaled by an agenteval that took no lock
        if status == "finished" or not alive:  # `finished`: marked by an older agenteval
            status = "interrupted"                # before its history was written
        out.append(JournalRun(run_id, started, updated, status, done, errors, total, fingerprint))
    return out


def find(path: Path, started: dict[str, float], run_id: str) -> str:
    """The id among `started` (run id: start time) that `run_id` names: itself, a unique prefix
    of it, or `latest` (the newest); UnjournaledRun when none, a DataError when ambiguous (both
    naming the journal `path`)."""
    if run_id == "latest":
        found = sorted(started, key=lambda r: (started[r], r), reverse=True)[:1]
    else:
        found = [r for r in started if r == run_id] or \
            [r for r in started if run_id and r.startswith(run_id)]  # ('': no run, not all)
    if not found:
        raise UnjournaledRun(path, "", f"no journaled run {run_id!r}")
    if len(found) > 1:
        raise DataError(path, "", f"journaled run {run_id!r} is ambiguous: it matches "
                        + ", ".join(sorted(found, reverse=True)))
    return found[0]
