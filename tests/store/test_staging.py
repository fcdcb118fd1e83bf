"""A journaled run's case rows staged in the history as it goes (`store.staging`): committed as
they come, never seen by a reader until the run's row is written, the same rows as a recording
made at the end; a killed run's stage adopted by its resume (only the cases told since copied),
checked at the end, dropped when its run is gone; a history of version 4 (made by the agenteval
of before staging) read as it was and used as it is."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from agenteval.schema import RunSpec
from agenteval.store import history_db_path
from agenteval.store import staging as staging_module
from agenteval.store.db import RunStore, UnknownRun
from agenteval.store.history_schema import SCHEMA_VERSION
from agenteval.store.journal import Journal
from agenteval.store.record import tidy
from agenteval.store.staging import stage
from tests.result_builders import case
from tests.store.test_verdict_copy import OUTCOMES, RUN, SHELL, _from_python, _history, _journaled, _outcome

V4 = Path(__file__).resolve().parents[1] / "fixtures" / "history_v4"


def _tell(journal: Journal, outcomes: list[Any], start: int) -> None:
    for place, outcome in enumerate(outcomes, start=start):
        journal.append_all(RUN, outcome.runs, "s")
        journal.append_verdict(RUN, outcome, place)
    journal.flush(RUN)


def _staged_cases(store: RunStore, run_id: str = "doc") -> int:
    with closing(sqlite3.connect(store.path)) as conn:
        return int(conn.execute("SELECT count(*) FROM cases WHERE run_id = ?", (run_id,)).fetchone()[0])


def _stage(store: RunStore, journal: Journal, run_id: str = "doc", of: str = RUN) -> int | None:
    with closing(store.attached(journal.path)) as conn:
        return stage(conn, run_id, of, "s")


def test_staged_rows_are_committed_unseen_and_end_as_a_recording_made_at_the_end(tmp_path: Path) -> None:
    first = [_outcome([case(f"c{i}", {"m": 0.2, "other": 1.0})]) for i in range(3)]
    journal = _journaled(tmp_path / "j", first)
    store = RunStore(tmp_path / "h")
    store.record_outcomes(SHELL.model_copy(update={"eval_set_result_id": "earlier"}), [], tmp_path / "e.json")
    assert _stage(store, journal) == 3
    retold = _outcome([case("c1", {"m": 0.9})])  # (its runs retried: told again)
    journal.append_all(RUN, retold.runs, "s")
    journal.append_verdict(RUN, retold, 1)
    _tell(journal, OUTCOMES[:3], 3)
    assert _stage(store, journal) == 7
    # Committed (another connection counts them), yet no reader of runs sees the document.
    assert _staged_cases(store) == 6
    assert [r.run_id for r in store.list_runs()] == ["earlier"]
    assert store.resolve("latest").run_id == "earlier"
    for ref in ("doc", "d"):
        with pytest.raises(UnknownRun):
            store.resolve(ref)
    _tell(journal, OUTCOMES[3:4], 6)
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    store.remove("earlier")
    assert _history(store) == _from_python(tmp_path / "python", [first[0], retold, first[2], *OUTCOMES[:4]])
    with closing(sqlite3.connect(store.path)) as conn:
        assert conn.execute("SELECT count(*) FROM staged").fetchone() == (0,)
    assert _stage(store, journal) is None  # (recorded: a late stage does nothing)
    journal.close()


def test_a_killed_runs_stage_is_taken_by_its_resume_which_copies_only_the_cases_told_since(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    journal = _journaled(tmp_path / "h", OUTCOMES[:4])
    store = RunStore(tmp_path / "h")
    _stage(store, journal)
    journal.close()  # (killed: nothing recorded; the stage is committed)
    resumed = Journal(tmp_path / "h")
    assert RunStore(tmp_path / "h").staged_document(RUN, "s") == "doc"
    assert store.staged_document(RUN, "other set") is None and store.staged_document("other", "s") is None
    _tell(resumed, OUTCOMES[4:], 4)
    copies: list[tuple[Any, ...]] = []
    real = staging_module.copy_rows
    monkeypatch.setattr(staging_module, "copy_rows", lambda *a: copies.append(a) or real(*a))
    tidy(tmp_path / "h")  # (its run is journaled: the stage stays)
    store.record_copied(SHELL, resumed.path, RUN, tmp_path / "doc.json")
    assert copies == []  # (not copied again whole: only the verdicts told since, by `copy_told_after`)
    assert _history(store) == _from_python(tmp_path / "python", OUTCOMES)
    resumed.close()


def test_a_stage_whose_verdict_the_journal_lost_is_copied_again_whole(tmp_path: Path) -> None:
    journal = _journaled(tmp_path / "h", OUTCOMES[:4])
    store = RunStore(tmp_path / "h")
    _stage(store, journal)
    with closing(sqlite3.connect(journal.path)) as conn, conn:
        conn.execute("DELETE FROM journal_verdicts WHERE run_id = ? AND position = 1", (RUN,))
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    unstaged = RunStore(tmp_path / "unstaged")  # (the same journal recorded without a stage)
    unstaged.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    assert _history(store) == _history(unstaged) and _staged_cases(store) == 3
    journal.close()


def test_stages_of_runs_the_journal_no_longer_holds_are_dropped_and_others_kept(tmp_path: Path) -> None:
    root = tmp_path / "h"
    journal = _journaled(root, OUTCOMES[:3])
    other = Journal(root)  # (another run, recorded under another document, then forgotten)
    other.begin(RunSpec(run_id="gone", command="eval", started=2.0), "{}", 10)
    for place, outcome in enumerate(OUTCOMES[:2]):
        other.append_all("gone", outcome.runs, "s")
        other.append_verdict("gone", outcome, place)
    other.flush("gone")
    store = RunStore(root)
    _stage(store, journal)
    _stage(store, other, "gone_doc", "gone")
    _stage(store, journal, "second", RUN)  # (a second document of the same run and set)
    other.forget("gone")
    other.close()
    tidy(root)
    with closing(sqlite3.connect(store.path)) as conn:
        assert sorted(conn.execute("SELECT run_id FROM staged")) == [("doc",), ("second",)]
        assert conn.execute("SELECT count(*) FROM case_metrics WHERE run_id = 'gone_doc'").fetchone() == (0,)
    assert _staged_cases(store, "gone_doc") == 0 and _staged_cases(store, "second") == 3
    # The recording of one document of the run and set drops the other's stage.
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    with closing(sqlite3.connect(store.path)) as conn:
        assert conn.execute("SELECT count(*) FROM staged").fetchone() == (0,)
    assert _staged_cases(store, "second") == 0
    assert _history(store) == _from_python(tmp_path / "python", OUTCOMES[:3])
    journal.close()


def test_a_stage_reads_its_verdicts_by_index_and_then_only_the_rows_appended_since(tmp_path: Path) -> None:
    """The journal's metric and summary rows have no index: each stage after the first reads those
    after the run's last ones it copied (a range of rowids), each row finding its verdict by its
    `told` number (a bound that turned the join around scanned every row for each verdict)."""
    journal = _journaled(tmp_path / "h", OUTCOMES[:3])
    store = RunStore(tmp_path / "h")
    with closing(store.attached(journal.path)) as conn:
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        stage(conn, "doc", RUN, "s")
        _tell(journal, OUTCOMES[3:], 3)
        stage(conn, "doc", RUN, "s")
        conn.set_trace_callback(None)
        joins = [s for s in statements if s.startswith("INSERT") and " JOIN " in s]
        assert len(joins) == 4
        for i, statement in enumerate(joins):
            plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {statement}")]
            assert any("journal_verdicts_told (run_id=? AND told=?)" in step for step in plan), plan
            assert (i >= 2) == any("INTEGER PRIMARY KEY (rowid>?)" in step for step in plan), plan
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    assert _history(store) == _from_python(tmp_path / "python", OUTCOMES)
    journal.close()


def test_a_stage_takes_the_historys_lock_alone_and_waits_for_another_writer(tmp_path: Path) -> None:
    """Its first statement writes, so it waits for a writer that holds the history rather than
    failing to turn a stale read into a write; the attached journal's writer never waits for it."""
    journal = _journaled(tmp_path / "h", OUTCOMES[:2])
    store = RunStore(tmp_path / "h")
    store.record_outcomes(SHELL.model_copy(update={"eval_set_result_id": "earlier"}), [], tmp_path / "e.json")
    with closing(store.attached(journal.path)) as conn:
        conn.execute("BEGIN")
        conn.execute("INSERT INTO staged VALUES ('doc', ?, 's', 0, 0, 0, NULL) "
                     "ON CONFLICT (run_id) DO NOTHING", (RUN,))
        with closing(sqlite3.connect(journal.path, timeout=0.5)) as writer:  # the journal: not locked
            writer.execute("BEGIN IMMEDIATE")
            writer.rollback()
        conn.execute("ROLLBACK")
    with closing(sqlite3.connect(store.path, timeout=5, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")
        other.execute("UPDATE runs SET command = 'x'")
        with closing(store.attached(journal.path)) as conn:
            conn.execute("PRAGMA busy_timeout = 100")
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                stage(conn, "doc", RUN, "s")  # (it waited its timeout, then gave up, nothing done)
            other.execute("COMMIT")
            assert stage(conn, "doc", RUN, "s") == 2
    journal.close()


def _answers(store: RunStore, run_id: str) -> dict[str, Any]:
    """What the history's readers answer of a run, as `history_v4/make.py` wrote them."""
    return json.loads(json.dumps({
        "summary": store.summary(run_id).model_dump(mode="json"),
        "criterion_means": store.criterion_means([run_id]),
        "case_runs": {e: {str(i): dataclasses.asdict(o) for i, o in runs.items()}
                      for e, runs in store.case_runs(run_id).items()}}))


def test_a_version_4_history_reads_as_it_did_gains_the_staged_table_and_takes_stages(tmp_path: Path) -> None:
    root = tmp_path / "h"
    path = history_db_path(root)
    path.parent.mkdir(parents=True)
    with closing(sqlite3.connect(path)) as db, db:
        db.executescript((V4 / "history.sql").read_text())
    store = RunStore(root)
    assert _answers(store, "old_4") == json.loads((V4 / "answers.json").read_text())
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)] == [(5,)]
        assert db.execute("SELECT count(*) FROM staged").fetchone() == (0,)
    journal = _journaled(root, OUTCOMES[:3])
    _stage(store, journal)
    assert [r.run_id for r in store.list_runs()] == ["old_4"]
    _tell(journal, OUTCOMES[3:], 3)
    store.record_copied(SHELL, journal.path, RUN, root / "doc.json")
    assert sorted(r.run_id for r in store.list_runs()) == ["doc", "old_4"]
    assert _answers(store, "old_4") == json.loads((V4 / "answers.json").read_text())
    store.remove("old_4")
    assert _history(store) == _from_python(tmp_path / "python", OUTCOMES)
    spec = importlib.util.spec_from_file_location("make_history_v4", V4 / "make.py")
    assert spec is not None and spec.loader is not None  # (the fixture's maker still loads)
    journal.close()


def test_the_run_rows_sums_are_staged_with_the_rows_and_the_end_reads_only_the_last_verdicts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Agent seconds and tokens are summed in document order (a float sum's last bits depend on
    it), stage by stage, kept with the stage (a resume goes on from a killed run's sums): the
    recording's end reads only the verdicts told since; when those summed are no longer the
    set's (a verdict gone), it sums them all again."""
    seconds = [1e16, 1.0, -1e16, 1.0, 0.1, 0.2, 0.3]  # (summed in another order: another float)
    outcomes = [_outcome([case(f"c{i}", {"m": i / 10}, duration=s, tokens=i)]) for i, s in enumerate(seconds)]
    root = tmp_path / "h"
    journal = _journaled(root, outcomes[:2])
    store = RunStore(root)
    for place in range(2, 5):
        _stage(store, journal)
        _tell(journal, outcomes[place:place + 1], place)
    _stage(store, journal)
    with closing(sqlite3.connect(store.path)) as conn:
        (sums,) = conn.execute("SELECT sums FROM staged").fetchone()
    assert json.loads(sums)[0] == 5 and json.loads(sums)[3] == sum(seconds[:5])
    _tell(journal, outcomes[5:], 5)
    statements: list[str] = []
    attached = RunStore.attached

    def traced(self: RunStore, path: Path, checkpoints: bool = True) -> sqlite3.Connection:
        conn = attached(self, path, checkpoints)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(RunStore, "attached", traced)
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    assert _history(store) == _from_python(tmp_path / "python", outcomes)
    assert statements and not any("GROUP BY status" in s for s in statements), statements
    # A verdict summed, then gone: every verdict summed again at the end.
    lost = RunStore(tmp_path / "lost")
    _stage(lost, journal, "doc")
    with closing(sqlite3.connect(journal.path)) as conn, conn:
        conn.execute("DELETE FROM journal_verdicts WHERE run_id = ? AND position = 3", (RUN,))
    statements.clear()
    lost.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    assert any("GROUP BY status" in s for s in statements)
    unstaged = RunStore(tmp_path / "unstaged")
    monkeypatch.undo()
    unstaged.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    assert _history(lost) == _history(unstaged)
    journal.close()
