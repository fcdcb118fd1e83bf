"""A run's recording begun while it goes on (`RunStore.begin_copy`, `store.kept_copy`): a resume's
as it starts, a fresh run's once its end is near; the told cases' rows copied in a transaction
held open while the run goes on (again as more are told, each time from a fresh snapshot of the
journal), finished by the recording with the cases told since; the same rows as a recording made
at the end, none visible before, the journal's writer never blocked, and the history's lock given
up when the run does not come back in time."""

from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import ClassVar

import pytest

from agenteval.schema import EvalSetResult, RunSpec
from agenteval.store import kept_copy
from agenteval.store.db import RunStore
from agenteval.store.history import save_result
from agenteval.store.journal import Journal
from agenteval.store.record import tidy
from agenteval.store.verdict_copy import ATTACHED, closed_beside, settle
from tests.result_builders import case
from tests.store.test_verdict_copy import OUTCOMES, RUN, SHELL, _from_python, _history, _journaled, _outcome


def test_a_recording_begun_early_has_the_rows_of_one_made_at_the_end(tmp_path: Path) -> None:
    first = [_outcome([case(f"c{i}", {"m": 0.2, "other": 1.0})]) for i in range(3)]
    journal = _journaled(tmp_path / "j", first)
    store = RunStore(tmp_path / "copied")
    held = store.begin_copy(journal.path, RUN, "s", "doc")
    assert held.told == 3
    # The run goes on: its writer commits to the journal while the copy is held (it would wait
    # for the lock, then fail, if the held transaction had locked the attached journal), a kept
    # case is told again (its runs retried) and more cases are told.
    retold = _outcome([case("c1", {"m": 0.9})])
    journal.append_all(RUN, retold.runs, "s")
    journal.append_verdict(RUN, retold, 1)
    later = OUTCOMES[:3]
    for place, outcome in enumerate(later, start=3):
        journal.append_all(RUN, outcome.runs, "s")
        journal.append_verdict(RUN, outcome, place)
    journal.flush(RUN)
    assert store.list_runs() == []  # nothing of the run is visible before its recording ends
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("SELECT count(*) FROM cases").fetchone() == (0,)
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json", held=held)
    assert _history(store) == _from_python(tmp_path / "python", [first[0], retold, first[2], *later])
    journal.close()


def test_each_row_of_a_recording_begun_early_finds_its_verdict_by_index(tmp_path: Path) -> None:
    """A bound on the rows' `told` number must not turn the join around (SQLite looked the verdicts
    up by the bound and scanned every row for each: minutes for a 10,000-case run)."""
    journal = _journaled(tmp_path / "j", OUTCOMES)
    store = RunStore(tmp_path / "copied")
    statements: list[str] = []
    held = store.begin_copy(journal.path, RUN, "s", "doc")
    held.conn.rollback()
    held.conn.set_trace_callback(statements.append)
    held.conn.execute("BEGIN")
    kept = kept_copy_rows(held.conn)
    joins = [s for s in statements if s.startswith("INSERT") and " JOIN " in s]
    assert len(joins) == 2 and kept
    for statement in joins:
        plan = [row[3] for row in held.conn.execute(f"EXPLAIN QUERY PLAN {statement}")]
        assert any("journal_verdicts_told (run_id=? AND told=?)" in step for step in plan), plan
    held.rollback()
    journal.close()


def kept_copy_rows(conn: sqlite3.Connection) -> int:
    from agenteval.store.verdict_copy import copy_kept

    return copy_kept(conn, "doc", RUN, "s")


def test_a_copy_not_taken_in_time_is_rolled_back_and_other_writers_go_on(tmp_path: Path) -> None:
    journal = _journaled(tmp_path / "j", OUTCOMES[:2])
    copy = kept_copy.start(tmp_path / "h", journal.path, RUN, "s", "doc", hold=0.2)
    started = time.monotonic()
    copy.wait()  # (its thread ends once the hold is over)
    assert time.monotonic() - started < 10
    assert kept_copy.take(tmp_path / "h", "doc") is None
    store = RunStore(tmp_path / "h")
    with sqlite3.connect(store.path, timeout=0.5) as conn:  # the write lock is free again
        conn.execute("BEGIN IMMEDIATE")
        assert conn.execute("SELECT count(*) FROM cases").fetchone() == (0,)
        conn.rollback()
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")  # recorded as before
    assert _history(store) == _from_python(tmp_path / "python", OUTCOMES[:2])
    journal.close()


def test_a_copy_taken_is_finished_by_the_recording_and_a_dropped_one_leaves_nothing(tmp_path: Path) -> None:
    journal = _journaled(tmp_path / "j", OUTCOMES[:2])
    dropped = kept_copy.start(tmp_path / "h", journal.path, RUN, "s", "doc")
    kept_copy.drop(dropped)  # (its run failed)
    dropped.wait()
    assert kept_copy.take(tmp_path / "h", "doc") is None
    store = RunStore(tmp_path / "h")
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("SELECT count(*) FROM cases").fetchone() == (0,)
    copy = kept_copy.start(tmp_path / "h", journal.path, RUN, "s", "doc")
    held = kept_copy.take(tmp_path / "h", "doc")
    assert held is not None and held.told == 2
    journal.append_all(RUN, OUTCOMES[2].runs, "s")
    journal.append_verdict(RUN, OUTCOMES[2], 2)
    journal.flush(RUN)
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json", held=held)
    copy.wait()
    assert _history(store) == _from_python(tmp_path / "python", OUTCOMES[:3])
    with sqlite3.connect(store.path) as conn:  # the held connection let the journal go
        assert ATTACHED not in {row[1] for row in conn.execute("PRAGMA database_list")}
    journal.close()


def test_a_copy_of_another_document_is_not_used(tmp_path: Path) -> None:
    journal: Journal = _journaled(tmp_path / "j", OUTCOMES[:2])
    store = RunStore(tmp_path / "h")
    held = store.begin_copy(journal.path, RUN, "s", "another")
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json", held=held)  # rolled back
    assert _history(store) == _from_python(tmp_path / "python", OUTCOMES[:2])
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("SELECT count(*) FROM cases WHERE run_id = 'another'").fetchone() == (0,)
    journal.close()


def _locked(store: RunStore) -> bool:
    """Whether another writer of the history would have to wait now."""
    with closing(sqlite3.connect(store.path, timeout=0, isolation_level=None)) as conn:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            assert "locked" in str(e)
            return True
        conn.execute("ROLLBACK")
        return False


def test_each_further_copy_reads_the_journal_as_it_is_then(tmp_path: Path) -> None:
    first = [_outcome([case(f"c{i}", {"m": 0.2})]) for i in range(3)]
    journal = _journaled(tmp_path / "j", first)
    store = RunStore(tmp_path / "copied")
    held = store.begin_copy(journal.path, RUN, "s", "doc")
    told = []
    for place, outcome in enumerate([*OUTCOMES[:2], _outcome([case("c1", {"m": 0.9})])], start=3):
        journal.append_all(RUN, outcome.runs, "s")
        journal.append_verdict(RUN, outcome, 1 if outcome.eval_id == "c1" else place)
        journal.flush(RUN)
        assert held.more()  # (a schema of the journal not read before: what was told since)
        told.append(held.told)
    assert told == [4, 5, 6]
    assert held.conn.execute("SELECT count(*) FROM cases").fetchone() == (5,)  # (c1's rows replaced)
    assert store.list_runs() == []
    journal.append_all(RUN, OUTCOMES[2].runs, "s")
    journal.append_verdict(RUN, OUTCOMES[2], 5)
    journal.flush(RUN)
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json", held=held)
    retold = _outcome([case("c1", {"m": 0.9})])
    assert _history(store) == _from_python(tmp_path / "python", [first[0], retold, first[2], *OUTCOMES[:3]])
    journal.close()


def test_a_fresh_runs_copy_begins_near_its_end_and_no_reader_sees_it_before_it_ends(tmp_path: Path) -> None:
    outcomes = [_outcome([case(f"c{i}", {"m": i / 40, "other": 1.0})]) for i in range(40)]
    journal = Journal(tmp_path / "h")
    journal.begin(RunSpec(run_id=RUN, command="eval", started=1.0), "{}", len(outcomes))
    journal.flush(RUN)
    store = RunStore(tmp_path / "h")
    earlier = EvalSetResult(eval_set_result_id="earlier", eval_set_id="s")
    store.record_outcomes(earlier, [], tmp_path / "e.json")  # (a history with a run in it)
    # Begun once the run's remaining cases are expected to take at most hold / 2 = 1.5 s: after
    # about 0.5 s of a 2 s run; not at its start.
    copy = kept_copy.start(tmp_path / "h", journal.path, RUN, "s", "doc", hold=3.0, kept=False)
    locked_at = []
    for place, outcome in enumerate(outcomes):
        journal.append_all(RUN, outcome.runs, "s")
        journal.append_verdict(RUN, outcome, place)
        journal.flush(RUN)
        time.sleep(0.05)
        if _locked(store):
            locked_at.append(place)
        with sqlite3.connect(store.path) as reader:  # a reader during the run sees nothing of it
            assert reader.execute("SELECT count(*) FROM cases WHERE run_id = 'doc'").fetchone() == (0,)
        assert [r.run_id for r in store.list_runs()] == ["earlier"]
    assert locked_at and 0 < locked_at[0] < 35, locked_at  # (begun before the run's end)
    held = kept_copy.take(tmp_path / "h", "doc")
    assert held is not None and held.told > locked_at[0]  # (copied more while the run went on)
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json", held=held)
    copy.wait()
    store.remove("earlier")
    assert _history(store) == _from_python(tmp_path / "python", outcomes)
    journal.close()


def test_a_fresh_runs_copy_waits_while_its_end_is_far_and_then_leaves_nothing(tmp_path: Path) -> None:
    journal = _journaled(tmp_path / "h", OUTCOMES[:2])  # (2 of its 100 case runs: no progress after)
    store = RunStore(tmp_path / "h")
    copy = kept_copy.start(tmp_path / "h", journal.path, RUN, "s", "doc", hold=0.2, kept=False)
    time.sleep(4 * kept_copy.POLL)
    assert not store.path.exists() or not _locked(store)
    assert kept_copy.take(tmp_path / "h", "doc") is None  # (not begun: recorded at the end, as before)
    copy.wait()
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    assert _history(store) == _from_python(tmp_path / "python", OUTCOMES[:2])
    journal.close()


def test_a_fresh_runs_progress_is_counted_by_its_writer_here_after_the_first_look(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the first look reads the journal: while the run's writer is in this process, the rows
    it is given since are counted there (queued ones too), with no connection to the journal."""
    journal = _journaled(tmp_path / "h", OUTCOMES[:2])
    rate = kept_copy._Rate(journal.path, RUN)
    assert rate.left() is None  # (the first look: no rate yet)

    def refused(*args: object, **kwargs: object) -> sqlite3.Connection:
        raise sqlite3.OperationalError("the journal was read again")

    monkeypatch.setattr(kept_copy.sqlite3, "connect", refused)
    time.sleep(0.01)
    journal.append_all(RUN, OUTCOMES[2].runs, "s")  # (queued, not flushed)
    left = rate.left()
    assert left is not None and left > 0  # 3 of 100 journaled: 97 left, at the rate since the first
    monkeypatch.undo()
    journal.close()
    rate.left()  # the writer closed: the journal is read again
    monkeypatch.setattr(kept_copy.sqlite3, "connect", refused)
    assert rate.left() is None


class _Closes(sqlite3.Connection):
    """A connection that notes the thread that closed it."""

    closed_by: ClassVar[list[str]] = []

    def close(self) -> None:
        self.closed_by.append(threading.current_thread().name)
        super().close()


def test_a_held_recording_is_closed_beside_once_committed_and_at_once_when_it_failed(tmp_path: Path) -> None:
    failed = sqlite3.connect(tmp_path / "a.sqlite", factory=_Closes, check_same_thread=False)
    with pytest.raises(RuntimeError), closed_beside(failed):
        raise RuntimeError("the recording failed")
    assert _Closes.closed_by == [threading.current_thread().name]  # (at once: nothing to wait for)
    committed = sqlite3.connect(tmp_path / "b.sqlite", factory=_Closes, check_same_thread=False)
    with closed_beside(committed):
        committed.execute("CREATE TABLE t (x)")
    settle()
    assert _Closes.closed_by[1:] == ["agenteval-history-close"]
    # A held recording: its connection checkpoints nothing at commit, nor syncs the WAL there
    # (synchronous NORMAL); its close, beside, checkpoints (syncing the WAL, then the file), and
    # `settle` (the process's exit too) waits for it.
    journal = _journaled(tmp_path / "j", OUTCOMES[:2])
    store = RunStore(tmp_path / "h")
    held = store.begin_copy(journal.path, RUN, "s", "doc")
    assert held.conn.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
    assert held.conn.execute("PRAGMA synchronous").fetchone() == (1,)
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json", held=held)
    assert [r.run_id for r in store.list_runs()] == ["doc"]  # committed: visible at once
    settle()
    with pytest.raises(sqlite3.ProgrammingError):
        held.conn.execute("SELECT 1")
    assert not Path(f"{store.path}-wal").exists()  # (its close checkpointed the history)
    journal.close()


def test_tidy_gives_a_held_copy_up_before_it_records_a_lost_document(tmp_path: Path) -> None:
    """The held copy's write lock would hold tidy's own recording up until `HOLD` ran out."""
    root = tmp_path / "h"
    journal = _journaled(root, OUTCOMES[:2])
    kept_copy.start(root, journal.path, RUN, "s", "doc")
    held = kept_copy.take(root, "doc")
    assert held is not None and _locked(RunStore(root))
    save_result(root, EvalSetResult(eval_set_result_id="lost", eval_set_id="s"))  # (written, never recorded)
    given_up: list[str] = []

    def give_up() -> None:
        given_up.append("held")
        held.rollback()

    tidy(root, before_writing=give_up)
    assert given_up == ["held"] and [r.run_id for r in RunStore(root).list_runs()] == ["lost"]
    tidy(root, before_writing=lambda: given_up.append("again"))  # nothing lost: nothing written
    assert given_up == ["held"]
    journal.close()


def test_a_further_copy_reads_only_the_rows_appended_since_the_last(tmp_path: Path) -> None:
    """The journal's metric and summary rows have no index: each further copy reads those after
    the run's last ones it copied from (a range of rowids), not every row of the run again; the
    bound is the run's own rows, so another run's rows coming and going in between lose none."""
    root = tmp_path / "h"
    journal = _journaled(root, OUTCOMES[:3])
    store = RunStore(root)
    held = store.begin_copy(journal.path, RUN, "s", "doc")
    other = Journal(root)  # (another process's run in the same journal: rows after this run's)
    other.begin(RunSpec(run_id="other", command="eval", started=2.0), "{}", 10)
    for place, outcome in enumerate(OUTCOMES):
        other.append_all("other", outcome.runs, "s")
        other.append_verdict("other", outcome, place)
    other.release("other")
    assert held.more()  # (nothing of this run told since)
    with closing(sqlite3.connect(journal.path)) as conn, conn:  # its rows gone (as `forget` deletes them)
        for table in ("journal_metrics", "journal_summaries"):
            conn.execute(f"DELETE FROM {table} WHERE run_id = 'other'")
    statements: list[str] = []
    held.conn.set_trace_callback(statements.append)
    for place, outcome in enumerate(OUTCOMES[3:], start=3):
        journal.append_all(RUN, outcome.runs, "s")
        journal.append_verdict(RUN, outcome, place)
    journal.flush(RUN)
    assert held.more()
    held.conn.set_trace_callback(None)
    joins = [s for s in statements if s.startswith("INSERT") and " JOIN " in s]
    assert len(joins) == 2
    for statement in joins:
        plan = [row[3] for row in held.conn.execute(f"EXPLAIN QUERY PLAN {statement}")]
        assert any("INTEGER PRIMARY KEY (rowid>?)" in step for step in plan), plan
        assert any("journal_verdicts_told (run_id=? AND told=?)" in step for step in plan), plan
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json", held=held)
    assert _history(store) == _from_python(tmp_path / "python", OUTCOMES)
    journal.close()


def test_a_held_recordings_sums_are_added_as_it_copies_and_are_the_python_recordings(tmp_path: Path) -> None:
    """The run's row's sums (agent seconds and tokens in document order, whose last bits depend on
    that order; counts by status, judge tokens) are summed copy by copy; the recording's end
    reads only the verdicts told since the last copy, and sums every verdict again when those it
    summed are no longer the set's (a verdict gone since, or told again)."""
    seconds = [1e16, 1.0, -1e16, 1.0, 0.1, 0.2, 0.3]  # (summed in another order: another float)
    outcomes = [_outcome([case(f"c{i}", {"m": i / 10}, duration=s, tokens=i)]) for i, s in enumerate(seconds)]
    journal = _journaled(tmp_path / "j", outcomes[:2])
    store = RunStore(tmp_path / "copied")
    held = store.begin_copy(journal.path, RUN, "s", "doc")
    for place in range(2, 5):
        journal.append_all(RUN, outcomes[place].runs, "s")
        journal.append_verdict(RUN, outcomes[place], place)
        journal.flush(RUN)
        assert held.more()
    assert held.summed is not None and held.summed.next == 5
    assert held.summed.totals.agent_seconds == sum(seconds[:5]) and held.summed.totals.total_tokens == 10
    for place in (5, 6):
        journal.append_all(RUN, outcomes[place].runs, "s")
        journal.append_verdict(RUN, outcomes[place], place)
    journal.flush(RUN)
    statements: list[str] = []
    held.conn.set_trace_callback(statements.append)
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json", held=held)
    assert _history(store) == _from_python(tmp_path / "python", outcomes)
    # (The end read the verdicts told after the last copy only: no whole-set sum, no GROUP BY.)
    assert not any("GROUP BY status" in s for s in statements), statements
    journal.close()

    # A verdict summed, then gone (its case's run appended again by a resume, not told again yet)
    # and told again: the end sums every verdict, in document order.
    journal = _journaled(tmp_path / "j2", outcomes)
    held = store.begin_copy(journal.path, RUN, "s", "doc")
    assert held.summed is not None and held.summed.next == 7
    with sqlite3.connect(journal.path) as conn:  # (as a stale verdict is deleted, then told anew)
        conn.execute("UPDATE journal_verdicts SET told = told + 100, seconds = 2.5 WHERE eval_id = 'c3'")
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json", held=held)
    with sqlite3.connect(store.path) as conn:
        (agent_seconds,) = conn.execute("SELECT agent_seconds FROM runs").fetchone()
    assert agent_seconds == sum([*seconds[:3], 2.5, *seconds[4:]])
    journal.close()
