"""The run journal: every finished case run, durable within half a second of being known.

`<root>/.agenteval/journal.sqlite` (WAL; a busy timeout, so several processes can share it).
A run is `begun` with its header and a fingerprint of what it covers (eval-set files, case
selection, config, repeats); each (case, run) result is `append`ed as it finishes. One process
owns a run (`claim`: an OS lock held for the run's life, see `agenteval.store.claim`); `begin`
claims it.

Beginning and appending do not write to the database on the caller's thread (the event loop's, in
a run; `begin` only reads an existing journal's schema): the run's row and each result are queued,
and one writer thread per run, holding one connection (`store.journal_writer`), writes what is
queued to the run's rows file as soon as `FLUSH_CASES` results wait or the oldest has waited
`FLUSH_SECONDS`, and commits their keys to SQLite every `COMMIT_ROWS` results. So a finished case
run is durable within `FLUSH_SECONDS` (0.5 s) of `append`, and a kill (`kill -9` included) loses
at most the case runs of that window, which `--resume` runs again: the rows written and not
committed yet are read from the rows file (`store.journal_tail`: by `finished_keys` and `runs`,
and committed by the next process to claim the run). A write is durable against the process
dying (the rows file and the WAL are in the operating system's hands), not against the machine
losing power before the next checkpoint (`synchronous=NORMAL`). Reading a run through the same
`Journal`, releasing, forgetting or closing it first commits whatever is queued; a write that
failed (a full disk) is raised by the next `append` or by that commit.

Pruning: once the run's documents are recorded in the run history, `forget` removes it from the
journal, which thus holds only unfinished runs, and gives the space back (the journal's only
run, the usual case, has its rows dropped in one statement and the file is rebuilt, a few pages;
its checkpoint, the syncs, is made beside: `forget`). A run that is never resumed is pruned too:
beginning a run removes interrupted runs (nobody owns them) not updated for
`KEEP_INTERRUPTED_DAYS` (30) days. After a crash the journal still holds the run with what it
committed; a run nobody owns is reported as `interrupted`, and `agenteval eval ... --resume RUN`
runs only what is missing.

Results are stored as the JSON a result document holds, placed in its list (one row per case
run; serialised and placed once for the journal and the document, `store.output.placed_json`),
so a journal row can be read back into exactly the result the run would have written, or copied
into the document as it is. The
rows and their digests (`store.digest`) are in a file per run beside the database
(`store.journal_rows`: written before the batch that names them commits, removed beside once
the run is forgotten: `forget`);
the database keeps each case run's key, status and place in that file. Beside each case told to
its document is its verdict (`store.kept`: the case summary as the document holds it, the
history's rows, what the totals count, and the case's place in its document). A resumed run
reads kept rows and verdicts in the order they were written, one streamed `SELECT` each
(`store.journal_reader`); a case whose runs were all kept is copied (rows and summary) and
counted from its verdict, a kept case run without one is read as its digest, so no kept row is
parsed (a case run is digested only when its case is not told soon after it:
`store.journal_writer`). The history records a journaled run's cases from their verdicts: each
verdict's history rows are committed beside it (`journal_metrics`, `journal_summaries`), and the
history copies them in SQLite (`copyable`, `store.verdict_copy`); verdicts of older journals hold
them in their record (`case_rows`).
`finished_keys` reads only which case runs finished (what `--resume` needs until the document is
written), `result` one of them whole. A journal made before digests or verdicts gains the column
or table when this agenteval first opens it (its old rows are read whole, its cases summarised
again); an older agenteval cannot append to it then (its inserts name no columns).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from operator import itemgetter
from pathlib import Path
from typing import Any

from agenteval.errors import DataError
from agenteval.schema import EvalCaseResult, RunSpec
from agenteval.store.case_rows import CaseRows
from agenteval.store.claim import Claim, claim, lock_path, owner
from agenteval.store.journal_file import (
    ADDED,
    SCHEMA,
    TABLES,
    TOLD_INDEX,
    VERDICTS_LAYOUT,
    checkpoint_and_close,
    delete_run,
    layout,
    shrink,
)
from agenteval.store.journal_reader import JournalReader
from agenteval.store.journal_rows import file_size as rows_size
from agenteval.store.journal_rows import remove as remove_rows
from agenteval.store.journal_rows import rows_dir, rows_path
from agenteval.store.journal_runs import JournalRun, UnjournaledRun, find, listed
from agenteval.store.journal_tail import recover, tail
from agenteval.store.journal_writer import FLUSH_CASES, FLUSH_SECONDS, Row, Writer
from agenteval.store.kept import BESIDE, read_record, verdict_row
from agenteval.store.output import placed_json, safe_name
from agenteval.store.sqlite import check_readable, connect, use_wal, wal_holder
from agenteval.store.verdict_copy import beside
from agenteval.verdicts.outcome import CaseOutcome

KEEP_INTERRUPTED_DAYS = 30
"""An interrupted run not updated for this long is removed when a run begins."""
ORPHAN_SECONDS = 3600
"""A rows file whose run the journal does not hold is removed once unchanged this long."""


CaseKey = tuple[str, str, int]  # (eval set id, eval id, run index)

_removing: dict[Path, threading.Thread] = {}
"""The rows files of runs forgotten by this process being removed beside (`Journal.forget`), by
path: a writer of the same run waits for its file's removal before it appends to it again."""


def journal_path(root: str | Path) -> Path:
    return Path(root) / ".agenteval" / "journal.sqlite"


class RunOwned(DataError):
    """The run is owned by another live process (see `Journal.claim`)."""


class Journal:
    """The journal of one store root. Appends go through one writer thread and connection per
    run (see the module docstring); every other call opens its own connection (safe across
    threads and processes). The runs this object claimed stay owned by this process until
    `release`d (or the process ends)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.path = journal_path(root)
        self._claims: dict[str, Claim] = {}
        self._writers: dict[str, Writer] = {}
        self._lock = threading.Lock()  # guards `_writers`
        # The writer of the run appended to last (a run appends thousands of times in a row),
        # read without the lock: replaced, and cleared when its writer stops, under it.
        self._last: tuple[str, Writer] | None = None
        self._wal_held: sqlite3.Connection | None = None  # `hold_wal`
        self.begun: str | None = None  # the run this object `begin`s last (a Ctrl-C names it)

    def _writer(self, run_id: str) -> Writer:
        last = self._last
        if last is not None and last[0] == run_id:
            return last[1]
        with self._lock:
            writer = self._writers.get(run_id)
            if writer is None:
                rows = rows_path(self.root, run_id)
                removing = _removing.pop(rows.absolute(), None)
                if removing is not None:  # (the run forgotten here before: its old file goes first)
                    removing.join()
                writer = self._writers[run_id] = Writer(self.path, self._prepare, run_id, rows)
            self._last = (run_id, writer)
            return writer

    def flush(self, run_id: str | None = None) -> None:
        """Commits what is queued for run `run_id` (every run: None) before returning; raises
        a write that failed (a DataError naming the journal)."""
        with self._lock:
            writers = [w for r, w in self._writers.items() if run_id is None or r == run_id]
        for writer in writers:
            writer.flush()

    def _stop_writer(self, run_id: str) -> None:
        """Commits what is queued for the run and ends its writer; a write that fails here is
        dropped (the run is being released or forgotten: what was lost is run again)."""
        with self._lock:
            writer = self._writers.pop(run_id, None)
            if self._last is not None and self._last[0] == run_id:
                self._last = None
        if writer is not None:
            with contextlib.suppress(Exception):  # see the docstring
                writer.close()

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
        try:  # what its last owner wrote to its rows file and did not commit (a fresh run: a stat)
            rows = rows_path(self.root, run_id)
            if rows_size(rows) and self.path.is_file():
                with self._connect(create=False) as conn:
                    if conn is not None:
                        # No checkpoint at the tail's commit: a killed run's WAL holds its pages
                        # (14 MB at 10,000 cases), which SQLite's automatic one (past 1,000 pages)
                        # copied into the file, with two fsyncs, before a resume's first case
                        # (0.1 s of wall); `forget` merges what is left once they are deleted.
                        conn.execute("PRAGMA wal_autocheckpoint=0")
                        recover(conn, rows, run_id)
        except BaseException:
            held.release(remove=False)
            raise
        self._claims[run_id] = held

    def owned_here(self, run_id: str) -> bool:
        return run_id in self._claims

    def release(self, run_id: str) -> None:
        """Gives up this process's ownership of the run (an unfinished one becomes
        `interrupted`, and resumable); its lock file goes when the journal no longer holds it."""
        self._stop_writer(run_id)
        held = self._claims.pop(run_id, None)
        if held is not None:
            held.release(remove=not self._holds(run_id))

    def close(self) -> None:
        """Releases every run this object owns (committing what is queued first), and the
        connection `hold_wal` keeps."""
        for run_id in list(self._writers):
            self._stop_writer(run_id)
        for run_id in list(self._claims):
            self.release(run_id)
        self._let_wal_go()

    def hold_wal(self) -> None:
        """Keeps a connection to the journal open until `forget` or `close` (nothing when there
        is no journal, or one is kept already), so that no other connection's close merges the
        WAL into the file: SQLite's last connection to close does. A killed run leaves its WAL
        unmerged (23 MB at 10,000 trivial cases), and a resume's first look-up then copied it
        into the file, with its syncs, before the first case ran (0.1-0.2 s of wall,
        bench/README.md, session 28) — pages of the run's rows, which `forget` deletes once the
        run is recorded. Kept, they are never copied: `forget` deletes the rows first and its
        checkpoint copies only the pages the rebuilt file still has."""
        if self._wal_held is None:
            self._wal_held = wal_holder(self.path)

    def _let_wal_go(self) -> None:
        conn, self._wal_held = self._wal_held, None
        if conn is not None:
            conn.close()

    def _holds(self, run_id: str) -> bool:
        self.flush(run_id)
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
        # Freed pages are not overwritten with zeros (some SQLite builds do so by default: deleting
        # a run's rows wrote them all once more); forgotten runs leave the file by truncation
        # (`journal_file.shrink`), not by overwriting.
        conn.execute("PRAGMA secure_delete=OFF")
        tables = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type IN ('table', 'index')"))
        if not set(tables) >= TABLES:  # new, or made by an agenteval before verdicts
            if not tables:  # a new journal: pages of forgotten runs can be given back at once
                layout(conn)
            for statement in SCHEMA:
                conn.execute(statement)
        if "journal_verdicts" in tables and VERDICTS_LAYOUT not in tables["journal_verdicts"]:
            # Verdicts of another layout: they only spare a resume work, so they go (their cases'
            # runs are read one by one, and summarised again).
            with contextlib.suppress(sqlite3.OperationalError):  # another process did it first
                conn.execute("DROP TABLE journal_verdicts")
                conn.execute(SCHEMA[3])
        for table, column, kind in ADDED:
            if table in tables and f" {column} " not in tables[table]:  # made before
                with contextlib.suppress(sqlite3.OperationalError):  # another process added it first
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        if "journal_verdicts_told" not in tables:
            conn.execute(TOLD_INDEX)

    def begin(self, spec: RunSpec, fingerprint: str, total: int) -> None:
        """Records a run as started by this process, which claims it (`RunOwned` when another
        owns it, raised here); a resumed run keeps its finished cases. Interrupted runs not
        updated for `KEEP_INTERRUPTED_DAYS` are pruned. Returns at once: the run's writer thread
        writes its row first (the event loop started its cases 70-120 ms sooner, a new journal's
        layout being a dozen fdatasyncs: bench/README.md, session 21); a journal that cannot be
        used is raised here when its file does not read as a journal (checked without writing, so
        before any case runs), and by the run's next `append` or `flush` when it fails later."""
        self.claim(spec.run_id)
        check_readable(self.path, "the run journal")
        self.begun = spec.run_id
        now = time.time()
        row = (spec.run_id, spec.started or now, now, os.getpid(), os.uname().nodename, fingerprint, total,
               spec.model_dump_json())
        self._writer(spec.run_id).do(lambda conn: self._begun(conn, now, row))

    def _begun(self, conn: sqlite3.Connection, now: float, row: tuple[Any, ...]) -> None:
        """`begin` on the run's writer thread, with its connection."""
        self._prune(conn, now - KEEP_INTERRUPTED_DAYS * 86400)
        conn.execute("INSERT INTO journal_runs VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?) "
                     "ON CONFLICT (run_id) DO UPDATE SET status = 'running', updated = excluded.updated, "
                     "pid = excluded.pid, host = excluded.host, total = excluded.total", row)

    def append(self, run_id: str, eval_set_id: str, result: EvalCaseResult) -> None:
        """Queues one finished case run (replacing an earlier attempt at the same one) for the
        run's writer, which commits it within `FLUSH_SECONDS`; raises an earlier write of the
        run that failed. The run must have been begun (here or by another process)."""
        self._writer(run_id).put((_row(run_id, result, eval_set_id),))

    def append_verdict(self, run_id: str, outcome: CaseOutcome, position: int) -> None:
        """Queues the verdict of a told case, the `position`th of its eval set's document
        (`store.kept.verdict_row`: what a resume that keeps all its runs reads instead of the
        runs, and the history's rows of it), committed with the run's next batch."""
        self._writer(run_id).put((), [verdict_row(run_id, outcome, position)])

    def case_rows(self, run_id: str, eval_set_id: str, cases: int) -> Iterator[CaseRows] | None:
        """The history's rows of the run's `cases` cases of eval set `eval_set_id`, in document
        order, read from their verdicts (`store.kept`) one at a time; None unless the journal
        holds the verdict of every place 0 to `cases` - 1 in a version-1 record (made by an
        agenteval before session 14; this one's are copied: `copyable`)."""
        if not self._verdicts_held(run_id, eval_set_id, cases, ("[1,",), "1"):
            return None
        return self._case_rows(run_id, eval_set_id)

    def copyable(self, run_id: str, eval_set_id: str, cases: int) -> bool:
        """Whether the journal holds the verdict of every place 0 to `cases` - 1 of the run's
        eval set `eval_set_id` with its rows beside it (`store.kept.BESIDE`: versions 2 and 3),
        which the run history then copies in SQLite (`RunStore.record_copied`)."""
        return self._verdicts_held(run_id, eval_set_id, cases, tuple(f"[{v}," for v in BESIDE),
                                   "told IS NOT NULL")

    def _verdicts_held(self, run_id: str, eval_set_id: str, cases: int, versions: tuple[str, ...],
                       where: str) -> bool:
        self.flush(run_id)
        with self._connect(create=False) as conn:
            if conn is None:
                return False
            try:
                held = conn.execute(
                    "SELECT count(*), min(position), max(position), count(DISTINCT position), "
                    f"sum(substr(record, 1, 3) NOT IN ({', '.join('?' * len(versions))}) OR NOT ({where})) "
                    "FROM journal_verdicts WHERE run_id = ? AND eval_set_id = ?",
                    (*versions, run_id, eval_set_id)).fetchone()
            except sqlite3.OperationalError:  # (journal_verdicts of another layout)
                return False
        return held[:4] == (cases, 0 if cases else None, cases - 1 if cases else None, cases) and not held[4]

    def _case_rows(self, run_id: str, eval_set_id: str) -> Iterator[CaseRows]:
        with self._connect(create=False) as conn:
            assert conn is not None
            # In document order, each looked up by its rowid: sorting the verdicts themselves held
            # all their records in SQLite's sorter at once (10 MB at 10,000 cases).
            order = [r for (r,) in conn.execute("SELECT rowid FROM journal_verdicts WHERE run_id = ? AND "
                                                "eval_set_id = ? ORDER BY position", (run_id, eval_set_id))]
            columns = "eval_id, status, runs, seconds, tokens, record FROM journal_verdicts"
            # Told in document order, the usual case: read in one statement, in the order written
            # (one `SELECT` a verdict was a fifth of recording the run).
            found: Iterable[tuple[Any, ...]] = \
                conn.execute(f"SELECT {columns} WHERE +run_id = ? AND eval_set_id = ? ORDER BY rowid",
                             (run_id, eval_set_id)) if order == sorted(order) else \
                (conn.execute(f"SELECT {columns} WHERE rowid = ?", (rowid,)).fetchone() for rowid in order)
            for row in found:
                rows = read_record(*row)
                if rows is None:  # (checked before: cannot happen)
                    raise DataError(self.path, "journal_verdicts", f"unreadable verdict of {row[0]!r}")
                yield rows

    def append_all(self, run_id: str, results: Iterable[EvalCaseResult],
                   eval_set_id: str | None = None) -> None:
        """Commits finished case runs (each under `eval_set_id`, else its own) before returning,
        in one transaction with whatever the run had queued."""
        self._writer(run_id).put(_rows(run_id, results, eval_set_id))
        self.flush(run_id)

    def fingerprint(self, run_id: str) -> str | None:
        """The fingerprint the run was begun with (None: the journal does not hold it)."""
        self.flush(run_id)
        with self._connect(create=False) as conn:
            row = conn.execute("SELECT fingerprint FROM journal_runs WHERE run_id = ?",
                               (run_id,)).fetchone() if conn else None
        return None if row is None else str(row[0])

    def forget(self, run_id: str) -> None:
        """Removes a run from the journal (its results are in the run history now): the journal
        holds only unfinished runs, and the space they took is given back (`journal_file.shrink`). The run's
        ownership by this process, if any, ends (its lock file goes when this returns). The
        journal's checkpoint (two fsyncs: 40-160 ms of wall at 5,000 cases, most of forgetting a
        run) is made on a thread beside, as the history's is, and so is the removal of the run's
        rows file (unlinking 70 MB at 5,000 cases: 10-70 ms) on another (`store.verdict_copy.beside`:
        `settle` and the process's exit wait for them, so does a writer of the same run begun
        again in this process; a kill first leaves the checkpoint to the journal's next connection,
        as a kill during a run does, and the file to the next run's `_remove_orphans`). So the
        files are gone once `settle` returns, not when this does."""
        if not self.path.is_file():
            return self._stop_writer(run_id)
        # Opened before the run's writer closes its connection: the last connection to close
        # checkpoints the whole WAL, which copied the run's rows into the file just before they
        # were deleted (the writer checkpoints none on its own: `WAL_PAGES`).
        conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        try:
            use_wal(conn)
            self._prepare(conn)
            self._let_wal_go()  # (not the last connection: nothing merged)
            self._stop_writer(run_id)
            # No checkpoint at the delete's commit: the WAL holds the run's pages, which a
            # checkpoint then would copy into the file; once `shrink` has rebuilt the file (a few
            # pages), the checkpoint copies only the pages the file still has.
            conn.execute("PRAGMA wal_autocheckpoint=0")
            delete_run(conn, run_id)
            shrink(conn, checkpoint=False)
        except BaseException as e:
            conn.close()
            raise DataError(self.path, "", f"cannot use the run journal: {e}") from None \
                if isinstance(e, sqlite3.DatabaseError) and not isinstance(e, sqlite3.IntegrityError) else e
        beside(functools.partial(checkpoint_and_close, conn), "agenteval-forget")
        # (After the rows naming it are gone.) Removals done are dropped from `_removing`, which
        # a long-lived process (the web UI) would otherwise fill with one a run.
        for path, thread in list(_removing.items()):
            if not thread.is_alive():
                _removing.pop(path, None)
        rows = rows_path(self.root, run_id)
        _removing[rows.absolute()] = beside(functools.partial(remove_rows, rows), "agenteval-forget-rows")
        if run_id in self._claims:
            self.release(run_id)

    def runs(self) -> list[JournalRun]:
        """Journaled runs, newest first (`store.journal_runs.listed`)."""
        self.flush()
        with self._connect(create=False) as conn:
            return [] if conn is None else listed(conn, self.root, self._claims)

    def run_times(self) -> dict[str, tuple[float, float]]:
        """Each journaled run's (`started`, `updated`) by id: `runs` without counting case runs
        (which reads each run's tail: 0.02-0.03 s of a killed 10,000-case run's, per call)."""
        self.flush()
        with self._connect(create=False) as conn:
            rows = conn.execute("SELECT run_id, started, updated FROM journal_runs") if conn else []
            return {r: (s, u) for r, s, u in rows}

    def get(self, run_id: str) -> JournalRun:
        """The journaled run `run_id` (or a unique prefix of it, or `latest`: the newest);
        UnjournaledRun when unknown, a DataError when ambiguous."""
        runs = {r.run_id: r for r in self.runs()}
        return runs[find(self.path, {r: run.started for r, run in runs.items()}, run_id)]

    def resolve(self, run_id: str) -> str:
        """The id of the journaled run `run_id` as `get` finds it, its case runs not counted."""
        return find(self.path, {r: t[0] for r, t in self.run_times().items()}, run_id)

    def spec(self, run_id: str) -> RunSpec:
        self.flush(run_id)
        with self._connect(create=False) as conn:
            row = conn.execute("SELECT spec_json FROM journal_runs WHERE run_id = ?",
                               (run_id,)).fetchone() if conn else None
        if row is None:
            raise DataError(self.path, "", f"no journaled run {run_id!r}")
        return RunSpec.model_validate_json(row[0])

    def results(self, run_id: str) -> dict[CaseKey, EvalCaseResult]:
        """The finished case runs of a run, by (eval set id, eval id, run index)."""
        reader = self.reader()
        try:
            found = {key: reader.result(run_id, key) for key in sorted(self.finished_keys(run_id))}
        finally:
            reader.close()
        return {key: result for key, result in found.items() if result is not None}

    def finished_keys(self, run_id: str, without_errors: bool = False) -> set[CaseKey]:
        """Which case runs of a run finished (with `without_errors`, only those that did not end
        in an agent or judge error), without reading their results. A case run whose frame
        reaches past the end of the run's rows file (`store.journal_rows`: the file was cut
        short) is not finished: it runs again."""
        self.flush(run_id)
        path = rows_path(self.root, run_id)
        size = rows_size(path)
        with self._connect(create=False) as conn:
            if conn is None:
                return set()
            rows = conn.execute("SELECT eval_set_id, eval_id, run_index FROM journal_cases WHERE run_id = ?"
                                + (" AND error = 0" if without_errors else ""), (run_id,)).fetchall()
            # (A scan of the run's small rows: the keys above come from an index alone.)
            torn = conn.execute("SELECT eval_set_id, eval_id, run_index FROM journal_cases WHERE +run_id = ? "
                                "AND row_at + row_size > ?", (run_id, size)).fetchall()
            found = tail(conn, path, run_id)  # (another process's run: its rows not committed yet)
        keys = {(s, e, i) for s, e, i in rows}.difference(torn)
        if without_errors:
            keys.difference_update(k for k, v in found.items() if v[1])
            return keys.union(k for k, v in found.items() if not v[1])
        return keys.union(found)

    def reader(self) -> JournalReader:
        """A connection for reading many results one by one (what this process queued is not
        in it unless flushed first)."""
        return JournalReader(self.path, self.root)

    def _prune(self, conn: sqlite3.Connection, before: float) -> None:
        """Removes the runs nobody owns that were last updated before `before` (epoch seconds),
        through `conn` (the writer's, as the run begins)."""
        stale = [r for (r,) in conn.execute("SELECT run_id FROM journal_runs WHERE updated < ?",
                                             (before,)).fetchall()]
        for run_id in stale:
            if run_id in self._claims:
                continue
            held = claim(lock_path(self.root, run_id))
            if held is None:  # a live process owns it after all
                continue
            try:
                delete_run(conn, run_id)
                remove_rows(rows_path(self.root, run_id))
            finally:
                held.release(remove=True)
        if stale:
            shrink(conn)
        self._remove_orphans(conn)

    def _remove_orphans(self, conn: sqlite3.Connection) -> None:
        """Removes the rows files of runs the journal no longer holds (left by a kill between
        forgetting a run and removing its file). A run is begun before its file is made, so a
        file whose run is missing and that nobody wrote to for `ORPHAN_SECONDS` is an orphan."""
        folder = rows_dir(self.root)
        if not folder.is_dir():
            return
        held = {safe_name(r) for (r,) in conn.execute("SELECT run_id FROM journal_runs")}
        now = time.time()
        for path in folder.glob("*.rows"):
            with contextlib.suppress(OSError):
                if path.stem not in held and path.stat().st_mtime < now - ORPHAN_SECONDS:
                    path.unlink()


# (Read from the result's `__dict__` in one call: see `store.case_rows`.)
_KEYED = itemgetter("eval_set_id", "eval_id", "run_index", "final_eval_status", "error_message",
                    "metric_errors")


def _row(run_id: str, result: EvalCaseResult, eval_set_id: str | None) -> Row:
    # (The result itself, not its digest: the writer's queue digests only the runs whose case is
    # not told soon after them: `store.journal_writer`.)
    set_id, eval_id, index, status, error, metric_errors = _KEYED(result.__dict__)
    return (run_id, eval_set_id or set_id, eval_id, index, int(status), int(bool(error or metric_errors)),
            placed_json(result), result)


def _rows(run_id: str, results: Iterable[EvalCaseResult], eval_set_id: str | None) -> list[Row]:
    return [_row(run_id, r, eval_set_id) for r in results]


__all__ = ["FLUSH_CASES", "FLUSH_SECONDS", "KEEP_INTERRUPTED_DAYS", "CaseKey", "Journal", "JournalReader",
           "JournalRun", "RunOwned", "UnjournaledRun", "journal_path"]
