"""A run's case rows staged in the history as it goes (`store.kept_copy`, a thread over
`store.staging`): committed stage by stage while the run goes on, never seen by a reader, the
history's write lock held only while a stage copies, the journal not touched before it holds the
run; stopped by the recording, which adds the rest; a failed run's stage left for its resume."""

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
from agenteval.store.journal import Journal
from agenteval.store.verdict_copy import closed_beside, settle
from tests.result_builders import case
from tests.store.test_verdict_copy import OUTCOMES, RUN, SHELL, _from_python, _history, _journaled, _outcome


def _cases(store: RunStore) -> int:
    with closing(sqlite3.connect(store.path)) as conn:
        return int(conn.execute("SELECT count(*) FROM cases WHERE run_id = 'doc'").fetchone()[0])


def _lock_free(store: RunStore) -> bool:
    """Whether another writer gets the history's write lock within 0.5 s."""
    with closing(sqlite3.connect(store.path, timeout=0.5, isolation_level=None)) as conn:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return False
        conn.execute("ROLLBACK")
        return True


def test_a_runs_rows_are_staged_as_it_goes_unseen_and_the_recording_adds_the_rest(tmp_path: Path) -> None:
    outcomes = [_outcome([case(f"c{i}", {"m": i / 30, "other": 1.0})]) for i in range(30)]
    root = tmp_path / "h"
    store = RunStore(root)
    earlier = EvalSetResult(eval_set_result_id="earlier", eval_set_id="s")
    store.record_outcomes(earlier, [], tmp_path / "e.json")
    # Begun before the journal holds the run: it waits for it, and does not make the journal's file.
    copy = kept_copy.start(root, Journal(root).path, RUN, "s", "doc", every=0.05)
    time.sleep(0.2)
    assert not Journal(root).path.exists()
    journal = Journal(root)
    journal.begin(RunSpec(run_id=RUN, command="eval", started=1.0), "{}", len(outcomes))
    seen = []
    for place, outcome in enumerate(outcomes):
        journal.append_all(RUN, outcome.runs, "s")
        journal.append_verdict(RUN, outcome, place)
        journal.flush(RUN)
        time.sleep(0.03)
        seen.append(_cases(store))  # committed, stage by stage
        assert [r.run_id for r in store.list_runs()] == ["earlier"]  # yet no reader sees the run
        assert _lock_free(store)  # (the lock is held only while a stage copies)
    assert 0 < seen[15] < 30 and seen == sorted(seen), seen
    kept_copy.take(root, "doc")  # (stopped: no stage after it)
    assert 0 < copy.told <= 30
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    store.remove("earlier")
    assert _history(store) == _from_python(tmp_path / "python", outcomes)
    journal.close()


def test_a_failed_runs_stage_stays_for_its_resume_which_takes_its_document_id(tmp_path: Path) -> None:
    root = tmp_path / "h"
    journal = _journaled(root, OUTCOMES[:3])
    copy = kept_copy.start(root, journal.path, RUN, "s", "doc", every=0.05)
    deadline = time.monotonic() + 10
    while copy.told < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    kept_copy.drop(copy)  # (its run failed)
    kept_copy.take(root, "doc")  # (forgotten: nothing to stop)
    store = RunStore(root)
    assert _cases(store) == 3 and store.list_runs() == []
    assert kept_copy.staged_document(root, RUN, "s") == "doc"
    resumed = kept_copy.start(root, journal.path, RUN, "s", "doc", every=0.05)
    for place, outcome in enumerate(OUTCOMES[3:], start=3):
        journal.append_all(RUN, outcome.runs, "s")
        journal.append_verdict(RUN, outcome, place)
    journal.flush(RUN)
    kept_copy.take(root, "doc")
    assert resumed.told in range(len(OUTCOMES) + 1)  # (its stages, those that came before the stop)
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    assert _history(store) == _from_python(tmp_path / "python", OUTCOMES)
    journal.close()


def test_a_runs_progress_is_counted_by_its_writer_here_after_the_first_look(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the first look reads the journal: while the run's writer is in this process, the rows
    it is given since are counted there (queued ones too), with no connection to the journal."""
    journal = _journaled(tmp_path / "h", OUTCOMES[:2])
    rate = kept_copy._Rate(journal.path, RUN)
    assert rate.left() is None and rate.seen  # (the first look: no rate yet)

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


def test_a_recording_is_closed_beside_once_committed_and_at_once_when_it_failed(tmp_path: Path) -> None:
    failed = sqlite3.connect(tmp_path / "a.sqlite", factory=_Closes, check_same_thread=False)
    with pytest.raises(RuntimeError), closed_beside(failed, tmp_path / "a.sqlite"):
        raise RuntimeError("the recording failed")
    assert _Closes.closed_by == [threading.current_thread().name]  # (at once: nothing to wait for)
    committed = sqlite3.connect(tmp_path / "b.sqlite", factory=_Closes, check_same_thread=False)
    with closed_beside(committed, tmp_path / "b.sqlite"):
        committed.execute("CREATE TABLE t (x)")
    settle()
    assert _Closes.closed_by[1:] == ["agenteval-history-close"]
    # A recording's connection checkpoints nothing at commit, nor syncs the WAL there
    # (synchronous NORMAL); its close, beside, checkpoints (syncing the WAL, then the file), and
    # `settle` (the process's exit too) waits for it. A run's stages' connection checkpoints
    # as its WAL grows.
    journal = _journaled(tmp_path / "j", OUTCOMES[:2])
    store = RunStore(tmp_path / "h")
    for checkpoints, pages in ((False, 0), (True, 1000)):
        with closing(store.attached(journal.path, checkpoints=checkpoints)) as conn:
            assert conn.execute("PRAGMA wal_autocheckpoint").fetchone() == (pages,)
            assert conn.execute("PRAGMA synchronous").fetchone() == (1,)
            assert conn.execute("PRAGMA foreign_keys").fetchone() == (0,)
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    assert [r.run_id for r in store.list_runs()] == ["doc"]  # committed: visible at once
    settle()
    assert not Path(f"{store.path}-wal").exists()  # (its close checkpointed the history)
    journal.close()


def test_the_stages_end_once_the_runs_writer_here_is_gone_or_the_run_has_ended(tmp_path: Path) -> None:
    """Never taken (the run is not recorded), the stages still end with the run: once its
    journal writer in this process, seen, is gone (the run released, forgotten or closed), or
    once told the run ended (`end`), after a last stage that holds every verdict committed."""
    root = tmp_path / "h"
    journal = _journaled(root, OUTCOMES[:2])
    copy = kept_copy.start(root, journal.path, RUN, "s", "doc", every=0.05)
    deadline = time.monotonic() + 30
    while copy.told < 2 and time.monotonic() < deadline:  # (staged: the writer seen, its count watched)
        time.sleep(0.02)
    for place, outcome in enumerate(OUTCOMES[2:], start=2):
        journal.append_all(RUN, outcome.runs, "s")
        journal.append_verdict(RUN, outcome, place)
    journal.close()  # (commits, and the writer goes)
    copy._thread.join(30)  # (a bound: it ends at once when it ends at all)
    assert not copy._thread.is_alive() and copy.told == len(OUTCOMES) and not kept_copy._copies
    again = kept_copy.start(root, journal.path, RUN, "s", "doc", every=60)  # (no writer here now)
    kept_copy.end(again)
    again._thread.join(30)
    assert not again._thread.is_alive() and not kept_copy._copies
    assert _cases(RunStore(root)) == len(OUTCOMES)
