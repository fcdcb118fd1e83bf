"""The run journal's ownership (one live process per run; a killed one owns nothing), its
batched writes (one connection per run; a kill loses at most the flush window), what resuming
reads, and its pruning (a forgotten run leaves no rows, no lock file and no free pages;
interrupted runs are kept `KEEP_INTERRUPTED_DAYS`)."""

import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agenteval.errors import DataError
from agenteval.schema import EvalCaseResult, RunSpec
from agenteval.store.claim import lock_path
from agenteval.store.journal import FLUSH_CASES, KEEP_INTERRUPTED_DAYS, Journal, RunOwned
from tests.journal_writers import killed, killed_after_window, wal_sizes


def _begin(root: Path, run_id: str = "20250101-000000-aaaaaa") -> Journal:
    journal = Journal(root)
    journal.begin(RunSpec(run_id=run_id, command="eval", started=1.0), "{}", 3)
    journal.flush()  # (the run's writer thread begins it: another process sees it once committed)
    return journal


def test_a_run_has_one_owner_until_released(tmp_path: Path) -> None:
    owner = _begin(tmp_path)
    other = Journal(tmp_path)
    owned = r"run 20250101-000000-aaaaaa is owned by a live process \(pid \d+ on "
    with pytest.raises(RunOwned, match=owned):
        other.claim("20250101-000000-aaaaaa")
    assert [r.status for r in other.runs()] == ["running"]
    owner.release("20250101-000000-aaaaaa")
    assert [r.status for r in other.runs()] == ["interrupted"]
    other.claim("20250101-000000-aaaaaa")  # free now
    other.close()


def test_a_killed_owner_owns_nothing(tmp_path: Path) -> None:
    code = ("import sys, time\nfrom agenteval.schema import RunSpec\n"
            "from agenteval.store.journal import Journal\n"
            f"j = Journal({str(tmp_path)!r})\nj.begin(RunSpec(run_id='r1', command='eval'), '{{}}', 1)\n"
            "j.flush()\nprint('owned', flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "owned"
        with pytest.raises(RunOwned, match=f"pid {proc.pid} on "):
            Journal(tmp_path).claim("r1")
    finally:
        proc.kill()
        proc.wait()
    journal = Journal(tmp_path)
    assert [r.status for r in journal.runs()] == ["interrupted"]  # its lock file is still there
    assert lock_path(tmp_path, "r1").exists()
    journal.claim("r1")
    journal.close()


def test_a_forgotten_run_leaves_nothing(tmp_path: Path) -> None:
    from agenteval.schema import EvalCaseResult
    from agenteval.store import verdict_copy

    journal = _begin(tmp_path)
    journal.append_all("20250101-000000-aaaaaa", [
        EvalCaseResult(eval_id=f"c{i}", eval_set_id="s", run_index=0, final_eval_status=1,
                       overall_eval_metric_results=[], eval_metric_result_per_invocation=[],
                       session_id="x" * 5000) for i in range(200)])
    started = time.monotonic()
    journal.forget("20250101-000000-aaaaaa")
    assert time.monotonic() - started < 5
    # The run and its lock file are gone when `forget` returns; its rows file (and the journal's
    # checkpoint) once `settle` has (see `Journal.forget`).
    assert journal.runs() == [] and not lock_path(tmp_path, "20250101-000000-aaaaaa").exists()
    verdict_copy.settle()
    with sqlite3.connect(journal.path) as conn:
        assert conn.execute("SELECT count(*) FROM journal_cases").fetchone() == (0,)
        assert conn.execute("PRAGMA freelist_count").fetchone() == (0,)
        assert conn.execute("PRAGMA page_size").fetchone() == (4096,)  # (small rows: the rest is in files)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert journal.path.stat().st_size < 50_000  # empty: the schema's few pages
    assert not (tmp_path / ".agenteval" / "journal.rows" / "20250101-000000-aaaaaa.rows").exists()


def test_a_forgotten_runs_checkpoint_is_made_beside_and_waited_for(tmp_path: Path) -> None:
    """The run is gone when `forget` returns; the journal's checkpoint (its syncs) and the
    removal of the run's rows file are made on threads of their own, which `settle` (and the
    process's exit) waits for: then the WAL is empty, the file holds the empty journal's few
    pages and the rows file is gone."""
    from agenteval.store import verdict_copy
    from agenteval.store.journal_rows import rows_path

    verdict_copy.settle()  # (what other tests here left beside)
    run = "20250101-000000-aaaaaa"
    journal = _begin(tmp_path, run)
    journal.append_all(run, [_result(i) for i in range(300)])
    wal = Path(f"{journal.path}-wal")
    assert wal.stat().st_size > 100_000  # (the run's pages are in the WAL, not the file)
    journal.forget(run)
    assert journal.runs() == []
    assert [t.name for t in verdict_copy._closing] == ["agenteval-forget", "agenteval-forget-rows"]
    verdict_copy.settle()
    assert not wal.exists() or wal.stat().st_size == 0
    assert journal.path.stat().st_size < 50_000
    assert not rows_path(tmp_path, run).exists()


def test_a_run_begun_again_after_forgetting_waits_for_its_old_rows_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run forgotten and then begun again by the same process (a finished run's
    `--retry_errors` in a long-lived process) appends to a new rows file: its writer waits for
    the old file's removal beside first, however slow that is (held back here), so no row is
    written into a file about to be unlinked."""
    from agenteval.store import journal as journal_module
    from agenteval.store import verdict_copy
    from agenteval.store.journal_rows import remove, rows_path

    release = threading.Event()

    def held_back(path: Path) -> None:
        release.wait(10)
        remove(path)

    monkeypatch.setattr(journal_module, "remove_rows", held_back)
    run = "20250101-000000-aaaaaa"
    journal = _begin(tmp_path, run)
    journal.append_all(run, [_result(0)])
    journal.forget(run)
    assert rows_path(tmp_path, run).exists()  # (its removal is held back)
    threading.Timer(0.3, release.set).start()
    journal.begin(RunSpec(run_id=run, command="eval", started=1.0), "{}", 3)
    journal.append_all(run, [_result(1)])
    verdict_copy.settle()
    assert journal.finished_keys(run) == {("s", "c1", 0)}
    reader = journal.reader()
    assert reader.kept(run, ("s", "c1", 0)) == _result(1)
    reader.close()
    journal.close()


def _result(i: int, error: str | None = None) -> EvalCaseResult:
    return EvalCaseResult(eval_id=f"c{i}", eval_set_id="s", run_index=0, final_eval_status=1,
                          overall_eval_metric_results=[], eval_metric_result_per_invocation=[],
                          session_id="x", error_message=error)


def test_a_kill_loses_at_most_the_last_half_second(tmp_path: Path) -> None:
    # A real process appends 100 case runs and is SIGKILLed well after the flush window
    # (FLUSH_SECONDS): all 100 are in the journal, though it never flushed or closed.
    killed_after_window(tmp_path, 100, 100)
    journal = Journal(tmp_path)
    assert journal.finished_keys("r1") == {("s", f"c{i}", 0) for i in range(100)}
    assert [(r.status, r.done) for r in journal.runs()] == [("interrupted", 100)]


def test_appends_go_through_one_connection_in_batches(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    journal = _begin(tmp_path)
    opened: list[str] = []
    connect = sqlite3.connect

    def counting(*args: object, **kwargs: object) -> sqlite3.Connection:
        # Only this test's: sqlite3.connect is patched for the whole process, and a history
        # stage thread an earlier test in this worker left running opens its own journal.
        if str(tmp_path) in str(args[0]):
            opened.append(str(args[0]))
        return connect(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite3, "connect", counting)
    commits: list[int] = []
    from agenteval.store import journal_writer

    commit = journal_writer._commit

    def counted(conn: sqlite3.Connection, run_id: str, rows: list[journal_writer.Row],
                verdicts: list[journal_writer.VerdictRow], *rest: Any) -> None:
        commits.append(len(rows))
        commit(conn, run_id, rows, verdicts, *rest)

    monkeypatch.setattr(journal_writer, "_commit", counted)
    for i in range(300):
        journal.append("20250101-000000-aaaaaa", "s", _result(i))
    journal.flush()
    assert opened == []  # the run's writer's connection, opened as the run began: none per append
    assert sum(commits) == 300 and len(commits) <= 300 // FLUSH_CASES + 2
    monkeypatch.undo()
    assert len(journal.finished_keys("20250101-000000-aaaaaa")) == 300
    journal.close()


def test_a_run_is_begun_by_its_writer_thread_before_its_rows(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # The event loop starts a run's cases without waiting for the journal (a new journal's
    # layout is a dozen fdatasyncs): `begin` claims the run and returns, its writer thread makes
    # the journal and the run's row, which a flush waits for, before the run's first rows.
    caller = threading.current_thread()
    threads: list[threading.Thread] = []
    connect = sqlite3.connect

    def recording(*args: object, **kwargs: object) -> sqlite3.Connection:
        threads.append(threading.current_thread())
        return connect(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite3, "connect", recording)
    journal = _begin(tmp_path)
    assert caller.ident not in {t.ident for t in threads}
    journal.append("20250101-000000-aaaaaa", "s", _result(0))
    journal.flush()
    assert threads and caller.ident not in {t.ident for t in threads}
    monkeypatch.undo()
    assert [(r.status, r.done) for r in journal.runs()] == [("running", 1)]
    journal.close()


def test_a_journal_that_cannot_be_read_is_raised_by_begin(tmp_path: Path) -> None:
    # Before any case runs (the writes `begin` queues are made by the writer thread).
    path = tmp_path / ".agenteval" / "journal.sqlite"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database " * 512)
    journal = Journal(tmp_path)
    with pytest.raises(DataError, match=r"journal\.sqlite: cannot use the run journal"):
        journal.begin(RunSpec(run_id="20250101-000000-aaaaaa", command="eval", started=1.0), "{}", 3)
    with pytest.raises(DataError):  # (releasing it reads it too)
        journal.close()


def test_a_run_appended_to_after_its_release_gets_a_new_writer(tmp_path: Path) -> None:
    # `Journal` remembers the writer it appended with last: one ended by a release must not be it.
    run = "20250101-000000-aaaaaa"
    journal = _begin(tmp_path)
    journal.append(run, "s", _result(0))
    journal.release(run)  # its writer commits and ends
    journal.claim(run)
    journal.append(run, "s", _result(1))
    assert journal.finished_keys(run) == {("s", "c0", 0), ("s", "c1", 0)}
    journal.close()


def test_resume_reads_only_which_case_runs_finished(tmp_path: Path) -> None:
    from agenteval.runner.durable import Finished

    journal = _begin(tmp_path)
    journal.append_all("20250101-000000-aaaaaa", [_result(0), _result(1, error="boom"), _result(2)])
    assert journal.finished_keys("20250101-000000-aaaaaa") == {("s", "c0", 0), ("s", "c1", 0), ("s", "c2", 0)}
    ok = journal.finished_keys("20250101-000000-aaaaaa", without_errors=True)
    assert ok == {("s", "c0", 0), ("s", "c2", 0)}
    with sqlite3.connect(journal.path) as conn:  # neither the keys nor the counts read a result
        for query in ("SELECT eval_id, run_index FROM journal_cases WHERE run_id = ? AND error = 0",
                      "SELECT count(eval_id), sum(error) FROM journal_cases WHERE run_id = ?"):
            plan = " ".join(str(r) for r in conn.execute("EXPLAIN QUERY PLAN " + query, ("x",)))
            assert "COVERING INDEX journal_cases_done" in plan, plan
    finished = Finished(journal, "20250101-000000-aaaaaa", ok)
    assert len(finished) == 2 and ("s", "c0", 0) in finished and ("s", "c1", 0) not in finished
    assert finished[("s", "c2", 0)] == _result(2)
    assert finished.get(("s", "c1", 0)) is None
    with pytest.raises(KeyError):
        finished[("s", "c1", 0)]
    journal.close()


def test_interrupted_runs_older_than_the_rule_are_pruned(tmp_path: Path) -> None:
    old, recent = "20250101-000000-aaaaaa", "20250102-000000-bbbbbb"
    journal = _begin(tmp_path, old)
    journal.begin(RunSpec(run_id=recent, command="eval", started=2.0), "{}", 3)
    journal.append_all(old, [_result(0)])
    journal.close()  # both interrupted now
    days = 86400
    with sqlite3.connect(journal.path) as conn:
        conn.execute("UPDATE journal_runs SET updated = ? WHERE run_id = ?",
                     (time.time() - (KEEP_INTERRUPTED_DAYS + 1) * days, old))
        conn.execute("UPDATE journal_runs SET updated = ? WHERE run_id = ?",
                     (time.time() - (KEEP_INTERRUPTED_DAYS - 1) * days, recent))
    again = Journal(tmp_path)
    again.begin(RunSpec(run_id="20250103-000000-cccccc", command="eval", started=3.0), "{}", 3)
    assert sorted(r.run_id for r in again.runs()) == [recent, "20250103-000000-cccccc"]
    assert not lock_path(tmp_path, old).exists()
    with sqlite3.connect(journal.path) as conn:
        assert conn.execute("SELECT count(*) FROM journal_cases").fetchone() == (0,)
    again.close()


def _reframe(root: Path, run: str, key: tuple[str, str, int], row: bytes, digest: str) -> None:
    """Case run `key`'s row and digest replaced (a frame appended to the rows file, named)."""
    from agenteval.store.journal_rows import frame, rows_path

    rows = rows_path(root, run)
    with rows.open("ab") as f:
        at = f.tell()
        f.write(b"".join(frame(key, row, digest)))
    with sqlite3.connect(root / ".agenteval" / "journal.sqlite") as conn:
        conn.execute("UPDATE journal_cases SET row_at = ?, row_size = ? WHERE eval_id = ? AND run_index = ?",
                     (at, rows.stat().st_size - at, key[1], key[2]))


def test_a_kept_case_run_goes_into_the_document_as_its_row_holds_it(tmp_path: Path) -> None:
    from agenteval.store.journal_rows import rows_path
    from agenteval.store.output import place, placed_json, result_json

    run = "20250101-000000-aaaaaa"
    journal = _begin(tmp_path)
    journal.append_all(run, [_result(0), _result(1), _result(2)])
    journal.close()
    rows = rows_path(tmp_path, run)
    assert placed_json(_result(0)) in rows.read_bytes()  # the document's bytes, serialised once
    # The same result spelt otherwise: what the document gets shows where it came from.
    spelt = result_json(_result(0)).replace(b'"run_index": 0', b'"run_index":  0')
    _reframe(tmp_path, run, ("s", "c0", 0), place(spelt), "not a digest")
    with sqlite3.connect(tmp_path / ".agenteval" / "journal.sqlite") as conn:
        # Rows of agentevals before rows files, in SQLite: the document's JSON, and compact JSON.
        older = result_json(_result(1), keep=False).decode().replace('"run_index": 0', '"run_index":  0')
        unplaced = "UPDATE journal_cases SET result_json = ?, row_at = NULL WHERE eval_id = ?"
        conn.execute(unplaced, (older, "c1"))
        conn.execute(unplaced, (_result(2).model_dump_json(), "c2"))
    reader = Journal(tmp_path).reader()
    kept = reader.result(run, ("s", "c0", 0))
    assert kept == _result(0) and result_json(kept) == spelt  # copied, not serialised
    assert reader.kept(run, ("s", "c0", 0)) == _result(0)  # (a digest of another format: parsed)
    old = reader.result(run, ("s", "c1", 0))
    assert old == _result(1) and result_json(old) == older.encode()
    oldest = reader.result(run, ("s", "c2", 0))  # serialised as a document holds it
    assert oldest == _result(2) and result_json(oldest) == result_json(_result(2), keep=False)
    reader.close()


def test_a_kept_case_run_is_read_as_its_digest_and_written_as_its_row(tmp_path: Path) -> None:
    from agenteval.store.output import placed_json, result_json
    from tests.result_builders import case

    run = "20250101-000000-aaaaaa"
    whole = case("c0", {"m": 0.75}, duration=1.5, tokens=30)
    journal = _begin(tmp_path)
    journal.append_all(run, [whole])
    reader = journal.reader()
    kept = reader.kept(run, ("s", "c0", 0))
    assert kept is not None and result_json(kept) == result_json(whole, keep=False)  # the row, as it is
    (turn,) = kept.eval_metric_result_per_invocation  # the digest: not the row parsed
    assert turn.actual_invocation.user_content.parts is None and turn.actual_invocation.duration == 1.5
    assert kept.overall_eval_metric_results == whole.overall_eval_metric_results
    assert reader.result(run, ("s", "c0", 0)) == whole and reader.kept(run, ("s", "c9", 0)) is None
    reader.close()
    # A digest of another format: the row is parsed.
    _reframe(tmp_path, run, ("s", "c0", 0), placed_json(whole, keep=False), '[[1.5,30.0]]\n{"eval_id":"c0"}')
    reader = journal.reader()
    assert reader.kept(run, ("s", "c0", 0)) == whole
    reader.close()
    journal.close()


_OLD_CASES = """CREATE TABLE journal_cases (
        run_id TEXT NOT NULL REFERENCES journal_runs (run_id) ON DELETE CASCADE,
        eval_set_id TEXT NOT NULL, eval_id TEXT NOT NULL, run_index INTEGER NOT NULL,
        status INTEGER NOT NULL, error INTEGER NOT NULL, result_json TEXT NOT NULL,
        PRIMARY KEY (run_id, eval_set_id, eval_id, run_index)) WITHOUT ROWID"""


def test_a_journal_made_before_digests_resumes_its_rows_parsed_and_gains_the_columns(tmp_path: Path) -> None:
    from agenteval.store.journal_file import SCHEMA as _SCHEMA
    from agenteval.store.output import result_json

    run = "20250101-000000-aaaaaa"
    path = tmp_path / ".agenteval" / "journal.sqlite"
    path.parent.mkdir()
    with sqlite3.connect(path) as conn:  # as an agenteval before digests made it and wrote a row
        conn.execute(_SCHEMA[0])
        conn.execute(_OLD_CASES)
        conn.execute(_SCHEMA[2])
        conn.execute("INSERT INTO journal_runs VALUES (?, 1, 1, 'running', NULL, NULL, '{}', 2, ?)",
                     (run, RunSpec(run_id=run, command="eval").model_dump_json()))
        conn.execute("INSERT INTO journal_cases VALUES (?, 's', 'c0', 0, 1, 0, ?)",
                     (run, result_json(_result(0)).decode()))
    journal = Journal(tmp_path)
    reader = journal.reader()
    kept = reader.kept(run, ("s", "c0", 0))
    assert kept == _result(0)  # no digest: parsed whole, as before
    reader.close()
    journal.claim(run)
    journal.append_all(run, [_result(1)])  # the columns were added: new rows are in the rows file
    with sqlite3.connect(path) as conn:
        places = dict(conn.execute("SELECT eval_id, row_at IS NOT NULL FROM journal_cases"))
    assert places == {"c0": 0, "c1": 1}
    assert journal.finished_keys(run) == {("s", "c0", 0), ("s", "c1", 0)}
    reader = journal.reader()
    assert reader.kept(run, ("s", "c0", 0)) == _result(0) and reader.kept(run, ("s", "c1", 0)) == _result(1)
    reader.close()
    journal.forget(run)
    assert journal.runs() == []


def test_forgetting_a_run_keeps_the_other_runs_rows(tmp_path: Path) -> None:
    first, second = "20250101-000000-aaaaaa", "20250102-000000-bbbbbb"
    journal = _begin(tmp_path, first)
    journal.begin(RunSpec(run_id=second, command="eval", started=2.0), "{}", 3)
    journal.append_all(first, [_result(0), _result(1)])
    journal.append_all(second, [_result(2)])
    journal.forget(first)  # not the journal's only run: its rows alone are deleted
    assert journal.finished_keys(first) == set() and journal.finished_keys(second) == {("s", "c2", 0)}
    journal.forget(second)  # the only one now: every row dropped at once
    with sqlite3.connect(journal.path) as conn:
        assert conn.execute("SELECT count(*) FROM journal_cases").fetchone() == (0,)
    assert journal.runs() == []


def test_rows_live_in_a_file_that_goes_with_the_run(tmp_path: Path) -> None:
    from agenteval.store import verdict_copy
    from agenteval.store.journal_rows import rows_path
    from agenteval.store.output import placed_json

    run = "20250101-000000-aaaaaa"
    journal = _begin(tmp_path)
    journal.append_all(run, [_result(i) for i in range(3)])
    rows = rows_path(tmp_path, run)
    with sqlite3.connect(journal.path) as conn:  # SQLite holds keys and places, not the rows
        assert conn.execute("SELECT max(length(result_json)), count(digest) FROM journal_cases").fetchone() \
            == (0, 0)
    assert rows.read_bytes().count(placed_json(_result(1), keep=False)) == 1
    # Cut mid-row (the tail a lost power may leave): that case run is not finished, and appended
    # again it lands after the torn bytes and reads back whole.
    size = rows.stat().st_size
    with rows.open("r+b") as f:
        f.truncate(size - 100)
    assert journal.finished_keys(run) == {("s", "c0", 0), ("s", "c1", 0)}
    journal.append_all(run, [_result(2)])
    assert journal.finished_keys(run) == {("s", f"c{i}", 0) for i in range(3)}
    reader = journal.reader()
    assert [reader.kept(run, ("s", f"c{i}", 0)) for i in range(3)] == [_result(i) for i in range(3)]
    reader.close()
    journal.forget(run)
    verdict_copy.settle()  # (the file is removed beside: `Journal.forget`)
    assert not rows.exists()


def test_a_rows_file_that_cannot_be_written_is_an_error_naming_it(tmp_path: Path) -> None:
    from agenteval.errors import DataError
    from agenteval.store.journal_rows import rows_path

    run = "20250101-000000-aaaaaa"
    journal = _begin(tmp_path)
    rows_path(tmp_path, run).mkdir(parents=True)  # (a directory: as unwritable as a full disk)
    with pytest.raises(DataError, match=r"\.rows: cannot write the run journal's rows: Is a directory"):
        journal.append_all(run, [_result(0)])
    assert journal.finished_keys(run) == set()  # nothing committed that names unwritten rows
    journal.close()


def test_an_orphaned_rows_file_is_removed_when_a_run_begins(tmp_path: Path) -> None:
    import os

    from agenteval.store.journal import ORPHAN_SECONDS
    from agenteval.store.journal_rows import rows_path

    journal = _begin(tmp_path)
    orphan, recent = rows_path(tmp_path, "gone"), rows_path(tmp_path, "just-begun")
    orphan.parent.mkdir(parents=True, exist_ok=True)
    orphan.write_bytes(b"x")
    recent.write_bytes(b"x")
    old = time.time() - ORPHAN_SECONDS - 10
    os.utime(orphan, (old, old))
    journal.begin(RunSpec(run_id="20250102-000000-bbbbbb", command="eval", started=2.0), "{}", 3)
    journal.flush()  # (the run's writer thread begins it)
    assert not orphan.exists() and recent.exists()
    journal.close()


def test_the_writer_binds_only_plain_values_and_keeps_every_null_and_zero(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every value the writer binds is an exact `int`, `float` or `str` (sqlite3 sends None and
    `bytes` through its adapter look-up, thousands of instructions each: the NULLs are bound as ""
    and made NULL again in SQL), and the journal's rows still hold each None as NULL and each
    0.0, 0 and "" as it is."""
    from agenteval.store import journal_writer
    from agenteval.store.kept import verdict_row
    from agenteval.verdicts.aggregate import summarise_case
    from agenteval.verdicts.outcome import CaseOutcome
    from tests.result_builders import case

    bound: list[Any] = []
    insert = journal_writer._insert

    def recording(conn: sqlite3.Connection, sql: str, rows: Any, shared: tuple[Any, ...] = ()) -> None:
        bound.extend(v for row in (shared, *rows) for v in row)
        insert(conn, sql, rows, shared)

    monkeypatch.setattr(journal_writer, "_insert", recording)
    runs = {"e": [case("e", {"none": None, "zero": 0.0}, duration=None)],  # one run: no summary rows
            "r": [case("r", {"none": None, "zero": 0.0, "one": 1.0}, run_index=i, duration=0.0, tokens=0)
                  for i in range(2)]}  # two runs: summary rows, a mean of None and a std of 0.0
    outcomes = [CaseOutcome("s", "mean", summarise_case(k, rs, "mean", False), rs) for k, rs in runs.items()]
    journal = _begin(tmp_path)
    run = "20250101-000000-aaaaaa"
    for position, outcome in enumerate(outcomes):
        for r in outcome.runs:
            journal.append(run, "s", r)
        journal.append_verdict(run, outcome, position)
    journal.flush(run)
    assert bound and {type(v) for v in bound} <= {int, float, str}
    rows = [verdict_row(run, o, i) for i, o in enumerate(outcomes)]
    conn = sqlite3.connect(journal.path)
    verdicts = conn.execute("SELECT eval_id, seconds, tokens, summary FROM journal_verdicts "
                            "ORDER BY position")
    assert verdicts.fetchall() == [(v[2], v[6], v[7], b"") for v in rows]
    metrics = conn.execute("SELECT run_index, metric_name, score, threshold, status FROM journal_metrics "
                           "ORDER BY rowid").fetchall()
    assert metrics == [m for v in rows for m in v[14]] and (None in {m[2] for m in metrics})
    summaries = conn.execute("SELECT * FROM journal_summaries ORDER BY rowid").fetchall()
    assert [s[2:] for s in summaries] == [s for v in rows for s in v[15]] and summaries
    assert any(None in s for s in summaries) and any(0.0 in s[4:] for s in summaries)
    conn.close()
    journal.close()


def test_a_held_connection_leaves_a_killed_runs_wal_unmerged_until_it_is_forgotten(tmp_path: Path) -> None:
    # A killed run leaves its WAL unmerged, and SQLite's last connection to close merges it (the
    # pages of rows `forget` deletes once the run is recorded): with `hold_wal`, the look-ups'
    # closes copy nothing into the file; `forget` deletes the rows, then merges what is left.
    from agenteval.store.verdict_copy import settle

    killed(tmp_path, 400, 300)
    journal = Journal(tmp_path)
    before = wal_sizes(journal.path)
    assert before[1] > 4 * before[0]  # (the run's rows are in the WAL, not in the file)
    journal.hold_wal()
    assert [r.run_id for r in journal.runs()] == ["r1"]
    assert journal.finished_keys("r1") == {("s", f"c{i}", 0) for i in range(300)}
    assert wal_sizes(journal.path) == before  # nothing merged
    journal.claim("r1")
    journal.forget("r1")
    settle()
    assert journal.runs() == [] and wal_sizes(journal.path)[1] == 0
    journal.close()
