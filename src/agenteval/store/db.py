"""Run history in SQLite, beside the result JSON files: `<root>/.agenteval/history.sqlite`.

The JSON document stays the record of a run; the database indexes it for listing, lookup and
trends. Its tables and their columns are described in `store.history_schema`, beside their
statements and the migration of an older database.

Recording is one transaction (WAL journal): a run is stored whole or not at all; recording the
same id again replaces it.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, TypeAdapter

from agenteval.datasets.files import gc_paused
from agenteval.errors import DataError
from agenteval.schema import CaseSummary, EvalSetResult, EvalStatus, RunSpec
from agenteval.store.case_rows import CaseRows, case_rows
from agenteval.store.history import load_result
from agenteval.store.history_schema import SCHEMA_VERSION, migrate
from agenteval.store.kept import summaries_derived
from agenteval.store.sqlite import connect, use_wal
from agenteval.store.staging import drop_others, drop_unowned, finish, staged_document
from agenteval.store.verdict_copy import (
    ATTACHED,
    CASE_TABLES,
    CaseTotals,
    add,
    case_totals,
    closed_beside,
    copy_rows,
)
from agenteval.verdicts.outcome import CaseOutcome, SetCounts, outcomes

if TYPE_CHECKING:  # (`verdicts.paired` is compare's and the web's: 1.4% of eval's start-up)
    from agenteval.verdicts.paired import Runs

ALIASES = ("latest", "previous")


class UnknownRun(DataError):
    """A run reference the run history does not know (no database, or no run it names)."""

_SUMMARY_FIELDS = ("metric_name", "threshold", "runs", "scored_runs", "passed_runs", "mean", "std",
                   "ci_low", "ci_high", "pass_at_k", "pass_pow_k", "eval_status", "reason")
_KNOWN_META = ("eval_set_file", "eval_set_sha256", "command", "agent", "agent_model", "judge_model",
               "duration_seconds", "config")
_COLUMNS = ("run_id, created, eval_set_id, agent, agent_model, judge_model, num_runs, cases_total, "
            "cases_passed, cases_failed, duration_seconds, total_tokens, result_path, eval_set_sha256, "
            "gating, run_group, cases_not_evaluated")


@functools.cache
def _case_summaries() -> TypeAdapter[list[CaseSummary]]:
    return TypeAdapter(list[CaseSummary])


def history_db_path(root: str | Path) -> Path:
    """Where a store root keeps its run database."""
    return Path(root) / ".agenteval" / "history.sqlite"


@dataclass(frozen=True)
class RunRow:
    """A recorded run as listed: `duration_seconds` is wall clock when the recorder measured it,
    else the agent's summed invocation durations; `total_tokens` counts agent tokens."""

    run_id: str
    created: float
    eval_set_id: str
    agent: str | None
    agent_model: str | None
    judge_model: str | None
    num_runs: int
    cases_total: int
    cases_passed: int
    cases_failed: int  # FAILED: not counting cases_not_evaluated
    duration_seconds: float | None
    total_tokens: float | None
    result_path: Path
    eval_set_sha256: str | None
    gating: str
    run_group: str | None = None  # the run (RunSpec.run_id) this document belongs to
    cases_not_evaluated: int = 0


def _json(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _header_meta(result: EvalSetResult) -> dict[str, Any]:
    """What the run header says about this document, in `record`'s meta keys."""
    spec = result.run
    if spec is None:
        return {}
    ref = next((r for r in spec.eval_sets if r.eval_set_id == result.eval_set_id), None)
    return {k: v for k, v in {
        "command": spec.command, "agent": spec.agent.name if spec.agent else None,
        "agent_model": spec.models.agent,
        "judge_model": ", ".join(spec.models.judge) if spec.models.judge else None,
        "duration_seconds": spec.duration_seconds, "config": spec.config,
        "config_file": spec.config_file, "eval_set_file": ref.file if ref else None,
        "eval_set_sha256": ref.sha256 if ref else None, "num_runs": spec.num_runs,
        "parallelism": spec.concurrency.cases, "actual_file": spec.actual_file,
    }.items() if v is not None}


_BATCH = 512  # cases whose rows `record_outcomes` inserts in one statement per table


def _insert_cases(conn: sqlite3.Connection, rows: tuple[list[tuple[Any, ...]], ...]) -> None:
    """Inserts gathered case, metric and summary rows (emptying the lists)."""
    for table, marks, gathered in zip(CASE_TABLES, (9, 7, 15), rows,
                                      strict=True):
        conn.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * marks)})", gathered)
        gathered.clear()


class RunStore:
    """The run database of one store root (a project or agent directory). Every call opens its
    own connection, so one store may be used from several threads or processes."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.path = history_db_path(root)

    def _connect(self, create: bool) -> AbstractContextManager[sqlite3.Connection | None]:
        return connect(self.path, create, self._prepare, "the run database")

    def _prepare(self, conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA foreign_keys=ON")
        migrate(conn, self.path)

    def _stored_path(self, path: Path) -> str:
        resolved = path.resolve()
        try:
            return str(resolved.relative_to(self.root.resolve()))
        except ValueError:
            return str(resolved)

    def record(self, result: EvalSetResult, result_path: str | Path,
               meta: Mapping[str, Any] | None = None) -> str:
        """Records a run whose document is at `result_path`; returns its id.

        The document's run header (`result.run`) gives the run group, command, agent, models,
        duration, config and the eval set's file and hash; `meta` (then `result.metadata`)
        may add to or replace them: `eval_set_file`, `eval_set_sha256`,
        `command`, `agent`, `agent_model`, `judge_model` (else the judges named in the judge
        records), `duration_seconds` (wall clock) and `config` (a model, dict or JSON text); any
        other keys are kept in `meta_json`.
        """
        return self.record_outcomes(result, outcomes(result), result_path, meta)

    def record_outcomes(self, result: EvalSetResult, cases: Iterable[CaseOutcome | CaseRows],
                        result_path: str | Path, meta: Mapping[str, Any] | None = None) -> str:
        """`record` of a document whose cases come from `cases` (each eval id's summary and
        runs, or the rows made of them: `store.case_rows`), consumed one at a time, so that a
        large run is recorded in bounded memory; `result` gives everything else (its own case
        lists are not read)."""
        def insert(conn: sqlite3.Connection, run_id: str) -> CaseTotals:
            totals = CaseTotals()
            # Inserted `_BATCH` cases at a time: three statements a case were most of recording a
            # large run.
            rows: tuple[list[tuple[Any, ...]], ...] = ([], [], [])
            for i, given in enumerate(cases):
                c = given if isinstance(given, CaseRows) else case_rows(given)
                totals.statuses[c.status] += 1
                totals.max_runs = max(totals.max_runs, c.num_runs)
                totals.agent_seconds = add(totals.agent_seconds, c.seconds)
                totals.total_tokens = add(totals.total_tokens, c.tokens)
                derived = summaries_derived(c)
                rows[0].append((run_id, c.eval_id, i, int(c.status), c.num_runs, c.seconds, c.tokens,
                                c.error, derived))
                rows[1].extend((run_id, *row) for row in c.metrics)
                if not derived:
                    rows[2].extend((run_id, *row) for row in c.summaries)
                totals.judges.update(c.judges)
                totals.judge_tokens += c.judge_tokens
                if len(rows[0]) >= _BATCH:
                    _insert_cases(conn, rows)
            _insert_cases(conn, rows)
            return totals

        return self._record(result, result_path, meta, insert)

    def record_copied(self, result: EvalSetResult, journal: Path, journal_run_id: str,
                      result_path: str | Path, meta: Mapping[str, Any] | None = None) -> str:
        """`record_outcomes` of a journaled run's document whose cases' rows the run journal at
        `journal` holds beside their verdicts (`Journal.copyable`): copied by SQLite with the
        journal attached (`store.verdict_copy`), in the same one transaction; a document the run
        staged as it went (`store.staging`) gains only the verdicts told since its last stage."""
        def insert(conn: sqlite3.Connection, run_id: str) -> CaseTotals:
            totals = finish(conn, run_id, journal_run_id, result.eval_set_id)
            if totals is None:
                for table in CASE_TABLES:
                    conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
                copy_rows(conn, run_id, journal_run_id, result.eval_set_id)
                totals = case_totals(conn, ATTACHED, journal_run_id, result.eval_set_id)
            drop_others(conn, run_id, journal_run_id, result.eval_set_id)
            return totals

        return self._record(result, result_path, meta, insert, self.attached(journal, checkpoints=False))

    def attached(self, journal: Path, checkpoints: bool = True) -> sqlite3.Connection:
        """A connection to the history (made if need be, usable from any thread) with the run
        journal at `journal` attached as `ATTACHED`, committing without an fsync (the WAL's
        checkpoints sync it: at its close when not `checkpoints`, else also as the WAL grows):
        for a run's stages (`store.staging`) and its recording."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        try:
            use_wal(conn)
            self._prepare(conn)
            if not checkpoints:
                conn.execute("PRAGMA wal_autocheckpoint=0")  # (at its close, beside: `closed_beside`)
            # No fsync at a commit: a checkpoint syncs the WAL, then the file (the recording's
            # at its close, beside, which the process's exit waits for: `settle`), so the
            # recording is on disk when the command ends. The commit's fsync of the run's pages
            # (≈ 6 MB at 10,000 cases) was on the run's last steps' path; beside, it overlaps
            # them. Between a commit and the checkpoint the rows survive the process, not a
            # power cut, as the journal's commits and the documents (never fsynced) do.
            conn.execute("PRAGMA synchronous=NORMAL")
            # (A staged document's rows have no `runs` row yet, by design: `store.staging`.)
            conn.execute("PRAGMA foreign_keys=OFF")
            conn.execute(f"ATTACH DATABASE ? AS {ATTACHED}", (str(journal),))
        except BaseException as e:
            conn.close()
            if isinstance(e, sqlite3.DatabaseError) and not isinstance(e, sqlite3.IntegrityError):
                raise DataError(self.path, "", f"cannot use the run database: {e}") from None
            raise
        return conn

    def staged_document(self, journal_run_id: str, eval_set_id: str) -> str | None:
        """The document id the journaled run staged eval set `eval_set_id`'s rows under
        (`store.staging`), for its resume to take; None: none (or no history)."""
        with self._connect(create=False) as conn:
            return None if conn is None else staged_document(conn, journal_run_id, eval_set_id)

    def drop_unowned_stages(self, journaled: Callable[[], set[str]], seen: set[str] | None = None) -> int:
        """Drops the stages of journaled runs the run journal no longer holds
        (`staging.drop_unowned`); the number dropped."""
        with self._connect(create=False) as conn:
            return 0 if conn is None else drop_unowned(conn, journaled, seen)

    def _record(self, result: EvalSetResult, result_path: str | Path, meta: Mapping[str, Any] | None,
                insert: Callable[[sqlite3.Connection, str], CaseTotals],
                held: sqlite3.Connection | None = None) -> str:
        """Records the document in one transaction: its run row, its cases' rows (`insert`, which
        says what the run's row sums over them, the run's earlier rows deleted first); or in
        `held` (`attached`: the journal attached), where `insert` deletes them as need be,
        closing it (`closed_beside`)."""
        info = {**result.metadata, **_header_meta(result), **(meta or {})}
        duration = info.get("duration_seconds")
        extra = {k: v for k, v in info.items() if k not in _KNOWN_META}
        run_id = result.eval_set_result_id
        run_row = (
            run_id, result.creation_timestamp or time.time(), time.time(), result.eval_set_id,
            info.get("eval_set_file") and str(info["eval_set_file"]), info.get("eval_set_sha256"),
            info.get("command"), info.get("agent"), info.get("agent_model"), None, result.gating,
            1, 0, 0, 0, 0, None, None, None, 0,  # counts: set once the cases are in
            _json(info.get("config")), _json(extra) if extra else None,
            self._stored_path(Path(result_path)), result.run.run_id if result.run else None,
            result.run.model_dump_json() if result.run else None)
        with self._connect(create=True) if held is None else closed_beside(held, self.path) as conn:
            assert conn is not None
            # Foreign keys off for the transaction (the pragma does nothing inside one): every
            # row `insert` adds carries `run_id`, whose run row is inserted first below, so the
            # check of each row's run (a lookup per row, 6% of copying a 10,000-case run's
            # 129,000 rows: bench/README.md, session 19) can never fail; the cascade it would do
            # on the run's deletion is done by the deletes below, of every table that refers to
            # `runs`.
            conn.execute("PRAGMA foreign_keys=OFF")
            # (Deferred with the journal attached, its first statement a write: the history's
            # write lock alone is taken, waited for; an immediate one would lock the journal too.)
            conn.execute("BEGIN IMMEDIATE" if held is None else "BEGIN")
            try:
                conn.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
                for table in CASE_TABLES if held is None else ():
                    conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
                conn.execute(f"INSERT INTO runs VALUES ({', '.join('?' * len(run_row))})", run_row)
                t = insert(conn, run_id)
                conn.execute("DELETE FROM staged WHERE run_id = ?", (run_id,))  # (recorded: no stage)
                statuses = t.statuses
                conn.execute(
                    "UPDATE runs SET judge_model = ?, num_runs = ?, cases_total = ?, cases_passed = ?, "
                    "cases_failed = ?, cases_not_evaluated = ?, duration_seconds = ?, agent_seconds = ?, "
                    "total_tokens = ?, judge_prompt_tokens = ? WHERE run_id = ?",
                    (info.get("judge_model") or (", ".join(sorted(t.judges)) if t.judges else None),
                     max(t.max_runs, 1), sum(statuses.values()), statuses[EvalStatus.PASSED],
                     statuses[EvalStatus.FAILED], statuses[EvalStatus.NOT_EVALUATED],
                     float(duration) if duration is not None else t.agent_seconds, t.agent_seconds,
                     t.total_tokens, t.judge_tokens, run_id))
                conn.execute("COMMIT")
            except sqlite3.IntegrityError as e:
                conn.execute("ROLLBACK")
                raise DataError(result_path, "eval_case_results", f"cannot record run {run_id!r}: "
                                f"{e} (a case, run or metric appears twice?)") from None
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            finally:
                conn.execute("PRAGMA foreign_keys=ON")
        return run_id

    def _row(self, v: tuple[Any, ...]) -> RunRow:
        path = Path(v[12])
        return RunRow(run_id=v[0], created=v[1], eval_set_id=v[2], agent=v[3], agent_model=v[4],
                      judge_model=v[5], num_runs=v[6], cases_total=v[7], cases_passed=v[8],
                      cases_failed=v[9], duration_seconds=v[10], total_tokens=v[11],
                      result_path=path if path.is_absolute() else self.root / path,
                      eval_set_sha256=v[13], gating=v[14], run_group=v[15], cases_not_evaluated=v[16])

    def list_runs(self, limit: int | None = None) -> list[RunRow]:
        """Recorded runs, newest (by creation time) first; at most `limit` (any size) of them."""
        with self._connect(create=False) as conn:
            if conn is None:
                return []
            every = limit is None or limit > 2**63 - 1  # (past SQLite's integers: every run too)
            rows = conn.execute(f"SELECT {_COLUMNS} FROM runs ORDER BY created DESC, rowid DESC "
                                "LIMIT ?", (-1 if every else limit,)).fetchall()
        return [self._row(r) for r in rows]

    def resolve(self, ref: str) -> RunRow:
        """The run named by an id, a unique id prefix, `latest` or `previous` (newest but one).
        An id is a document's (`runs` lists them) or the run's that `eval` prints, which names
        its one document (a run of several eval sets has one each: ambiguous here, and
        `run_documents` gives them). An unknown or ambiguous reference is a DataError naming it."""
        with self._connect(create=False) as conn:
            rows: list[Any] = []
            if conn is not None:
                if ref in ALIASES:
                    rows = conn.execute(f"SELECT {_COLUMNS} FROM runs ORDER BY created DESC, rowid DESC "
                                        "LIMIT 1 OFFSET ?", (ALIASES.index(ref),)).fetchall()
                else:
                    rows = conn.execute(f"SELECT {_COLUMNS} FROM runs WHERE run_id = ?", (ref,)).fetchall()
                    # then a prefix of a document's id, then of the run id `eval` prints (run_group)
                    for column in ("run_id", "run_group") if ref else ():
                        rows = rows or conn.execute(
                            f"SELECT {_COLUMNS} FROM runs WHERE substr({column}, 1, ?) = ? "
                            "ORDER BY created DESC LIMIT 6", (len(ref), ref)).fetchall()
        if not rows:
            what = "no previous run" if ref == "previous" else f"no run {ref!r}"
            raise UnknownRun(self.path, "", f"{what} in the run history")
        if len(rows) > 1:
            ids = ", ".join(r[0] for r in rows[:5]) + (", ..." if len(rows) > 5 else "")
            if len({r[15] for r in rows}) == 1 and rows[0][15] is not None:
                raise DataError(self.path, "", f"run {ref!r} holds {len(rows)} eval sets, a document "
                                f"each: {ids}; name one of them here")
            # Named as `runs` lists them: by the run id `eval` printed, else the document's.
            named = list(dict.fromkeys(r[15] or r[0] for r in rows))
            raise DataError(self.path, "", f"run {ref!r} is ambiguous: it matches "
                            + ", ".join(named[:5]) + (", ..." if len(rows) > 5 else ""))
        return self._row(rows[0])

    def run_documents(self, ref: str) -> list[RunRow]:
        """The documents of the run `ref` names when it is a run of several eval sets, named by
        the id `eval` printed or a unique prefix of it (no document's id starting so): one per
        eval set, in creation order. [] for any other reference (`resolve` takes those)."""
        if ref in ALIASES or not ref:
            return []
        with self._connect(create=False) as conn:
            if conn is None or conn.execute("SELECT 1 FROM runs WHERE substr(run_id, 1, ?) = ? LIMIT 1",
                                            (len(ref), ref)).fetchone() is not None:
                return []
            groups = conn.execute("SELECT DISTINCT run_group FROM runs WHERE substr(run_group, 1, ?) = ? "
                                  "LIMIT 2", (len(ref), ref)).fetchall()
        documents = self.documents(groups[0][0]) if len(groups) == 1 else []
        return documents if len(documents) > 1 else []

    def get(self, ref: str) -> EvalSetResult:
        """The result document of a run (see `resolve` for the accepted references)."""
        return load_result(self.resolve(ref).result_path)

    def summary(self, ref: str, *, not_passed_only: bool = False) -> EvalSetResult:
        """The run's case verdicts and criterion summaries, read from the database alone (fast; the
        document is not loaded, so `eval_case_results` is empty). Enough for `compare`. With
        `not_passed_only`, only the cases that did not pass are read (what `runs show` lists; its
        counts come from the run's row): a 50,000-case run's summaries are 300,000 models."""
        row = self.resolve(ref)
        only = " AND status != ?" if not_passed_only else ""
        args = (row.run_id, int(EvalStatus.PASSED)) if not_passed_only else (row.run_id,)
        with self._connect(create=False) as conn:
            assert conn is not None
            cases = conn.execute(f"SELECT eval_id, runs, status FROM cases WHERE run_id = ?{only} "
                                 "ORDER BY position", args).fetchall()
            # (In the order the stored table's key gave them before the view: by case, criterion.)
            among = " AND eval_id IN (SELECT eval_id FROM cases WHERE run_id = ? AND status != ?)"
            metrics = conn.execute(f"SELECT eval_id, {', '.join(_SUMMARY_FIELDS[:-2])}, status, reason "
                                   f"FROM case_summaries WHERE run_id = ?{among if not_passed_only else ''} "
                                   "ORDER BY eval_id, metric_name", (row.run_id, *args)
                                   if not_passed_only else args).fetchall()
        by_case: dict[str, list[dict[str, Any]]] = {}
        for eval_id, *values in metrics:
            by_case.setdefault(eval_id, []).append(dict(zip(_SUMMARY_FIELDS, values, strict=True)))
        with gc_paused():  # many long-lived models and no cycles: with the GC on, 2.7x the time
            summary = _case_summaries().validate_python(  # one pass through pydantic-core: fastest
                [{"eval_id": e, "runs": n, "final_eval_status": st, "metrics": by_case.get(e, [])}
                 for e, n, st in cases])
        return EvalSetResult(eval_set_result_id=row.run_id, eval_set_id=row.eval_set_id,
                             creation_timestamp=row.created, gating=row.gating, summary=summary)

    def counts(self, ref: str) -> SetCounts:
        """The run's cases by verdict (`verdicts.outcome.set_counts` of its summary), counted
        in the database."""
        row = self.resolve(ref)
        with self._connect(create=False) as conn:
            assert conn is not None
            rows = conn.execute("SELECT status, count(*), max(runs) FROM cases WHERE run_id = ? "
                                "GROUP BY status", (row.run_id,)).fetchall()
        n = {EvalStatus(status): count for status, count, _ in rows}
        return SetCounts(sum(n.values()), n.get(EvalStatus.PASSED, 0), n.get(EvalStatus.FAILED, 0),
                         n.get(EvalStatus.NOT_EVALUATED, 0), max((r[2] for r in rows), default=0))

    def criteria(self, ref: str) -> tuple[list[str], list[str]]:
        """The run's criteria: those that gated some case, and those informational in every
        case, each in the order they first appear so in its case summaries (by case, then
        name)."""
        row = self.resolve(ref)
        with self._connect(create=False) as conn:
            assert conn is not None
            rows = conn.execute(
                "SELECT s.metric_name, min(CASE WHEN s.status != ? THEN c.position END), "
                "min(c.position) FROM case_summaries s JOIN cases c ON c.run_id = s.run_id "
                "AND c.eval_id = s.eval_id WHERE s.run_id = ? GROUP BY s.metric_name",
                (int(EvalStatus.INFORMATIONAL), row.run_id)).fetchall()
        gating = sorted((first, name) for name, first, _ in rows if first is not None)
        informational = sorted((first, name) for name, gated, first in rows if gated is None)
        return [name for _, name in gating], [name for _, name in informational]

    def criterion_means(self, run_ids: list[str]) -> dict[str, dict[str, float]]:
        """Per run, each gating criterion's mean score over its cases (the mean of its case
        summaries' means; informational criteria and unscored cases left out): what the
        history's trend charts draw, from a grouped query instead of each run's summary."""
        out: dict[str, dict[str, float]] = {r: {} for r in run_ids}
        with self._connect(create=False) as conn:
            if conn is None:
                return out
            for i in range(0, len(run_ids), 500):  # under SQLite's bound-parameter limit
                chunk = run_ids[i:i + 500]
                # Averaged in case order whichever way a case's summaries are kept (stored or
                # derived: `case_summaries`), as the stored table's key ordered them: a float
                # sum's last bits depend on its order.
                rows = conn.execute(
                    "SELECT run_id, metric_name, avg(mean) FROM (SELECT run_id, metric_name, mean "
                    f"FROM case_summaries WHERE run_id IN ({', '.join('?' * len(chunk))}) "
                    "AND mean IS NOT NULL AND status != ? ORDER BY run_id, metric_name, eval_id) "
                    "GROUP BY run_id, metric_name", (*chunk, int(EvalStatus.INFORMATIONAL)))
                for run_id, name, mean in rows:
                    out[run_id][name] = mean
        return out

    def case_runs(self, ref: str) -> Runs:
        """Each case run's verdict and gating criteria (score, passed), from the database alone
        (for `compare` and `runs flaky`: the document is not loaded). A case run once has its
        case's verdict; a case run several times has, per run, passed when every gating
        criterion of the run passed (what the runner's verdict is, save an inference error
        whose criteria were all informational); a run with no gating criterion (the agent
        failed first) is a failed run, as in the document."""
        row = self.resolve(ref)
        with self._connect(create=False) as conn:
            assert conn is not None
            cases = conn.execute("SELECT eval_id, runs, status FROM cases WHERE run_id = ? "
                                 "ORDER BY position", (row.run_id,)).fetchall()
            # Informational criteria left out by SQLite (most of a run's rows when it measures
            # tokens and durations: 4 of 6 in the 50,000-case bench); a criterion's passing as 0 / 1.
            metrics = conn.execute("SELECT eval_id, run_index, metric_name, score, status = ? FROM "
                                   "case_metrics WHERE run_id = ? AND status != ? "
                                   "ORDER BY eval_id, run_index",
                                   (int(EvalStatus.PASSED), row.run_id, int(EvalStatus.INFORMATIONAL)))
            with gc_paused():  # (as `summary`)
                return _runs(cases, metrics)

    def details(self, ref: str) -> dict[str, Any]:
        """Every stored column of a run (config and meta parsed from JSON), for display."""
        run_id = self.resolve(ref).run_id
        with self._connect(create=False) as conn:
            assert conn is not None
            cur = conn.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,))
            names = [d[0] for d in cur.description]
            out = dict(zip(names, cur.fetchone(), strict=True))
        for key in ("config_json", "meta_json", "spec_json"):
            if out.get(key):
                out[key[:-5]] = json.loads(out.pop(key))
            else:
                out.pop(key, None)
        return out

    def check(self) -> None:
        """A DataError now if the database exists but cannot be used (corrupt, not a database,
        written by a newer agenteval), so a run does not find out only after it finished; an
        absent database is fine (it is created on first record)."""
        with self._connect(create=False) as conn:
            if conn is not None:
                try:
                    conn.execute("SELECT count(*) FROM runs").fetchone()
                    (verdict,) = conn.execute("PRAGMA quick_check").fetchone()
                except sqlite3.DatabaseError as e:
                    raise DataError(self.path, "", f"cannot use the run database: {e}") from None
                if verdict != "ok":
                    raise DataError(self.path, "", f"the run database is damaged: {verdict}")

    def header(self, ref: str) -> RunSpec | None:
        """The run header recorded with a document (None for documents recorded without one)."""
        run_id = self.resolve(ref).run_id
        with self._connect(create=False) as conn:
            assert conn is not None
            (text,) = conn.execute("SELECT spec_json FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return None if text is None else RunSpec.model_validate_json(text)

    def run_group(self, ref: str) -> str | None:
        """The run (`run_group`: a `RunSpec.run_id`) that `ref` names: its id, a unique prefix
        of it, or `latest` (the newest run); None when the history holds none. A prefix that
        matches several runs is a DataError naming them."""
        with self._connect(create=False) as conn:
            if conn is None:
                return None
            if ref == "latest":
                rows = conn.execute("SELECT run_group FROM runs WHERE run_group IS NOT NULL "
                                    "ORDER BY run_group DESC LIMIT 1").fetchall()
            elif not ref:  # names no run (a prefix of every one)
                rows = []
            else:
                rows = conn.execute("SELECT DISTINCT run_group FROM runs WHERE run_group = ?",
                                    (ref,)).fetchall() or conn.execute(
                    "SELECT DISTINCT run_group FROM runs WHERE substr(run_group, 1, ?) = ? LIMIT 6",
                    (len(ref), ref)).fetchall()
        if len(rows) > 1:
            raise DataError(self.path, "", f"run {ref!r} is ambiguous: it matches "
                            + ", ".join(r[0] for r in rows[:5]) + (", ..." if len(rows) > 5 else ""))
        return rows[0][0] if rows else None

    def remove(self, run_id: str) -> None:
        """Removes one recorded document's rows (not its file)."""
        with self._connect(create=False) as conn:
            if conn is not None:
                conn.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))

    def documents(self, run_group: str) -> list[RunRow]:
        """Every document recorded for one run (its eval sets), in creation order."""
        with self._connect(create=False) as conn:
            if conn is None:
                return []
            rows = conn.execute(f"SELECT {_COLUMNS} FROM runs WHERE run_group = ? "
                                "ORDER BY created, rowid", (run_group,)).fetchall()
        return [self._row(r) for r in rows]



def _runs(cases: list[Any], metrics: Iterable[Any]) -> Runs:
    """`RunStore.case_runs` from its rows."""
    from agenteval.verdicts.paired import RunOutcome  # (see the import of `Runs` above)

    by_run: dict[str, dict[int, dict[str, tuple[float | None, bool]]]] = {}
    # The rows come case by case, a case's run by run (gating criteria alone, passing as 0 / 1):
    # each case's and run's dict is made once, at its first row.
    last: tuple[str, int] | None = None
    run: dict[str, tuple[float | None, bool]] = {}
    for eval_id, run_index, name, score, passed in metrics:
        if (eval_id, run_index) != last:
            last = (eval_id, run_index)
            run = by_run.setdefault(eval_id, {})[run_index] = {}
        run[name] = (score, passed == 1)
    out: Runs = {}
    for eval_id, n, status in cases:
        runs = by_run.get(eval_id, {})
        if n == 1:
            out[eval_id] = {j: RunOutcome(status == EvalStatus.PASSED, m) for j, m in runs.items()} \
                or {0: RunOutcome(status == EvalStatus.PASSED)}
        else:
            # A run with no gating row (the agent failed before any criterion, or every one was
            # informational) has no verdict of its own in the database: it did not pass, as in
            # the document; dropped, it would make 2 of 3 runs read as 2 of 2.
            missing = iter([j for j in range(n + len(runs)) if j not in runs][:max(n - len(runs), 0)])
            out[eval_id] = {j: RunOutcome(bool(m) and all(p for _, p in m.values()), m)
                            for j, m in sorted([*runs.items(), *((j, {}) for j in missing)])}
    return out


__all__ = ["ALIASES", "SCHEMA_VERSION", "RunRow", "RunStore", "UnknownRun", "history_db_path"]
