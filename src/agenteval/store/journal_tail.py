"""A journaled run's tail: the case runs its rows file holds that the journal's SQLite does not
name yet.

The run's writer (`store.journal_writer`) writes each batch's frames to the run's rows file
within `FLUSH_SECONDS` of their case runs finishing, but commits their keys to SQLite only once
`COMMIT_ROWS` wait (and at every `flush` and `close`): a commit was ≈ 0.3 M instructions and a
dozen WAL pages, most of what a small batch cost (bench/README.md, sessions 38 and 39). So a
finished case run is durable once its frame is in the file, and the frames after the last one
SQLite names are read from the file: each frame carries its key and a CRC-32 of itself, and
frames follow one another, so the tail is read frame by frame from the end of the last
committed row's frame to the first frame cut short (a kill mid-write) or damaged
(`journal_rows.scan`). A case's summary frame in the tail is passed over: its verdict
(`store.kept`) is not in the file, and a resume summarises the case again from its runs.

Readers of the journal that count or list finished case runs (`Journal.finished_keys`,
`Journal.runs`) add the tail, read-only (another process may own the run and be appending);
a process that claims a run (`Journal.claim`: a resume) first commits the tail to SQLite and
cuts off what follows its last whole frame (`recover`), so that everything it reads, and what
its writer appends after, is as if every batch had been committed.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from agenteval.errors import DataError
from agenteval.store.journal_rows import file_size, scan
from agenteval.store.journal_writer import INSERT, STALE, SUMMARY

CaseKey = tuple[str, str, int]  # (eval set id, eval id, run index)
Tail = dict[CaseKey, tuple[int, int, int, int]]
"""The tail's case runs, by key: status, whether it ended in an error (as `journal_cases` holds
them), its frame's offset and size; a case run whose frame is there twice (run again) is its
last frame's."""


def committed_end(conn: sqlite3.Connection, run_id: str) -> int:
    """Where in the run's rows file the frame of its last committed case run ends (0: none
    committed). A batch's frames are written before the commit that names them, so every frame
    before it was committed with its batch or an earlier one, but a batch's summaries, which
    follow its rows (`scan` finds them and `tail` passes them over)."""
    got = conn.execute("SELECT max(row_at + row_size) FROM journal_cases WHERE +run_id = ?",
                       (run_id,)).fetchone()[0]
    return int(got or 0)


def tail(conn: sqlite3.Connection, rows: Path, run_id: str, end: int | None = None) -> Tail:
    """The run's case runs in its rows file `rows` past its last committed one (`committed_end`,
    or `end` when known) and not named by SQLite; empty (and the file not read) when the file
    ends there."""
    if end is None:
        end = committed_end(conn, run_id)
    if file_size(rows) <= end:
        return {}
    return _read(rows, end)[0]


def _read(rows: Path, end: int) -> tuple[Tail, int]:
    frames, whole = scan(rows, end)
    found: Tail = {}
    for key, row, at, size in frames:
        if key[2] == SUMMARY:
            continue
        try:
            result = json.loads(bytes(row))
            status, error = int(result["final_eval_status"]), \
                int(bool(result.get("error_message") or result.get("metric_errors")))
        except (ValueError, KeyError, TypeError):
            raise DataError(rows, "", f"the run journal's row of case {key[1]!r} (run {key[2]}) of eval set "
                            f"{key[0]!r} at byte {at} is not a case result; run the eval again without "
                            "--resume") from None
        found[key] = (status, error, at, size)
    return found, whole


def counted(conn: sqlite3.Connection, run_id: str, found: Tail) -> tuple[int, int]:
    """How many more case runs, and errors, the run's tail `found` makes than SQLite counts (a
    case run of the tail may be one SQLite holds, run again)."""
    done = errors = 0
    for key, (_, error, _, _) in found.items():
        held = conn.execute("SELECT error FROM journal_cases WHERE run_id = ? AND eval_set_id = ? "
                            "AND eval_id = ? AND run_index = ?", (run_id, *key)).fetchone()
        done, errors = done + (held is None), errors + error - (held[0] if held else 0)
    return done, errors


def recover(conn: sqlite3.Connection, rows: Path, run_id: str) -> None:
    """Commits the run's tail (`tail`) to SQLite as its writer would have, a verdict its rows
    make stale removed as the writer removes it; then cuts the rows file after the tail's last
    whole frame (a frame a kill cut short: nothing names it, and the run's next frames are
    appended after it). For the process that owns the run only, before it appends to it."""
    if conn.execute("SELECT 1 FROM journal_runs WHERE run_id = ?", (run_id,)).fetchone() is None:
        return  # (an orphan's file: see `Journal._remove_orphans`)
    end = committed_end(conn, run_id)
    size = file_size(rows)
    if size <= end:
        return
    found, whole = _read(rows, end)
    if found:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(STALE, [(run_id, s, e) for s, e in {k[:2] for k in found}])
            conn.executemany(INSERT, [(run_id, *key, *value) for key, value in found.items()])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    if whole < size:
        try:
            os.truncate(rows, whole)
        except OSError as e:
            raise DataError(rows, "", f"cannot write the run journal's rows: {e.strerror or e}") from None


__all__ = ["Tail", "committed_end", "counted", "recover", "tail"]
