"""The history records a journaled run's cases by copying their verdicts' rows in SQLite: the
same rows and sums as recording the cases from Python, only each verdict's own rows (not those a
verdict made stale left behind), whole or not at all; older journals' verdicts (their rows in
their records) are still recorded, from Python."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agenteval.errors import DataError
from agenteval.schema import EvalCaseResult, EvalSetResult, MetricError, RunSpec
from agenteval.store.db import RunStore
from agenteval.store.journal import Journal
from agenteval.store.kept import DERIVED, derived_summaries
from agenteval.store.verdict_copy import ATTACHED, copy_cases
from agenteval.verdicts.aggregate import summarise_case
from agenteval.verdicts.outcome import CaseOutcome
from tests.result_builders import case
from tests.store.test_digest import CASES

RUN = "20250101-000000-aaaaaa"
SHELL = EvalSetResult(eval_set_result_id="doc", eval_set_id="s")


def _outcome(runs: list[EvalCaseResult]) -> CaseOutcome:
    runs = [r.model_copy(update={"eval_set_id": "s"}) for r in runs]
    return CaseOutcome("s", "mean", summarise_case(runs[0].eval_id, runs, "mean", False), runs)


def _journaled(root: Path, outcomes: list[CaseOutcome]) -> Journal:
    journal = Journal(root)
    journal.begin(RunSpec(run_id=RUN, command="eval", started=1.0), "{}", 100)
    for place, outcome in enumerate(outcomes):
        journal.append_all(RUN, outcome.runs, "s")
        journal.append_verdict(RUN, outcome, place)
    journal.flush(RUN)
    return journal


def _history(store: RunStore, stored: bool = True) -> list[Any]:
    """The recorded rows but the document's id (the case rows, metric rows and criterion
    summaries as read: `case_summaries`; with `stored`, which summaries are stored too), and
    the run row's sums."""
    cases = "cases" if stored else "(SELECT run_id, eval_id, position, status, runs, agent_seconds, " \
        "total_tokens, error_message FROM cases)"
    tables = (cases, "case_metrics", "case_summaries", *(("metric_summaries",) if stored else ()))
    with sqlite3.connect(store.path) as conn:
        return [sorted(r[1:] for r in conn.execute(f"SELECT * FROM {t}")) for t in tables] + [conn.execute(
            "SELECT judge_model, num_runs, cases_total, cases_passed, cases_failed, cases_not_evaluated, "
            "duration_seconds, agent_seconds, total_tokens, judge_prompt_tokens FROM runs").fetchall()]


def _from_python(root: Path, outcomes: list[CaseOutcome], stored: bool = True) -> list[Any]:
    store = RunStore(root)
    store.record_outcomes(SHELL, outcomes, root / "doc.json")
    return _history(store, stored)


OUTCOMES = [_outcome(runs) for runs in CASES.values()]


def test_copied_rows_are_the_rows_recorded_from_the_cases(tmp_path: Path) -> None:
    journal = _journaled(tmp_path / "j", OUTCOMES)
    assert journal.copyable(RUN, "s", len(OUTCOMES))
    assert not journal.copyable(RUN, "s", len(OUTCOMES) + 1)  # a place without a verdict
    assert journal.case_rows(RUN, "s", len(OUTCOMES)) is None  # (version-1 records only)
    store = RunStore(tmp_path / "copied")
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    copied = _history(store)
    assert copied == _from_python(tmp_path / "python", OUTCOMES)
    assert copied[-1][0][0] is not None  # the judges' models, named from the verdicts' records
    # Cases of one run keep no summary row: the history derives them (`case_summaries`).
    several = {o.eval_id for o in OUTCOMES if o.num_runs > 1}
    assert {r[0] for r in copied[3]} == several and len(copied[2]) > len(copied[3])
    journal.close()


def test_a_case_told_again_is_copied_from_its_last_verdict_only(tmp_path: Path) -> None:
    first = [_outcome([case(f"c{i}", {"m": 0.2, "other": 1.0})]) for i in range(3)]
    journal = _journaled(tmp_path / "j", first)
    journal.close()
    # Another process (a resume retrying c1) appends c1's run again, which makes its verdict
    # stale, and tells c1 again with other criteria: the old verdict's rows stay in the journal.
    again = Journal(tmp_path / "j")
    again.claim(RUN)
    retold = _outcome([case("c1", {"m": 0.9})])
    again.append_all(RUN, retold.runs, "s")
    assert not again.copyable(RUN, "s", 3)
    again.append_verdict(RUN, retold, 1)
    assert again.copyable(RUN, "s", 3)
    with sqlite3.connect(again.path) as conn:
        assert conn.execute("SELECT count(DISTINCT told) FROM journal_metrics").fetchone() == (4,)
    store = RunStore(tmp_path / "copied")
    store.record_copied(SHELL, again.path, RUN, tmp_path / "doc.json")
    assert _history(store) == _from_python(tmp_path / "python", [first[0], retold, first[2]])
    again.close()


def test_a_copy_that_fails_records_nothing(tmp_path: Path) -> None:
    journal = _journaled(tmp_path / "j", OUTCOMES[:2])
    with sqlite3.connect(journal.path) as conn:  # a metric row twice: the history refuses it
        conn.execute("INSERT INTO journal_metrics SELECT * FROM journal_metrics LIMIT 1")
    store = RunStore(tmp_path / "copied")
    with pytest.raises(DataError, match="appears twice"):
        store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    assert store.list_runs() == []
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("SELECT count(*) FROM cases").fetchone() == (0,)
    journal.close()


def test_an_older_journals_verdicts_are_recorded_from_their_records(tmp_path: Path) -> None:
    """Verdicts of record version 1 (agenteval before session 14) hold their rows in the record
    and have no `told` number: not copyable, read by `Journal.case_rows` as before; the journal
    gains the column, its index and the rows' tables when this agenteval opens it."""
    journal = _journaled(tmp_path / "j", OUTCOMES)
    with sqlite3.connect(journal.path) as conn:
        verdicts = conn.execute("SELECT rowid, told, record FROM journal_verdicts").fetchall()
        for rowid, told, record in verdicts:
            _, error, judges, judge_tokens = json.loads(record)
            metrics = conn.execute("SELECT run_index, metric_name, score, threshold, status FROM "
                                   "journal_metrics WHERE told = ? ORDER BY rowid", (told,)).fetchall()
            summaries = conn.execute(
                "SELECT metric_name, threshold, runs, scored_runs, passed_runs, mean, std, ci_low, ci_high, "
                "pass_at_k, pass_pow_k, status FROM journal_summaries WHERE told = ? ORDER BY rowid",
                (told,)).fetchall()
            if record.startswith(f"[{DERIVED},"):  # (a case of one run: its summary rows derived)
                summaries = [s[:-1] for s in derived_summaries(metrics)]
            old = json.dumps([1, error, metrics, summaries, judges, judge_tokens], separators=(",", ":"))
            conn.execute("UPDATE journal_verdicts SET record = ?, told = NULL WHERE rowid = ?", (old, rowid))
        # The layout of before: no `told`, its index or the rows' tables.
        conn.execute("DROP INDEX journal_verdicts_told")
        conn.execute("ALTER TABLE journal_verdicts DROP COLUMN told")
        conn.execute("DROP TABLE journal_metrics")
        conn.execute("DROP TABLE journal_summaries")
    journal.close()
    journal = Journal(tmp_path / "j")  # this agenteval opens it: it gains what it lacks
    assert not journal.copyable(RUN, "s", len(OUTCOMES))
    with sqlite3.connect(journal.path) as conn:
        assert {"journal_metrics", "journal_summaries", "journal_verdicts_told"} <= \
            {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    rows = journal.case_rows(RUN, "s", len(OUTCOMES))
    assert rows is not None
    store = RunStore(tmp_path / "from records")
    store.record_outcomes(SHELL, rows, tmp_path / "doc.json")
    assert _history(store) == _from_python(tmp_path / "python", OUTCOMES)
    reader = journal.reader()  # and a resume keeps its cases
    assert reader.kept_case(RUN, "s", OUTCOMES[0].eval_id, OUTCOMES[0].num_runs, "mean") is not None
    reader.close()
    journal.close()


def test_each_copied_row_finds_its_verdict_by_index(tmp_path: Path) -> None:
    """Each metric and summary row (a derived summary's metric row too) looks its verdict up by
    `told` (`journal_verdicts_told`), not by a scan of the eval set's verdicts (which made the copy
    quadratic: 117 s for 59,400 rows)."""
    journal = _journaled(tmp_path / "j", OUTCOMES)
    store = RunStore(tmp_path / "copied")
    store.record_outcomes(SHELL, [], tmp_path / "doc.json")  # (the history's tables)
    statements: list[str] = []
    with sqlite3.connect(store.path) as conn:
        conn.execute(f"ATTACH DATABASE ? AS {ATTACHED}", (str(journal.path),))
        conn.execute("DELETE FROM cases")
        conn.set_trace_callback(statements.append)
        copy_cases(conn, "doc", RUN, "s")
        conn.set_trace_callback(None)
        joins = [s for s in statements if s.startswith("INSERT") and " JOIN " in s]
        assert len(joins) == 2
        for statement in joins:
            plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {statement}")]
            assert any("journal_verdicts_told" in step for step in plan), plan
        conn.rollback()
    journal.close()


def test_a_case_of_one_run_keeps_its_metric_rows_only_and_session_14s_verdicts_still_copy(
        tmp_path: Path) -> None:
    """A verdict whose summary rows its metric rows give (a case of one run: `DERIVED`) has no
    summary rows beside it, and the copy derives them as Python records them; a case of several
    runs keeps its summary rows. Verdicts of session 14 (version 2, every summary row beside
    them) are copied as before, in a journal holding verdicts of this version too."""
    journal = _journaled(tmp_path / "j", OUTCOMES)
    with sqlite3.connect(journal.path) as conn:
        versions = dict(conn.execute("SELECT eval_id, substr(record, 2, 1) FROM journal_verdicts"))
        beside = {e for (e,) in conn.execute("SELECT DISTINCT v.eval_id FROM journal_summaries s "
                                             "JOIN journal_verdicts v ON v.told = s.told")}
    several = {o.eval_id for o in OUTCOMES if o.num_runs > 1}
    assert several and beside == {e for e, v in versions.items() if v == "2"} >= several
    derived = [e for e, v in versions.items() if v == str(DERIVED)]
    assert len(derived) >= 2, versions
    # Every other derived verdict back to session 14's form: version 2, its summary rows beside it.
    with sqlite3.connect(journal.path) as conn:
        for eval_id in derived[::2]:
            (told,) = conn.execute("SELECT told FROM journal_verdicts WHERE eval_id = ?",
                                   (eval_id,)).fetchone()
            metrics = conn.execute("SELECT run_index, metric_name, score, threshold, status FROM "
                                   "journal_metrics WHERE told = ? ORDER BY rowid", (told,)).fetchall()
            conn.executemany(f"INSERT INTO journal_summaries VALUES ({', '.join('?' * 15)})",
                             [(RUN, told, *s) for s in derived_summaries(metrics)])
            conn.execute("UPDATE journal_verdicts SET record = '[2,' || substr(record, 4) WHERE told = ?",
                         (told,))
    assert journal.copyable(RUN, "s", len(OUTCOMES))
    store = RunStore(tmp_path / "copied")
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    # (Read the same: session 14's verdicts keep their summaries stored, where Python derives them.)
    assert _history(store, stored=False) == _from_python(tmp_path / "python", OUTCOMES, stored=False)
    journal.close()


def _error(message: str) -> MetricError:
    return MetricError(metric_name="m", message=message)


def test_a_criterion_not_evaluated_is_copied_with_its_reason(tmp_path: Path) -> None:
    """Its case's summary rows are beside the verdict (never derived: the metric rows hold no
    reason), the reason among them, copied as Python records it."""
    one = case("one", {"m": None, "t": 0.2}, metric_errors=[_error("unreachable")])
    many = [case("many", {"m": None}, run_index=i, metric_errors=[_error("slow")])
            for i in range(2)]
    cases = [_outcome([one]), _outcome(many), *OUTCOMES[:2]]
    journal = _journaled(tmp_path / "j", cases)
    store = RunStore(tmp_path / "copied")
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    copied = _history(store)
    assert copied == _from_python(tmp_path / "python", cases)
    assert {(r[0], r[1], r[-1]) for r in copied[2] if r[-1] is not None} == {
        ("one", "m", "unreachable"), ("many", "m", "run 0: slow")}
    journal.close()


def test_the_recording_lets_the_historys_wal_a_claim_kept_go_and_merges_it(tmp_path: Path) -> None:
    from agenteval.store import record_run
    from agenteval.store.sqlite import hold_wal, let_wal_go
    from agenteval.store.verdict_copy import settle
    from tests.journal_writers import padded_wal, wal_sizes
    from tests.result_builders import result

    journal = _journaled(tmp_path, OUTCOMES)
    store = RunStore(tmp_path)
    record_run(tmp_path, [result([case("a", {"m": 1.0})], "other", "s")])
    padded_wal(store.path, 6_000_000)  # (a killed run's stages, unmerged)
    before = wal_sizes(store.path)
    hold_wal(store.path)  # (a resume's claim)
    store.list_runs()
    assert wal_sizes(store.path)[0] == before[0]  # a look-up's close merges nothing
    store.record_copied(SHELL, journal.path, RUN, tmp_path / "doc.json")
    settle()
    assert let_wal_go(store.path) is None  # let go by the recording, whose close merged the WAL
    assert wal_sizes(store.path)[1] == 0 and wal_sizes(store.path)[0] > before[0] + 6_000_000
    journal.close()
