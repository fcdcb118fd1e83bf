"""The run journal's writer: one thread and one connection per run, writing batches.

`Journal.append` queues a case run's row here (`Writer.put`), `Journal.append_verdict` a told
case's verdict row (`store.kept`), `Journal.begin` the run's own row (`Writer.do`, done first,
at once), and returns: the caller's thread
(the event loop's, in a run) never touches the database. The writer takes what is queued as a
batch once `FLUSH_CASES` rows wait or the oldest has waited `FLUSH_SECONDS`, and writes the
batch's case-run rows and case summaries to the run's rows file (`store.journal_rows`; a
summary's frame has run index `SUMMARY`), so a finished case run is durable within
`FLUSH_SECONDS` of being appended (see `store.journal`). One transaction then commits the keys
of the rows written with where their frames are, and the verdicts, once `COMMIT_ROWS` wait
and at every `flush` and `close`; until then readers find them in the rows file
(`store.journal_tail`).

A case run's frame holds its digest (`store.digest`: what a resume rebuilds a kept case run from
without parsing its row) only when its case's verdict is not queued soon after it: a case told
in the transaction that commits its runs is resumed from its verdict (`store.kept`), and the rare
sink that rebuilds such a case (`KeptCase.outcome`: the console's first cases, the JUnit and
Markdown reports) parses its rows instead. Rows are queued with their results, unsettled; a
verdict settles its case's rows (no digest), and once more than `UNSETTLED` rows wait unsettled
the oldest are settled with their digests, made then (on the caller's thread), as are the rows
still unsettled when the writer takes its batch (by the writer). Cases are told in document
order, a few case runs after they finish when runs finish out of order (`--parallelism`), so
the window covers them: at 5,000 trivial cases and parallelism 8, 150-200 case runs are
digested instead of 5,000 (20-30 µs each on the event loop). The window is small on purpose:
holding every result until its batch commits kept them alive across the cyclic collector's
passes, which promoted them and then ran five times as often (+0.7 s).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import itertools
import operator
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agenteval.errors import DataError
from agenteval.schema import EvalCaseResult
from agenteval.store.digest import digest_json
from agenteval.store.journal_rows import RowsWriter
from agenteval.store.sqlite import use_wal

FLUSH_SECONDS = 0.5
"""The longest a finished case run waits in memory before its transaction commits."""
FLUSH_CASES = 64
"""A transaction commits at once when this many case runs wait."""
UNSETTLED = 16
"""The most case runs queued with their results, waiting for their cases' verdicts (see the
module docstring)."""
COMMIT_ROWS = 256
"""The journal's SQLite commits the rows and verdicts written to the rows file once this many
wait (and at every `flush` and `close`, so that this process reads what it appended): a finished
case run is durable once its frame is in the rows file, and readers read the frames past the
last committed one there (`store.journal_tail`). A commit per batch cost ≈ 0.3 M instructions
and a dozen WAL pages, and a run's number of batches follows the clock (bench/README.md,
sessions 38 and 39). A kill leaves at most this many case runs (and a batch) to read from the
file and commit again when the run is resumed (`journal_tail.recover`)."""
STAMP_SECONDS = 1.0
"""The run's `updated` time (`journal_runs`) is set by a commit at most this often, and by every
commit that a `flush` or `close` asks for: setting it at every commit was a statement and a page
of the WAL each time, 8% of the pages a small batch writes (bench/README.md, session 38)."""
WAL_PAGES = 16384
"""The writer checkpoints the journal's WAL into its file once it holds this many pages (64 MiB
of 4 KiB pages; SQLite's default is 1,000): a run's rows are deleted once the run is recorded,
and each checkpoint before that copied them into the file for nothing. The run's forgetting
checkpoints what is left (`Journal.forget`)."""

Row = tuple[str, str, str, int, int, int, bytes, EvalCaseResult | str]
"""A case run queued: run id, eval set id, eval id, run index, status, whether it ended in an
error, the result's JSON as a document holds it, placed (`store.output.placed_json`), and the
result, replaced once settled by its digest ("": none; see the module docstring; a queued result
is not changed, as its JSON was already made). The JSON and the digest go to the run's rows
file, the rest into `journal_cases` with the frame's place."""
VerdictRow = tuple[str, str, str, int, int, int, float | None, float | None, int, int, int, int, bytes, str,
                   list[tuple[Any, ...]], list[tuple[Any, ...]]]
"""A `journal_verdicts` row: run id, eval set id, eval id, the case's place in its document,
runs, status, agent seconds and tokens, its tally (`store.kept.Tally`), the case summary's JSON as
a document holds it, placed (written to the rows file, its place in the row), its record
(`store.kept.verdict_row`); then the case's metric rows and summary rows as the history keeps
them but the run and eval ids (into `journal_metrics` and `journal_summaries`, under the
verdict's `told` number: a number the writer gives each verdict it commits, unique in its run)."""
Op = Callable[[sqlite3.Connection], None]
"""Work done with the writer's connection on its thread (`Writer.do`)."""
# Upserts, not INSERT OR REPLACE: on a connection with foreign keys on, REPLACE inserting 5,000
# rows of 10 KB in batches of 64 wrote 1.2 GB where an upsert wrote 128 MB (bench/README.md); an
# upsert also keeps a replaced row's place in the order rows were written (`store.journal_reader`).
# (`result_json` and `digest` stay empty: they are the rows of journals made before rows files.)
# Every row of a statement is of the writer's run: its id is `?1`, bound once a statement however
# many rows it inserts (`_insert`), and no row holds it (a value bound costs 160-760 instructions
# with the GIL held, a text the most: a trivial case bound 66 values, 8 of them its run's id).
INSERT = ("INSERT INTO journal_cases (run_id, eval_set_id, eval_id, run_index, status, error, result_json, "
          "digest, row_at, row_size) VALUES (?1, ?, ?, ?, ?, ?, '', NULL, ?, ?) ON CONFLICT (run_id, "
          "eval_set_id, eval_id, run_index) DO UPDATE SET status = excluded.status, error = excluded.error, "
          "result_json = '', digest = NULL, row_at = excluded.row_at, row_size = excluded.row_size")
SUMMARY = -1
"""The run index in the key of a case summary's frame."""
CaseRow = tuple[str, str, int, int, int, int, int]
"""A `journal_cases` row as inserted (its run's id aside: `?1`): a `Row`'s eval set id, eval id and
run index, status and error, its frame's offset and size."""
_VERDICT_COLUMNS = ("position", "runs", "status", "seconds", "tokens", "agent_errors", "metric_errors",
                    "uncertain", "escalated", "summary", "record", "summary_at", "summary_size", "told")
# Values that may be None are bound as "" when they are (`_nullable`) and turned back into NULL by
# `NULLIF(?, '')` (a REAL or INTEGER never equals a TEXT): `sqlite3` binds an `int`, `float` or
# `str` directly but passes None (and `bytes`) through its adapter look-up first, which raises and
# clears two AttributeErrors each time: ~3,300 instructions a value, 7 values a trivial case,
# 8% of the writer thread's instructions (bench/README.md, session 20). The summary's column
# is always empty here (the summary is in the rows file): a constant, not a bound `b""`.
_N = "NULLIF(?, '')"
INSERT_VERDICT = ("INSERT INTO journal_verdicts (run_id, eval_set_id, eval_id, " + ", ".join(_VERDICT_COLUMNS)
                  + f") VALUES (?1, ?, ?, ?, ?, ?, {_N}, {_N}, ?, ?, ?, ?, X'', ?, ?, ?, ?) "
                  "ON CONFLICT (run_id, eval_set_id, eval_id) DO UPDATE SET "
                  + ", ".join(f"{c} = excluded.{c}" for c in _VERDICT_COLUMNS))
# A case run appended again (a resumed run's retried error) makes its case's verdict stale: gone
# with it, so that a kill before the case is told again leaves no verdict of other runs behind.
# (Its metric and summary rows stay, tied to no verdict: the history copies only a verdict's own.)
STALE = "DELETE FROM journal_verdicts WHERE run_id = ? AND eval_set_id = ? AND eval_id = ?"
INSERT_METRIC = f"INSERT INTO journal_metrics VALUES (?1, ?, ?, ?, {_N}, {_N}, ?)"
INSERT_SUMMARY = (f"INSERT INTO journal_summaries VALUES (?1, ?, ?, {_N}, ?, ?, ?, "
                  f"{_N}, {_N}, {_N}, {_N}, {_N}, {_N}, ?, {_N})")


_CASE = operator.itemgetter(1, 2)
"""A row's or verdict's case: (eval set id, eval id)."""


def _nullable(value: Any) -> Any:
    """A value bound to a `NULLIF(?, '')` (see `INSERT_VERDICT`)."""
    return "" if value is None else value


class Writer:
    """One run's appends: a thread holding one connection, committing what is queued in one
    transaction once `FLUSH_CASES` rows wait or the oldest has waited `FLUSH_SECONDS` (or at
    once when `flush`ed). A failed commit is kept and raised to the next `put` or `flush`."""

    def __init__(self, path: Path, prepare: Callable[[sqlite3.Connection], None], run_id: str,
                 rows: Path) -> None:
        self.path, self._prepare, self.run_id = path, prepare, run_id
        self._rows = RowsWriter(rows)
        # The condition's lock is entered directly (`with self._lock`: a C call), not through
        # the condition (two Python calls each time: a put is two a case on the event loop).
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._queue: list[Row] = []
        self._unsettled = 0  # how many of the queue's last rows may still hold their results
        self._verdicts: list[VerdictRow] = []
        self._ops: list[Op] = []  # run first, before the rows (`do`)
        self._oldest = 0.0  # when the oldest queued row came (monotonic)
        self._queued = self._committed = 0  # rows ever queued / committed (or dropped by an error)
        self._waiting = 0  # rows written to the rows file, their commit waiting (`COMMIT_ROWS`)
        self.appended = 0  # case-run rows ever given (`appended`)
        self._urgent = self._closing = False
        self._stamped = -STAMP_SECONDS  # when a commit last set the run's `updated` (monotonic)
        self._error: BaseException | None = None
        self._stale: bool | None = None  # whether the run has verdicts a row appended may make stale
        self._thread = threading.Thread(target=self._loop, name=f"agenteval-journal-{run_id}",
                                        daemon=True)  # an unflushed exit is a kill: see `_live`
        self._thread.start()
        _live.add(self)

    def put(self, rows: Sequence[Row], verdicts: Sequence[VerdictRow] = ()) -> None:
        with self._lock:
            if self._error is not None:
                self._raise()
            was_empty = not self._queue and not self._verdicts
            if was_empty:
                self._oldest = time.monotonic()
            n = len(rows)
            if n:
                self._queue += rows
                self._unsettled += n
                self.appended += n
            if verdicts:
                if self._unsettled:
                    self._settle_told(set(map(_CASE, verdicts)))  # (no comprehension's frame)
                self._verdicts.extend(verdicts)
            if self._unsettled > UNSETTLED:
                self._settle(self._unsettled - UNSETTLED)
            self._queued += n + len(verdicts)
            # The writer waits without a timeout only on an empty queue, and with one otherwise:
            # it needs waking for the first row and for a full batch, not for every row (a wake-up
            # per case run was a thread switch per case run on the caller's CPU).
            if was_empty or len(self._queue) >= FLUSH_CASES:
                self._cond.notify()

    def do(self, op: Op) -> None:
        """Runs `op` with the writer's connection (autocommit) as soon as the thread can, before
        the rows queued after it; returns at once. A `flush` waits for it; an exception it raises
        is raised by the next `put` or `flush`, as a failed commit is."""
        with self._lock:
            if self._error is not None:
                self._raise()
            self._ops.append(op)
            self._queued += 1
            self._cond.notify()

    def flush(self) -> None:
        """Returns once everything queued before the call is committed (or raises why not)."""
        with self._lock:
            target = self._queued
            if self._committed < target:
                self._urgent = True
                self._cond.notify_all()
                while self._committed < target and self._thread.is_alive():
                    self._cond.wait(1.0)
            self._raise()

    def close(self) -> None:
        try:
            self.flush()
        finally:
            with self._lock:
                self._closing = True
                self._cond.notify_all()
            self._thread.join()

    def _settle(self, n: int) -> None:
        """Replaces the results of the oldest `n` unsettled rows by their digests."""
        q = self._queue
        for i in range(len(q) - self._unsettled, len(q) - self._unsettled + n):
            r = q[i]
            if not isinstance(r[7], str):
                q[i] = (*r[:7], digest_json(r[7]))
        self._unsettled -= n

    def _settle_told(self, told: set[tuple[str, str]]) -> None:
        """Settles the unsettled rows of the cases in `told` without digests."""
        q = self._queue
        for i in range(len(q) - self._unsettled, len(q)):
            r = q[i]
            if not isinstance(r[7], str) and (r[1], r[2]) in told:
                q[i] = (*r[:7], "")
        while self._unsettled and isinstance(q[len(q) - self._unsettled][7], str):
            self._unsettled -= 1

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _next_batch(self) -> tuple[list[Row], list[VerdictRow], list[Op], bool] | None:
        """Waits for a batch to commit (None: closing with nothing left): its rows, verdicts,
        operations (`do`: taken at once, with whatever rows wait) and whether a `flush` or `close`
        asked for it."""
        with self._lock:
            while not self._queue and not self._verdicts and not self._ops and \
                    not (self._waiting and (self._urgent or self._closing)):
                if self._closing:
                    return None
                self._cond.wait()
            while len(self._queue) < FLUSH_CASES and not (self._urgent or self._closing or self._ops):
                left = self._oldest + FLUSH_SECONDS - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            batch = (self._queue, self._verdicts, self._ops, self._urgent or self._closing)
            self._queue, self._verdicts, self._ops, self._urgent, self._unsettled = [], [], [], False, 0
            return batch

    def _loop(self) -> None:
        conn: sqlite3.Connection | None = None
        told = 0  # the last verdict's `told` number in the run
        pending = _Pending()  # written to the rows file, not committed yet (`COMMIT_ROWS`)
        while (batch := self._next_batch()) is not None:
            rows, verdicts, ops, asked = batch
            done = len(rows) + len(verdicts) + len(ops)
            try:
                if conn is None:
                    self.path.parent.mkdir(parents=True, exist_ok=True)  # (a new journal's folder)
                    opened = sqlite3.connect(self.path, timeout=60, isolation_level=None)
                    try:
                        use_wal(opened)
                        self._prepare(opened)
                        opened.execute(f"PRAGMA wal_autocheckpoint = {WAL_PAGES}")
                    except BaseException:
                        opened.close()
                        raise
                    conn = opened
                if ops and pending.count:  # (in the order they were asked for)
                    self._commit(conn, pending, asked)
                for op in ops:  # (`Journal.begin`'s: the run's row, before any of its rows)
                    op(conn)
                if rows or verdicts:
                    told = self._write(conn, rows, verdicts, told, pending)
                if pending.count and (asked or pending.count >= COMMIT_ROWS):
                    self._commit(conn, pending, asked)
            except sqlite3.DatabaseError as e:
                pending.clear()
                error: BaseException = e if isinstance(e, sqlite3.IntegrityError) else \
                    DataError(self.path, "", f"cannot use the run journal: {e}")
                with self._lock:
                    self._error = error
            except BaseException as e:  # reported to the appending thread, not lost here
                pending.clear()
                with self._lock:
                    self._error = e
            with self._lock:
                if pending.count:  # (its queue items are counted done once committed)
                    self._waiting += done
                else:
                    self._committed += self._waiting + done
                    self._waiting = 0
                self._cond.notify_all()
        if conn is not None:
            conn.close()
        self._rows.close()

    def _commit(self, conn: sqlite3.Connection, pending: _Pending, asked: bool) -> None:
        """Commits what `pending` holds (and, with `asked` or `STAMP_SECONDS` after the last
        time, the run's `updated` time), then empties it."""
        now = time.monotonic()
        stamp = asked or now - self._stamped >= STAMP_SECONDS
        _commit(conn, self.run_id, pending.rows, pending.verdicts, bool(self._stale), pending.metrics,
                pending.summaries, stamp)
        if stamp:
            self._stamped = now
        pending.clear()

    def _write(self, conn: sqlite3.Connection, rows: list[Row], verdicts: list[VerdictRow], told: int,
               pending: _Pending) -> int:
        """Writes a batch's frames to the rows file and adds their rows and the verdicts'
        (numbered from `told` + 1) to `pending`, to be committed; returns the last verdict's
        number."""
        if self._stale is None:  # (a run begun here has none: its cases are told after their runs)
            self._stale = conn.execute("SELECT 1 FROM journal_verdicts WHERE run_id = ? LIMIT 1",
                                       (self.run_id,)).fetchone() is not None
            told = max(told, _last_told(conn, self.run_id))
        # (Rows taken unsettled have no verdict behind them yet: digested here.)
        places = self._rows.append_many([(r[1], r[2], r[3], r[6], r[7] if isinstance(r[7], str)
                                          else digest_json(r[7])) for r in rows]
                                        + [(v[1], v[2], SUMMARY, v[12], "") for v in verdicts])
        ran, summaries = places[:len(rows)], places[len(rows):]
        numbers = range(told + 1, told + 1 + len(verdicts))
        pending.rows += [(*r[1:6], *at) for r, at in zip(rows, ran, strict=True)]
        if verdicts:
            nums = list(zip(verdicts, numbers, strict=True))
            pending.verdicts += [(*v[1:6], "" if v[6] is None else v[6], "" if v[7] is None else v[7],
                                  *v[8:12], v[13], *at, n)
                                 for (v, n), at in zip(nums, summaries, strict=True)]
            pending.metrics += [(n, i, name, "" if score is None else score, "" if bar is None else bar,
                                 status) for v, n in nums for i, name, score, bar, status in v[14]]
            pending.summaries += [(n, s[0], _nullable(s[1]), *s[2:5], *map(_nullable, s[5:11]), s[11],
                                   _nullable(s[12])) for v, n in nums for s in v[15]]
        pending.count += len(rows) + len(verdicts)
        return told + len(verdicts)


class _Pending:
    """A run's rows and verdicts written to its rows file and waiting for their commit, as
    `_commit` takes them (see `COMMIT_ROWS`)."""

    __slots__ = ("count", "metrics", "rows", "summaries", "verdicts")

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.rows: list[CaseRow] = []
        self.verdicts: list[tuple[Any, ...]] = []
        self.metrics: list[tuple[Any, ...]] = []
        self.summaries: list[tuple[Any, ...]] = []
        self.count = 0  # rows and verdicts


def _last_told(conn: sqlite3.Connection, run_id: str) -> int:
    """The run's largest `told` number so far (0: none), over its verdicts and the rows a
    verdict made stale left behind."""
    return max(int(conn.execute(f"SELECT coalesce(max(told), 0) FROM {table} WHERE run_id = ?",
                                (run_id,)).fetchone()[0])
               for table in ("journal_verdicts", "journal_metrics", "journal_summaries"))


_MANY = (64, 16, 4, 1)
"""How many rows one statement inserts (`_insert`): a batch is inserted with as many of the
first as fit, then of the next, and so on (at most 3 + 3 + 3 statements for the rest; few
statement texts, so that the connection's statement cache keeps them)."""


@functools.cache  # a few texts: four statements, four sizes
def _many(sql: str, n: int) -> str:
    """`sql` (an `INSERT ... VALUES (?, ...)`, perhaps with an upsert clause after) inserting `n`
    rows in one statement."""
    head, _, rest = sql.partition(" VALUES ")
    depth = end = 0
    while True:  # to the row's closing parenthesis (its values may call functions)
        depth += (rest[end] == "(") - (rest[end] == ")")
        end += 1
        if depth == 0:
            break
    return head + " VALUES " + ", ".join([rest[:end]] * n) + rest[end:]


_chain = itertools.chain.from_iterable

_VARIABLES = 999
"""The most host parameters one statement binds: SQLite's limit before 3.32 (still what some
Linux distributions' Python links against); 64 rows of a 17-column verdict would exceed it."""


@functools.cache  # (a few texts: counting a statement's parameters at each batch was 1% of the thread)
def _most(sql: str, shared: int) -> int:
    """How many rows of `sql` (one row's `INSERT`, its first `shared` parameters shared) one
    statement may insert within `_VARIABLES`."""
    return (_VARIABLES - shared) // (sql.count("?") - shared)


def _insert(conn: sqlite3.Connection, sql: str, rows: Sequence[tuple[Any, ...]], shared: tuple[Any, ...] = ()
            ) -> None:
    """Inserts `rows` with `sql` (one row's `INSERT`), up to `_MANY[0]` rows per statement,
    each row's values after `shared`, the values of the row's numbered parameters (`?1` ...,
    each used once in the row): bound once a statement, for all of its rows. The values
    are bound from Python as they are (exact), and each statement is one step of
    SQLite's, which `sqlite3` runs with the GIL released; one step per row (`executemany`) was
    35,000 releases and re-takings of the GIL per 5,000 trivial cases on the writer's thread,
    each a hand-off with the event loop's thread working beside it (bench/README.md, session 16)."""
    at = 0
    most = _most(sql, len(shared))
    for n in _MANY:
        if n > most:
            continue
        end = at + (len(rows) - at) // n * n
        if end == at:
            continue
        # (Each statement's values flattened in C: a Python loop over every value cost more.)
        conn.executemany(_many(sql, n), [[*shared, *_chain(rows[i:i + n])] for i in range(at, end, n)])
        at = end


def _commit(conn: sqlite3.Connection, run_id: str, rows: list[CaseRow], verdicts: list[tuple[Any, ...]],
            stale: bool, metrics: list[tuple[Any, ...]], summaries: list[tuple[Any, ...]], stamp: bool = True
            ) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        if stale:
            conn.executemany(STALE, [(run_id, *r[:2]) for r in rows])
        run = (run_id,)
        _insert(conn, INSERT, rows, run)
        if verdicts:
            _insert(conn, INSERT_VERDICT, verdicts, run)
            _insert(conn, INSERT_METRIC, metrics, run)
            _insert(conn, INSERT_SUMMARY, summaries, run)
        if stamp:  # (`STAMP_SECONDS`; `begin` sets it too)
            conn.execute("UPDATE journal_runs SET updated = ? WHERE run_id = ?", (time.time(), run_id))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


# Every writer with rows queued at interpreter exit commits them (a normal exit is not a kill).
_live: weakref.WeakSet[Writer] = weakref.WeakSet()


def appended(path: Path, run_id: str) -> int | None:
    """How many case-run rows this process's writer of run `run_id` of the journal at `path`
    has been given so far, committed or queued (None: no such writer here). What a fresh run's
    early recording watches its progress by (`store.kept_copy`) instead of a connection and a
    count of the journal's rows every `POLL` seconds (1 ms of CPU each, a GIL hand-off at each
    of its system calls)."""
    for writer in list(_live):
        if writer.run_id == run_id and writer.path == path and not writer._closing:
            return writer.appended
    return None


@atexit.register
def _flush_at_exit() -> None:
    for writer in list(_live):
        with contextlib.suppress(Exception):  # nobody is left to tell; the run is resumable
            writer.flush()


__all__ = ["COMMIT_ROWS", "FLUSH_CASES", "FLUSH_SECONDS", "INSERT", "INSERT_METRIC", "INSERT_SUMMARY",
           "INSERT_VERDICT", "STALE", "SUMMARY", "CaseRow", "Row", "VerdictRow", "Writer", "appended"]
