"""Reading a resumed run's kept case runs and verdicts back from the run journal, in order.

A resumed run asks for its kept case runs in eval-set order, one case at a time. The journal's
rows are read in the order they were written (finish order for case runs, told order for
verdicts: both close to eval-set order) by one streamed `SELECT` each, and a row asked for is
taken from the rows read ahead; a row further ahead than `AHEAD` rows (a case that ran much
longer than those after it, a row written by a later resume) is looked up on its own, so memory
stays bounded whatever the order. Rows come as bytes, from the run's rows file
(`store.journal_rows`, by the offset the row's key gives) or, in a journal made before rows
files, from SQLite (`CAST ... AS BLOB`, placed when read): a kept row is copied into the
document as it is, never decoded.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from agenteval.schema import EvalCaseResult, EvalStatus
from agenteval.store.digest import from_digest
from agenteval.store.journal_rows import RowsReader, file_size, rows_path
from agenteval.store.journal_writer import SUMMARY
from agenteval.store.kept import BESIDE, READABLE, Frame, KeptCase, KeptRows, Tally
from agenteval.store.output import place, remember_placed, unplace

AHEAD = 256
"""Rows read ahead of the one asked for, at most, before it is looked up on its own."""

CaseKey = tuple[str, str, int]  # (eval set id, eval id, run index)
_VERDICT = ("eval_set_id", "eval_id", "runs", "status", "seconds", "tokens", "agent_errors", "metric_errors",
            "uncertain", "escalated", "summary", "record")
_PLACE = ("summary_at", "summary_size")  # (a journal made before rows files has no such columns)
_READABLE = tuple(f"[{v}," for v in READABLE)  # the record versions a resume keeps
_BESIDE_V = tuple(f"[{v}," for v in BESIDE)  # those whose rows are found by the verdict's `told`
_STATUS = {int(s): s for s in EvalStatus}
_NONE: list[Any] = []  # (a kept case's rows and digests before they are read: never changed)
_BESIDE = (("journal_metrics", "run_index, metric_name, score, threshold, status"),
           ("journal_summaries", "metric_name, threshold, runs, scored_runs, passed_runs, mean, std, "
            "ci_low, ci_high, pass_at_k, pass_pow_k, status, reason"))


class _Ahead:
    """The rows of one streamed query, each taken once by its key (its first `width` columns)."""

    def __init__(self, rows: Iterator[tuple[Any, ...]], width: int, firsts: bool = True) -> None:
        self._rows, self._width = rows, width
        self.firsts = firsts  # whether first runs (run index 0) are among the rows
        self._buffer: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._elsewhere: set[tuple[Any, ...]] = set()  # looked up on their own: skipped when met
        self._done = False

    def take(self, key: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """The row of `key` (None: not within `AHEAD` rows; the caller looks it up on its own)."""
        row = self._buffer.pop(key, None)
        if row is not None:
            return row
        while not self._done and len(self._buffer) < AHEAD:
            row = next(self._rows, None)
            if row is None:
                self._done = True
                break
            k = row[:self._width]
            if k in self._elsewhere:
                self._elsewhere.discard(k)
            elif k == key:
                return row
            else:
                self._buffer[k] = row
        if not self._done:
            self._elsewhere.add(key)
        return None


class JournalReader:
    """Reads finished case runs over one read-only connection (usable from any thread, one at a
    time); closed with `close` or when collected."""

    def __init__(self, path: Path, root: Path) -> None:
        self.path, self.root = path, root
        self._conn: sqlite3.Connection | None = None
        self._files: dict[str, RowsReader] = {}  # each run's rows file
        self._digests = False  # whether the journal has the digest column
        self._places = False  # whether it has the rows' places in rows files
        self._verdict_columns = ""  # a verdict's columns, its summary's place and told number
        self._joined = False  # whether verdicts are read with their first runs (`kept_case`)
        self._rowid = False  # whether its case rows are in a rowid table (written in order)
        self._verdicts = False  # whether it has verdicts
        self._streams: dict[tuple[str, str], _Ahead] = {}
        self._lock = threading.Lock()

    def _open(self) -> sqlite3.Connection | None:
        if self._conn is None:
            if not self.path.is_file():
                return None
            self._conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                         timeout=60, check_same_thread=False)
            tables = dict(self._conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
            sql = tables.get("journal_cases") or ""
            self._digests = " digest " in sql
            self._places = " row_at " in sql
            self._rowid = "WITHOUT ROWID" not in sql.upper()
            verdicts = tables.get("journal_verdicts") or ""
            self._verdicts = " escalated " in verdicts  # (this layout)
            columns = [*_VERDICT, *(_PLACE if " summary_at " in verdicts else ("NULL", "NULL")),
                       "told" if " told " in verdicts else "NULL"]
            self._verdict_columns = ", ".join(c if c == "NULL" else f"v.{c}" for c in columns)
        return self._conn

    def result(self, run_id: str, key: CaseKey) -> EvalCaseResult | None:
        """One finished case run (None: the journal does not hold it), parsed whole and
        remembered as its row (`remember_placed`), so that a document copies the row."""
        row = self._row(run_id, key)
        return None if row is None else parsed(row[0])

    def kept(self, run_id: str, key: CaseKey) -> EvalCaseResult | None:
        """One finished case run for a document that copies its row (None: the journal does not
        hold it): its digest (`store.digest`), with the row remembered as the result's JSON
        (`remember_placed`), so that the document gets the row as it is and the row is never
        parsed. A row without a digest (written by an agenteval before digests), or with one of
        another format, is parsed whole, as `result` does."""
        row = self._row(run_id, key)
        if row is None:
            return None
        raw, digest = row
        if digest is None or not raw.startswith(b"{\n"):
            return parsed(raw)
        try:
            result = from_digest(digest)
        except ValueError:  # a digest of another format (`store.digest.VERSION`)
            return parsed(raw)
        remember_placed(result, raw)
        return result

    def kept_case(self, run_id: str, eval_set_id: str, eval_id: str, runs: int,
                  gating: str) -> KeptCase | None:
        """Case `eval_id` of a resumed run whose `runs` runs were all kept, as its verdict and
        rows (`store.kept.KeptCase`); None when the journal holds no usable verdict of it (told
        by no agenteval that journals verdicts, of another number of runs or record version, or
        rows that are not the document's JSON): its runs are then read one by one (`kept`).
        The verdict comes with the place of its first run's row (one streamed query: a second
        stream of the case runs, stepped beside it, cost a third of a kept case's reading)."""
        return self.kept_cases(run_id, eval_set_id, [eval_id], runs, gating)[0]

    def kept_cases(self, run_id: str, eval_set_id: str, eval_ids: Sequence[str], runs: int,
                   gating: str) -> list[KeptCase | None]:
        """`kept_case` of each of `eval_ids` (cases of one eval set, in their order), their
        verdicts taken from the stream in turn and their frames read together
        (`RowsReader.read_many`: one system call for many frames, not one each)."""
        with self._lock:
            conn = self._open()
            if conn is None or not self._verdicts:
                return [None] * len(eval_ids)
            self._joined = True
            take = self._stream(run_id, "verdicts").take
            # (A stream of the case runs made before this, with first runs in it, gives them:
            # taken from the verdict's, they would be left in it, filling its read-ahead.)
            cases = self._streams.get((run_id, "cases"))
            firsts = bool(runs) and (cases is None or not cases.firsts)
            # The frames to read at once below: the runs' rows and the summaries apart, each list
            # in file order (a batch's summaries follow its rows in the file: interleaved, a
            # summary and a row a megabyte apart were read with a system call each).
            frames: list[tuple[int, int, CaseKey]] = []
            summaries: list[tuple[int, int, CaseKey]] = []
            # Per case: its verdict, and its summary and rows, each placed already or the index
            # of its frame in `frames` (a case of one run, the usual one, without a list of them).
            plans: list[tuple[tuple[Any, ...], Any, Any] | None] = []
            one = runs == 1 and firsts
            # A case of one run whose row and summary are in the rows file (every case of a run
            # journaled since rows files) is not read here: its frames are where the document's
            # writer reads them on its own thread, and a sink that needs them reads the block's
            # at its first ask (`KeptRows`). Its plan is (verdict, None, its place in these).
            later_runs: list[Frame] = []
            later_summaries: list[Frame] = []
            end = file_size(rows_path(self.root, run_id)) if one else 0  # (frames past it: cut off)
            for eval_id in eval_ids:
                verdict = take((eval_set_id, eval_id))
                if verdict is None:
                    where = "v.run_id = ? AND v.eval_set_id = ? AND v.eval_id = ?"
                    verdict = conn.execute(self._verdict_sql(where),
                                           (run_id, eval_set_id, eval_id)).fetchone()
                    if verdict is None:
                        plans.append(None)
                        continue
                record, at = verdict[11], verdict[12]
                if verdict[2] != runs or not record.startswith(_READABLE) or \
                        (verdict[14] is None and record.startswith(_BESIDE_V)):
                    plans.append(None)
                    continue
                if one and at is not None and verdict[17] is not None:  # (the usual case) left unread
                    if at + verdict[13] > end or verdict[17] + verdict[18] > end:
                        plans.append(None)  # cut off with the file's tail: not kept
                        continue
                    plans.append((verdict, None, len(later_runs)))
                    later_runs.append((verdict[17], verdict[18], (eval_set_id, eval_id, 0)))
                    later_summaries.append((at, verdict[13], (eval_set_id, eval_id, SUMMARY)))
                    continue
                if at is not None:  # in the rows file; a summary cut off with its tail is not kept
                    summary: Any = len(summaries)
                    summaries.append((at, verdict[13], (eval_set_id, eval_id, SUMMARY)))
                else:  # (a journal made before rows files: the summary's JSON, not placed)
                    summary = (place(bytes(verdict[10])), None)
                if one:  # its first run's row came with the verdict
                    if verdict[15] is None:
                        rows: Any = None
                    elif verdict[17] is None:  # (a row of a journal made before rows files: not placed)
                        rows = (place(verdict[15]), verdict[16])
                    else:
                        rows = len(frames)
                        frames.append((verdict[17], verdict[18], (eval_set_id, eval_id, 0)))
                    plans.append((verdict, summary, rows))
                    continue
                parts: list[Any] = []
                for r in range(runs):
                    key = (eval_set_id, eval_id, r)
                    row = verdict[15:] if r == 0 and firsts else self._columns_held(run_id, key)
                    if row is None or row[0] is None:
                        parts.append(None)
                    elif row[2] is None:  # (a row of a journal made before rows files: not placed)
                        parts.append((place(row[0]), row[1]))
                    else:
                        parts.append(len(frames))
                        frames.append((row[2], row[3], key))
                plans.append((verdict, summary, parts))
            read = self._file(run_id).read_many(frames) if frames else []
            read_summaries = self._file(run_id).read_many(summaries) if summaries else []
        later = KeptRows(rows_path(self.root, run_id), later_runs, later_summaries,
                         functools.partial(self._read_frames, run_id)) if later_runs else None
        out: list[KeptCase | None] = []
        tallies: dict[tuple[int, int, int, int], Tally] = {}  # (frozen: one of each shared, as
        # a Tally made per case cost a tenth of the case's reading; so did `EvalStatus(status)`)
        beside = self._beside
        for plan in plans:
            if plan is None:
                out.append(None)
                continue
            verdict, summary, rows = plan
            counts = verdict[6:10]  # agent and metric errors, uncertain, escalated
            tally = tallies.get(counts)
            if tally is None:
                tally = tallies[counts] = Tally(*counts)
            told = verdict[14]
            if summary is None:  # (its frames left unread: `later`)
                out.append(KeptCase(verdict[0], verdict[1], gating, _NONE, _NONE, b"", _STATUS[verdict[3]],
                                    verdict[2], verdict[4], verdict[5], tally, verdict[11],
                                    beside=None if told is None else functools.partial(beside, run_id, told),
                                    rows_from=later, run_at=rows, summary_at=rows))
                continue
            if summary.__class__ is int:
                summary = read_summaries[summary]
            if one:
                got_row: Any = read[rows] if rows.__class__ is int else rows
                if summary is None or got_row is None or not got_row[0].startswith(b"{\n"):
                    out.append(None)  # (a row of an older agenteval is compact JSON: not the document's)
                    continue
                placed, digests = [got_row[0]], [got_row[1]]
            else:
                got: list[Any] = [read[p] if p.__class__ is int else p for p in rows]
                if summary is None or not _documents(got):
                    out.append(None)
                    continue
                placed, digests = [g[0] for g in got], [g[1] for g in got]
            out.append(KeptCase(verdict[0], verdict[1], gating, placed, digests, summary[0],
                                _STATUS[verdict[3]], verdict[2], verdict[4], verdict[5], tally, verdict[11],
                                beside=None if told is None else functools.partial(beside, run_id, told)))
        return out

    def _read_frames(self, run_id: str, frames: list[Frame]) -> list[tuple[bytes, str | None] | None]:
        """`RowsReader.read_many` of run `run_id`'s rows file, the lock held (`KeptRows.got`)."""
        with self._lock:
            return self._file(run_id).read_many(frames)

    def _verdict_sql(self, where: str) -> str:
        """The verdicts `where` says, each with its first run's row (`_columns`; NULLs when the
        journal holds none), in the order they were written."""
        return (f"SELECT {self._verdict_columns}, {self._columns('c.')} FROM journal_verdicts v "
                "LEFT JOIN journal_cases c ON c.run_id = v.run_id AND c.eval_set_id = v.eval_set_id "
                f"AND c.eval_id = v.eval_id AND c.run_index = 0 WHERE {where} ORDER BY v.rowid")

    def _beside(self, run_id: str, told: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """A version-2 verdict's metric and summary rows (a scan of the run's rows: asked only
        by a sink that records a kept case's rows itself, which a journaled run never has)."""
        with self._lock:
            conn = self._open()
            assert conn is not None
            metrics, summaries = (
                conn.execute(f"SELECT {columns} FROM {table} WHERE run_id = ? AND told = ? ORDER BY rowid",
                             (run_id, told)).fetchall() for table, columns in _BESIDE)
            return metrics, summaries

    def raw(self, run_id: str, key: CaseKey) -> str | None:
        """The JSON of one finished case run as a document holds it (None: no such row)."""
        row = self._row(run_id, key)
        return None if row is None else unplace(row[0]).decode()

    def _stream(self, run_id: str, what: str) -> _Ahead:
        """The streamed rows of the run's case runs or verdicts, in the order they were written
        (`+run_id`: a scan in rowid order, not the index and a sort)."""
        stream = self._streams.get((run_id, what))
        if stream is None:
            assert self._conn is not None
            if what == "verdicts":
                sql = self._verdict_sql("+v.run_id = ?")
            else:
                order = " ORDER BY rowid" if self._rowid else ""
                # First runs come with their verdicts once `kept_case` reads them: left in this
                # stream, untaken, they would fill its read-ahead.
                first = " AND run_index > 0" if self._joined else ""
                sql = (f"SELECT eval_set_id, eval_id, run_index, {self._columns()} FROM journal_cases "
                       f"WHERE +run_id = ?{first}{order}")
            stream = self._streams[(run_id, what)] = _Ahead(iter(self._conn.execute(sql, (run_id,))),
                                                             3 if what == "cases" else 2,
                                                             what == "verdicts" or not self._joined)
        return stream

    def _columns(self, table: str = "") -> str:
        """A case run's row, digest and place in its rows file (None where the journal has none),
        of `table` (a prefix: "c.")."""
        return (f"CAST({table}result_json AS BLOB), {table + 'digest' if self._digests else 'NULL'}, "
                f"{f'{table}row_at, {table}row_size' if self._places else 'NULL, NULL'}")

    def _row(self, run_id: str, key: CaseKey) -> tuple[bytes, str | None] | None:
        with self._lock:
            if self._open() is None:
                return None
            return self._row_held(run_id, key)

    def _row_held(self, run_id: str, key: CaseKey) -> tuple[bytes, str | None] | None:
        """`_row`, the lock held and the connection open."""
        return self._placed(run_id, key, self._columns_held(run_id, key))

    def _columns_held(self, run_id: str, key: CaseKey) -> Any:
        """The columns (`_columns`) of case run `key` (None: no such row), the lock held and the
        connection open: from the stream of the case runs, else looked up on its own."""
        assert self._conn is not None
        stream = self._stream(run_id, "cases")
        taken = stream.take(key) if key[2] or stream.firsts else None
        return taken[3:] if taken is not None else self._conn.execute(
            f"SELECT {self._columns()} FROM journal_cases WHERE run_id = ? AND eval_set_id = ? "
            "AND eval_id = ? AND run_index = ?", (run_id, *key)).fetchone()

    def _placed(self, run_id: str, key: CaseKey, row: Any) -> tuple[bytes, str | None] | None:
        """The placed row and digest of `key` from its columns (`_columns`; None or NULLs: none)."""
        if row is None or row[0] is None:
            return None
        raw, digest, at, size = row
        if at is None:  # (a row of a journal made before rows files: not placed)
            return place(raw), digest
        return self._file(run_id).read(at, size, key)

    def _file(self, run_id: str) -> RowsReader:
        rows = self._files.get(run_id)
        if rows is None:
            rows = self._files[run_id] = RowsReader(rows_path(self.root, run_id))
        return rows

    def close(self) -> None:
        with self._lock:
            self._streams.clear()
            for rows in self._files.values():
                rows.close()
            self._files.clear()
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _documents(got: list[Any]) -> bool:
    """Whether a kept case's rows (placed, digest) were all read, and are the document's JSON (a
    row of an older agenteval is compact JSON: not the document's). A loop, not `all` of a
    generator: asked of every kept case of several runs."""
    for g in got:  # noqa: SIM110 (see the docstring)
        if g is None or not g[0].startswith(b"{\n"):
            return False
    return True


def parsed(raw: bytes) -> EvalCaseResult:
    """A journal row (placed) parsed whole, remembered as its JSON when it is the document's
    (indented)."""
    result = EvalCaseResult.model_validate_json(raw)
    if raw.startswith(b"{\n"):  # (a row of an older agenteval is compact JSON: serialised again)
        remember_placed(result, raw)
    return result


__all__ = ["AHEAD", "JournalReader", "parsed"]
