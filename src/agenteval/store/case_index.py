"""Where each case lies in a run's result document, so that one case, or one page of case runs,
is read without loading the document: a 50,000-case run's document is 700 MB of JSON, 3.8 GB
and about 35 s of CPU loaded whole, where its index is one scan of its lines (≈ 3 s,
`split.ItemWalk`) and a case is then read and validated from its own bytes.

A stored run's index is kept in the history database (`case_spans`, with the file's size and
modification time in `case_span_files`), so that only the first reader of a run scans it; a
document written again is scanned again. Each case read is checked against what the index said
of it (its eval id): an index found stale (the file changed under the same size and time) gives
`Unindexed`, as a document without one does.

A document not laid out as agenteval writes it (compact, its keys in another order, ADK's, too
deep, unusual bytes) has no index: `Unindexed`, and the caller reads the document whole, whose
errors name the file and the item.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TypeVar, cast

from pydantic import BaseModel, ValidationError

from agenteval.datasets.nesting import MAX_RESULT_DEPTH
from agenteval.datasets.scan import DepthScan
from agenteval.datasets.split import ItemWalk
from agenteval.datasets.stream import read_item
from agenteval.errors import AgentEvalError, DataError
from agenteval.schema import CaseSummary, EvalCaseResult, EvalSetResult
from agenteval.store.sqlite import connect
from agenteval.verdicts.outcome import CaseOutcome

M = TypeVar("M", bound=BaseModel)

# (Created when first kept, not by the schema's migration: a cache, which an older agenteval
# reading the same database ignores. Removed with their run.)
_TABLES = (
    """CREATE TABLE IF NOT EXISTS case_span_files (
        run_id TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
        size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, head TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS case_spans (
        run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE, kind INTEGER NOT NULL,
        ordinal INTEGER NOT NULL, eval_id TEXT NOT NULL, run_index INTEGER NOT NULL,
        status INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,
        PRIMARY KEY (run_id, kind, ordinal)) WITHOUT ROWID""",
)
_RESULT, _SUMMARY = 0, 1  # `case_spans.kind`


class Unindexed(AgentEvalError):
    """The document is not laid out so that its cases can be found by their bytes: read it
    whole."""


@dataclass(frozen=True)
class Spot:
    """One item of the document's case results (or summaries: `run_index` 0): its eval id,
    run index, status and bytes `[start, end)`."""

    eval_id: str
    run_index: int
    status: int
    start: int
    end: int


@dataclass(frozen=True)
class CaseIndex:
    """A result document's head (no case results, no summaries) and where its items lie."""

    path: Path
    head: EvalSetResult
    results: list[Spot]
    summaries: list[Spot]

    def case(self, eval_id: str) -> CaseOutcome | None:
        """The case `eval_id` as `verdicts.outcome.outcomes` gives it for the loaded document
        (its first summary, its runs by run index); None when the document has no such case.
        `Unindexed` when the bytes at its spots are not what the index says (stale)."""
        summary = next((s for s in self.summaries if s.eval_id == eval_id), None)
        if summary is None:
            return None
        spots = [s for s in self.results if s.eval_id == eval_id]
        with open(self.path, "rb") as f:
            told = _read(f, summary, CaseSummary)
            runs = [_read(f, s, EvalCaseResult) for s in spots]
        if told.eval_id != eval_id or any(r.eval_id != eval_id for r in runs):
            raise Unindexed(f"{self.path}: the document changed since it was indexed")
        return CaseOutcome(self.head.eval_set_id, self.head.gating, told,
                           sorted(runs, key=lambda r: r.run_index))

    def outcomes(self) -> Iterator[CaseOutcome]:
        """Every case as `verdicts.outcome.outcomes` gives them (summary order), read one at a
        time; `Unindexed` (perhaps after some) when the bytes are not what the index says."""
        runs: dict[str, list[Spot]] = {}
        for s in self.results:
            runs.setdefault(s.eval_id, []).append(s)
        with open(self.path, "rb") as f:
            for spot in self.summaries:
                told = _read(f, spot, CaseSummary)
                got = [_read(f, s, EvalCaseResult) for s in runs.get(spot.eval_id, ())]
                if told.eval_id != spot.eval_id or any(r.eval_id != spot.eval_id for r in got):
                    raise Unindexed(f"{self.path}: the document changed since it was indexed")
                yield CaseOutcome(self.head.eval_set_id, self.head.gating, told,
                                  sorted(got, key=lambda r: r.run_index))

    def runs(self, spots: Sequence[Spot]) -> Iterator[EvalCaseResult]:
        """The case runs at `spots` (some of `results`), read one at a time; `Unindexed`
        (perhaps after some) when the bytes are not what the index says."""
        with open(self.path, "rb") as f:
            for spot in spots:
                run = _read(f, spot, EvalCaseResult)
                if run.eval_id != spot.eval_id:
                    raise Unindexed(f"{self.path}: the document changed since it was indexed")
                yield run

    def page(self, offset: int, limit: int,
             statuses: Collection[int] | None = None) -> tuple[int, list[EvalCaseResult]]:
        """(how many case runs have one of `statuses`, or all; those from `offset`, at most
        `limit`), in the document's order."""
        chosen = self.results if statuses is None else [s for s in self.results if s.status in statuses]
        with open(self.path, "rb") as f:
            runs = [_read(f, s, EvalCaseResult) for s in chosen[offset:offset + limit]]
        if any(r.eval_id != s.eval_id for r, s in zip(runs, chosen[offset:], strict=False)):
            raise Unindexed(f"{self.path}: the document changed since it was indexed")
        return len(chosen), runs


def _read(f: BinaryIO, spot: Spot, model: type[M]) -> M:
    """The item at `spot` validated as `model`; `Unindexed` when its bytes are not one such
    item read as the document's reader would read it."""
    f.seek(spot.start)
    raw = f.read(spot.end - spot.start)
    scan = DepthScan()
    scan.feed(b"[[", MAX_RESULT_DEPTH)
    scan.feed(raw, MAX_RESULT_DEPTH)
    item = None if scan.deepest > MAX_RESULT_DEPTH or scan.surrogates else read_item(model, raw)
    if item is None:
        raise Unindexed(f"{f.name}: the item at byte {spot.start} does not read alone")
    return item


def case_index(path: str | Path, db: Path | None = None, run_id: str | None = None) -> CaseIndex:
    """The index of the result document at `path`: kept in the history database `db` for its
    run `run_id` when given (read from it while the file is the one indexed, else found and
    stored: a database that cannot take it is not an error), else found by a scan.
    `Unindexed` when the document is not laid out for one; a DataError naming the file when it
    cannot be read."""
    path = Path(path)
    try:
        info = path.stat()
        stamp = (info.st_size, info.st_mtime_ns)
        if db is not None and run_id is not None:
            kept = _kept(db, run_id, stamp)
            if kept is not None:
                return CaseIndex(path, *kept)
        head, results, summaries = scan(path)
    except OSError as e:
        raise DataError(path, "", f"cannot read the result document: {e.strerror}") from None
    if db is not None and run_id is not None:
        _keep(db, run_id, stamp, head, results, summaries)
    return CaseIndex(path, head, results, summaries)


# --- the scan ---------------------------------------------------------------------------------

_INDENT = re.compile(rb'\{[ \t]*\n( *)"')
_DIGITS = re.compile(rb"\d+")
_keys: dict[bytes, tuple[re.Pattern[bytes], bytes]] = {}
_NEAR = 4096  # an item's eval id and status are among its first keys (searched there first)


def _patterns(indent: bytes) -> tuple[re.Pattern[bytes], bytes]:
    """An item's own keys (at its first key's indent; a raw newline is never inside a string):
    its eval id and status, and where its run index's value starts."""
    found = _keys.get(indent)
    if found is None:
        at = b"\n" + indent
        found = _keys[indent] = (
            re.compile(at + rb'"eval_id": "((?:[^"\\\n]|\\.)*)",(?:.*\n)*?'
                       + indent + rb'"final_eval_status": (\d+)'),
            at + b'"run_index": ')
    return found


def _spot(raw: bytes, start: int, end: int, summary: bool) -> Spot:
    m = _INDENT.match(raw)
    if m is None:
        raise Unindexed("an item is not laid out one key a line")
    keys, run_key = _patterns(m.group(1))
    found = keys.search(raw, 0, _NEAR) or keys.search(raw)
    run = 0
    if not summary:
        at = raw.rfind(run_key)
        digits = None if at < 0 else _DIGITS.match(raw, at + len(run_key))
        if digits is None:
            raise Unindexed("an item's run index is not where agenteval writes it")
        run = int(digits.group())
    if found is None:
        raise Unindexed("an item's eval id or status is not where agenteval writes it")
    name = found.group(1)
    return Spot(json.loads(b'"' + name + b'"') if b"\\" in name else name.decode(), run,
                int(found.group(2)), start, end)


class _Opened:
    """The file from where it is, after an opening `{`: the rest of a document read as an
    object of its own (its offsets one past the file's, from where the file was)."""

    def __init__(self, f: BinaryIO) -> None:
        self.f, self.first = f, b"{"

    def read(self, n: int) -> bytes:
        if self.first:
            first, self.first = self.first, b""
            return first + self.f.read(max(n - 1, 0))
        return self.f.read(n)


def scan(path: str | Path) -> tuple[EvalSetResult, list[Spot], list[Spot]]:
    """The document's head (without its case results and summaries) and the spots of its case
    results and of its summaries, found by their lines without parsing the lists; `Unindexed`
    when it is not laid out so."""
    with open(path, "rb") as f:
        walk = ItemWalk(f, "eval_case_results")
        results = [_spot(walk.bytes_of(s), *s, summary=False) for s in walk]
        if walk.closed_at is None or walk.head is None:
            raise Unindexed(f"{path}: the case results are not laid out one item a line")
        base = walk.closed_at - 1
        f.seek(walk.closed_at)
        tail = ItemWalk(cast(BinaryIO, _Opened(f)), "summary")
        summaries = [_spot(tail.bytes_of(s), s[0] + base, s[1] + base, summary=True) for s in tail]
        if tail.closed_at is None or tail.head is None:
            raise Unindexed(f"{path}: the summaries are not laid out one item a line")
        f.seek(tail.closed_at + base)
        rest = f.read()
    # The document with both lists empty: what lies around them is small (the header, metadata).
    try:
        head = EvalSetResult.model_validate_json(walk.head + b"]" + tail.head[1:] + b"]" + rest)
    except ValidationError:
        raise Unindexed(f"{path}: its head does not validate alone") from None
    return head, results, summaries


# --- kept in the history database -------------------------------------------------------------

def _kept(db: Path, run_id: str,
          stamp: tuple[int, int]) -> tuple[EvalSetResult, list[Spot], list[Spot]] | None:
    """The spots the database keeps for `run_id` when they describe the file as it is now."""
    try:
        with connect(db, False, lambda conn: None, "the run database") as conn:
            if conn is None:
                return None
            row = conn.execute("SELECT size, mtime_ns, head FROM case_span_files WHERE run_id = ?",
                               (run_id,)).fetchone()
            if row is None or tuple(row[:2]) != stamp:
                return None
            rows = conn.execute("SELECT kind, eval_id, run_index, status, start, end FROM case_spans "
                                "WHERE run_id = ? ORDER BY kind, ordinal", (run_id,)).fetchall()
    except (DataError, sqlite3.OperationalError):  # (an older database: no such table yet)
        return None
    out: tuple[list[Spot], list[Spot]] = ([], [])
    for kind, *spot in rows:
        out[kind].append(Spot(*spot))
    return EvalSetResult.model_validate_json(row[2]), *out


def _keep(db: Path, run_id: str, stamp: tuple[int, int], head: EvalSetResult, results: list[Spot],
          summaries: list[Spot]) -> None:
    """Stores the spots of `run_id` (replacing any), in one transaction; a database that cannot
    take them (read-only, busy, its run gone) is left as it is: the next reader scans again."""
    try:
        with connect(db, False, lambda conn: None, "the run database") as conn:
            if conn is None:
                return
            # Not waited for: a run being recorded may hold the write lock for minutes, and a
            # reader must not wait on it to keep what it can find again.
            conn.execute("PRAGMA busy_timeout = 0")
            for table in _TABLES:
                conn.execute(table)
            conn.execute("BEGIN IMMEDIATE")
            try:
                if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None:
                    conn.execute("ROLLBACK")
                    return
                conn.execute("DELETE FROM case_spans WHERE run_id = ?", (run_id,))
                conn.execute("INSERT OR REPLACE INTO case_span_files VALUES (?, ?, ?, ?)",
                             (run_id, *stamp, head.model_dump_json()))
                for kind, spots in ((_RESULT, results), (_SUMMARY, summaries)):
                    conn.executemany("INSERT INTO case_spans VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                     [(run_id, kind, i, s.eval_id, s.run_index, s.status, s.start, s.end)
                                      for i, s in enumerate(spots)])
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
    except (DataError, sqlite3.Error):
        return


__all__ = ["CaseIndex", "Spot", "Unindexed", "case_index", "scan"]
