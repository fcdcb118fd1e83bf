import sqlite3
from pathlib import Path

import pytest

from agenteval.errors import DataError
from agenteval.schema import EvalSetRef, EvalSetResult, EvalStatus, MetricError, ModelRoles, Run, RunSpec
from agenteval.store import RunStore, history_db_path, record, save_result
from agenteval.store.db import SCHEMA_VERSION
from agenteval.store.verdict_copy import CASE_TABLES
from tests.result_builders import case, judge, result


def _doc(rid: str, created: float, scores: tuple[float, ...] = (1.0, 0.2)) -> EvalSetResult:
    cases = [case(f"c{i}", {"m": s}, duration=1.5, tokens=10) for i, s in enumerate(scores)]
    cases[0].judge_records = [judge("m", 1.0, "fine")]
    return result(cases, result_id=rid, created=created)


def _record(store: RunStore, doc: EvalSetResult, **meta: object) -> str:
    return store.record(doc, save_result(store.root, doc), meta)


def test_record_and_list_newest_first(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    assert store.list_runs() == [] and not history_db_path(tmp_path).exists()
    _record(store, _doc("s_100", 100.0), agent="my_agent", agent_model="local", duration_seconds=4.0,
            config={"criteria": {"m": 0.5}}, eval_set_sha256="ab" * 32, note="kept")
    _record(store, _doc("s_300", 300.0, (1.0,)))
    _record(store, _doc("s_200", 200.0))
    rows = store.list_runs()
    assert [r.run_id for r in rows] == ["s_300", "s_200", "s_100"]
    assert [r.run_id for r in store.list_runs(limit=1)] == ["s_300"]
    first = rows[-1]
    assert (first.agent, first.agent_model, first.judge_model) == ("my_agent", "local", "scripted:j")
    assert (first.cases_total, first.cases_passed, first.cases_failed, first.num_runs) == (2, 1, 1, 1)
    assert first.duration_seconds == 4.0 and rows[0].duration_seconds == 1.5  # else invocation time
    assert first.total_tokens == 20.0 and first.eval_set_sha256 == "ab" * 32
    assert first.result_path.is_file() and first.result_path.is_relative_to(tmp_path)
    details = store.details("s_100")
    assert details["config"] == {"criteria": {"m": 0.5}} and details["meta"] == {"note": "kept"}
    assert details["judge_prompt_tokens"] == 7


def test_get_by_id_prefix_and_aliases(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    for rid, t in (("alpha_1", 1.0), ("alpha_2", 2.0), ("beta_3", 3.0)):
        _record(store, _doc(rid, t))
    assert store.get("alpha_1").eval_set_result_id == "alpha_1"
    assert store.get("bet").eval_set_result_id == "beta_3"
    assert store.get("latest").eval_set_result_id == "beta_3"
    assert store.get("previous").eval_set_result_id == "alpha_2"
    with pytest.raises(DataError, match="'alpha' is ambiguous: it matches alpha_"):
        store.get("alpha")
    with pytest.raises(DataError, match="no run 'nope_9'"):
        store.get("nope_9")


def test_unknown_id_without_a_database(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no run 'x1'"):
        RunStore(tmp_path).get("x1")
    with pytest.raises(DataError, match="no previous run"):
        RunStore(tmp_path).resolve("previous")


def test_missing_result_file_names_it(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    doc = _doc("s_1", 1.0)
    store.record(doc, tmp_path / "gone.json")
    with pytest.raises(DataError, match=r"gone\.json: file not found"):
        store.get("s_1")


def test_per_case_and_criterion_rows(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    doc = result([case("c", {"m": s, "n": 1.0}, run_index=i) for i, s in enumerate([0.9, 0.1])])
    _record(store, doc)
    with sqlite3.connect(store.path) as db:
        rows = db.execute("SELECT run_id, eval_id, run_index, metric_name, score, threshold, status "
                          "FROM case_metrics ORDER BY run_index, metric_name").fetchall()
        summaries = db.execute("SELECT metric_name, runs, mean, status FROM metric_summaries "
                               "ORDER BY metric_name").fetchall()
        cases = db.execute("SELECT eval_id, status, runs FROM cases").fetchall()
    assert rows == [("s_1", "c", 0, "m", 0.9, 0.5, 1), ("s_1", "c", 0, "n", 1.0, 0.5, 1),
                    ("s_1", "c", 1, "m", 0.1, 0.5, 2), ("s_1", "c", 1, "n", 1.0, 0.5, 1)]
    assert summaries == [("m", 2, pytest.approx(0.5), 1), ("n", 2, 1.0, 1)]
    assert cases == [("c", 1, 2)]
    assert store.list_runs()[0].num_runs == 2


def test_recording_is_atomic_and_rerecording_replaces(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    _record(store, _doc("good_1", 1.0))
    broken = _doc("broken_2", 2.0)
    broken.eval_case_results.append(broken.eval_case_results[0])  # the same case run twice
    with pytest.raises(DataError, match="cannot record run 'broken_2'"):
        store.record(broken, tmp_path / "b.json")
    assert [r.run_id for r in store.list_runs()] == ["good_1"]
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT count(*) FROM case_metrics WHERE run_id = 'broken_2'").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM cases WHERE run_id = 'broken_2'").fetchone() == (0,)
    _record(store, _doc("good_1", 1.0, (0.1, 0.1, 0.1)))
    (row,) = store.list_runs()
    assert (row.cases_total, row.cases_failed) == (3, 3)
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT count(*) FROM case_metrics").fetchone() == (3,)


def test_rerecording_clears_every_table_that_refers_to_runs(tmp_path: Path) -> None:
    # Recording turns foreign keys off and deletes a run's rows itself (`CASE_TABLES`): a table
    # that refers to `runs` and is not among them would keep a replaced run's rows.
    store = RunStore(tmp_path)
    twice = [case("c0", {"m": s}, run_index=i) for i, s in enumerate((1.0, 0.2))]  # a summary stored
    _record(store, result([*twice, case("c1", {"m": 0.3})], result_id="s_1", created=1.0))
    _record(store, _doc("s_1", 1.0, (0.5,)))  # one case of one run: its summary derived, not stored
    with sqlite3.connect(store.path) as db:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                  if any(ref[2] == "runs" for ref in db.execute(f"PRAGMA foreign_key_list({name})"))]
        counts = {t: db.execute(f"SELECT count(*) FROM {t} WHERE run_id = 's_1'").fetchone()[0]
                  for t in tables}
        read = db.execute("SELECT count(*) FROM case_summaries WHERE run_id = 's_1'").fetchone()[0]
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    assert sorted(tables) == sorted(CASE_TABLES)
    # One case, one criterion: the first recording's rows are gone (its stored summary too).
    assert counts == {"cases": 1, "case_metrics": 1, "metric_summaries": 0} and read == 1
    store.remove("s_1")  # (deleting a run still cascades: keys are on outside recording)
    with sqlite3.connect(store.path) as db:
        assert [db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables] == [0] * len(tables)


def test_schema_version_and_wal(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    _record(store, _doc("s_1", 1.0))
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        db.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(DataError, match="version 99 was written by a newer agenteval"):
        store.list_runs()


def test_another_programs_database_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    path = history_db_path(tmp_path)
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (body TEXT)")
        db.execute("INSERT INTO notes VALUES ('mine')")
    db.close()
    with pytest.raises(DataError, match=r"not an agenteval run database .*other tables: notes"):
        RunStore(tmp_path).list_runs()
    with sqlite3.connect(path) as db:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master ORDER BY name")]
        assert names == ["notes"] and db.execute("SELECT body FROM notes").fetchall() == [("mine",)]
    db.close()


def test_not_a_database(tmp_path: Path) -> None:
    path = history_db_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("not sqlite at all, just some text that is long enough " * 20)
    with pytest.raises(DataError, match="cannot use the run database"):
        RunStore(tmp_path).list_runs()


def test_summary_from_the_database_matches_the_document(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    doc = result([case("b", {"m": s, "n": 0.9}, run_index=i) for i, s in enumerate([0.9, 0.1, 0.7])]
                 + [case("a", {"m": 0.2})], gating="all_runs")
    _record(store, doc)
    light = store.summary("latest")
    assert light.eval_case_results == [] and light.gating == "all_runs"
    assert [s.eval_id for s in light.summary] == ["b", "a"]  # case order kept
    for got, want in zip(light.summary, doc.summary, strict=True):
        assert got.final_eval_status == want.final_eval_status and got.runs == want.runs
        assert sorted(got.metrics, key=lambda m: m.metric_name) == sorted(want.metrics,
                                                                           key=lambda m: m.metric_name)


def test_summary_of_the_cases_not_passed_only(tmp_path: Path) -> None:
    """What `runs show` lists: the cases that did not pass, with all their criteria, in case
    order; the passing cases' summaries are not read."""
    store = RunStore(tmp_path)
    doc = result([case("c", {"m": 0.1, "n": 0.9}), case("a", {"m": 0.9}), case("b", {"m": 0.2})])
    _record(store, doc)
    light = store.summary("latest", not_passed_only=True)
    assert [s.eval_id for s in light.summary] == ["c", "b"]
    want = {s.eval_id: s for s in doc.summary}
    for got in light.summary:
        assert got.final_eval_status == want[got.eval_id].final_eval_status != EvalStatus.PASSED
        assert sorted(got.metrics, key=lambda m: m.metric_name) == sorted(
            want[got.eval_id].metrics, key=lambda m: m.metric_name)


def test_counts_and_criteria_counted_in_the_database_are_the_summarys(tmp_path: Path) -> None:
    """`counts` is `set_counts` of the run's summary; `criteria` gives the gating criteria in
    the order they first gate a case and the informational-only ones in first appearance."""
    from agenteval.schema import EvalStatus as S
    from agenteval.verdicts.outcome import set_counts

    cases = [case("c", {"z": 0.9, "info": 1.0}), case("a", {"m": 0.1, "z": 0.9, "info": 0.2}),
             case("b", {"m": None, "late": 0.9}), *(case("r", {"m": 0.9}, run_index=i) for i in range(3))]
    for c in cases[:2]:
        for m in c.overall_eval_metric_results:
            if m.metric_name == "info":
                m.eval_status = S.INFORMATIONAL
    cases[0].overall_eval_metric_results[0].eval_status = S.INFORMATIONAL  # z: gating only in "a"
    doc = result(cases)
    store = RunStore(tmp_path)
    _record(store, doc)
    assert store.counts("latest") == set_counts(doc)
    assert set_counts(doc).max_runs == 3 and set_counts(doc).not_evaluated == 1
    assert store.criteria("latest") == (["m", "z", "late"], ["info"])


def _v1_database(root: Path) -> None:
    """A run database as version 1 wrote it (no run columns), holding one run."""
    path = history_db_path(root)
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:
        db.executescript("""
            CREATE TABLE schema_version (version INTEGER NOT NULL);
            INSERT INTO schema_version VALUES (1);
            CREATE TABLE runs (
                run_id TEXT PRIMARY KEY, created REAL NOT NULL, recorded REAL NOT NULL,
                eval_set_id TEXT NOT NULL, eval_set_file TEXT, eval_set_sha256 TEXT, command TEXT,
                agent TEXT, agent_model TEXT, judge_model TEXT, gating TEXT NOT NULL,
                num_runs INTEGER NOT NULL, cases_total INTEGER NOT NULL, cases_passed INTEGER NOT NULL,
                cases_failed INTEGER NOT NULL, cases_not_evaluated INTEGER NOT NULL,
                duration_seconds REAL, agent_seconds REAL, total_tokens REAL,
                judge_prompt_tokens INTEGER, config_json TEXT, meta_json TEXT,
                result_path TEXT NOT NULL);
            INSERT INTO runs VALUES ('old_1', 5.0, 5.0, 'old', NULL, NULL, 'score', NULL, NULL,
                NULL, 'mean', 1, 2, 1, 1, 0, 1.0, 1.0, NULL, 0, NULL, NULL, 'x.json');
        """)


def test_a_version_1_database_is_upgraded_in_place(tmp_path: Path) -> None:
    _v1_database(tmp_path)
    store = RunStore(tmp_path)
    assert [r.run_id for r in store.list_runs()] == ["old_1"]
    assert store.header("old_1") is None and store.list_runs()[0].run_group is None
    _record(store, _doc("new_1", 9.0))
    assert [r.run_id for r in store.list_runs()] == ["new_1", "old_1"]
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]


def test_record_a_run_keeps_its_header_and_groups_its_documents(tmp_path: Path) -> None:
    spec = RunSpec(run_id="20261123-101010-abcdef", command="eval", num_runs=1,
                   eval_sets=[EvalSetRef(eval_set_id="a", file="a.evalset.json", sha256="0" * 64),
                              EvalSetRef(eval_set_id="b")],
                   models=ModelRoles(agent="local", judge=["local"]), duration_seconds=2.5)
    docs = [_doc("a_1", 1.0), _doc("b_1", 1.0)]
    docs[0].eval_set_id, docs[1].eval_set_id = "a", "b"
    for doc in docs:
        doc.run = spec
    paths = record(tmp_path, Run(spec, docs))
    assert [p.name for p in paths] == ["a_1.evalset_result.json", "b_1.evalset_result.json"]
    store = RunStore(tmp_path)
    assert [r.run_id for r in store.documents(spec.run_id)] == ["a_1", "b_1"]
    assert store.header("a_1") == spec == store.get("b_1").run
    details = store.details("a_1")
    assert (details["command"], details["agent_model"], details["judge_model"]) == ("eval", "local", "local")
    assert (details["eval_set_file"], details["eval_set_sha256"]) == ("a.evalset.json", "0" * 64)
    assert details["duration_seconds"] == 2.5 and details["run_group"] == spec.run_id


def test_derived_summaries_are_read_a_case_at_a_time(tmp_path: Path) -> None:
    """`case_summaries` derives a case's summaries from its metric rows found by one seek per
    case (the cases of the run first): a lookup of the case per metric row read a 10,000-case
    run's summaries 30% slower."""
    store = RunStore(tmp_path)
    _record(store, _doc("s_1", 1.0))
    with sqlite3.connect(store.path) as db:
        plan = [row[3] for row in db.execute(
            "EXPLAIN QUERY PLAN SELECT * FROM case_summaries WHERE run_id = ?", ("s_1",))]
    derived = plan[plan.index("UNION ALL") + 1:]
    assert derived[:2] == ["SEARCH c USING PRIMARY KEY (run_id=?)",
                           "SEARCH m USING PRIMARY KEY (run_id=? AND eval_id=?)"], plan


def _not_evaluated() -> EvalSetResult:
    """A case of one run whose criterion `m` was not evaluated (its metric error the reason),
    beside a failed one; a case of two runs whose `m` was not evaluated in either."""
    one = case("one", {"m": None, "t": 0.2}, metric_errors=[
        MetricError(metric_name="m", message="the judge is unreachable"),
        MetricError(metric_name="m", message="turn 0 timed out", invocation_index=0)])
    many = [case("many", {"m": None}, run_index=i, metric_errors=[
        MetricError(metric_name="m", message=f"timeout {i}")]) for i in range(2)]
    return result([one, *many], result_id="s_1")


def test_a_not_evaluated_criterions_reason_is_kept_in_the_history(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    _record(store, _not_evaluated())
    reasons = {(s.eval_id, m.metric_name): m.reason
               for s in store.summary("latest").summary for m in s.metrics}
    assert reasons == {("one", "m"): "the judge is unreachable", ("one", "t"): None,
                       ("many", "m"): "run 0: timeout 0"}


def test_a_version_3_database_gains_the_reasons_column(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    _record(store, _doc("old_1", 1.0, (None, 0.2)))  # type: ignore[arg-type]
    with sqlite3.connect(store.path) as db:  # back to version 3's layout
        db.executescript("""
            DROP VIEW case_summaries; ALTER TABLE metric_summaries DROP COLUMN reason;
            CREATE VIEW case_summaries AS SELECT run_id, eval_id, metric_name, threshold, runs,
                scored_runs, passed_runs, mean, std, ci_low, ci_high, pass_at_k, pass_pow_k, status
                FROM metric_summaries UNION ALL SELECT c.run_id, c.eval_id, m.metric_name, m.threshold, 1,
                m.score IS NOT NULL, m.status = 1, m.score, CASE WHEN m.score IS NULL THEN NULL ELSE 0.0 END,
                m.score, m.score, CASE WHEN m.status = 4 THEN NULL ELSE (m.status = 1) * 1.0 END,
                CASE WHEN m.status = 4 THEN NULL ELSE (m.status = 1) * 1.0 END, m.status
                FROM cases c CROSS JOIN case_metrics m ON m.run_id = c.run_id AND m.eval_id = c.eval_id
                WHERE c.summaries_derived;
            UPDATE schema_version SET version = 3;""")
    store = RunStore(tmp_path)
    assert [m.reason for s in store.summary("old_1").summary for m in s.metrics] == [None, None]
    _record(store, _not_evaluated())
    assert store.summary("s_1").summary[0].metrics[0].reason == "the judge is unreachable"
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]


def test_case_runs_from_the_database_are_the_documents_runs_with_informational_rows_left_out(
        tmp_path: Path) -> None:
    """`case_runs` has SQLite drop informational rows and builds each case's runs from the
    ordered rows: the same criteria as the document's own runs (`runs_of`), case by case and
    run by run."""
    import random

    from agenteval.store import record_run
    from agenteval.verdicts.paired import runs_of

    rng = random.Random(7)
    cases = []
    for i in range(40):
        n = rng.choice([1, 1, 2, 3])
        for j in range(n):
            scores: dict[str, float | None] = {
                n: rng.choice([None, 0.2, 0.9, 1.0])
                for n in ("m_a", "m_b", "tokens") if n == "m_a" or rng.random() < 0.8}
            run = case(f"c{i:02d}", scores, run_index=j)
            for m in run.overall_eval_metric_results:
                if m.metric_name == "tokens" or (n == 1 and i % 5 == 0):
                    m.eval_status = EvalStatus.INFORMATIONAL  # some cases run once informational alone
            cases.append(run)
    doc = result(cases, result_id="r1")
    record_run(tmp_path, [doc])
    got = RunStore(tmp_path).case_runs("r1")
    want = runs_of(doc)
    assert list(got) == list(want)
    for eval_id, runs in got.items():  # several runs: each run passed when all its criteria did
        if len(runs) > 1:
            assert all(r.passed == (bool(r.metrics) and all(p for _, p in r.metrics.values()))
                       for r in runs.values()), eval_id
    assert {e: {j: r.metrics for j, r in runs.items()} for e, runs in got.items()} == {
        e: {j: r.metrics for j, r in runs.items()} for e, runs in want.items()}
    assert any(not r.metrics for runs in got.values() for r in runs.values())
    assert all(type(p) is bool for runs in got.values() for r in runs.values() for _, p in r.metrics.values())


def test_case_runs_keep_a_run_without_a_gating_criterion_as_a_failed_run(tmp_path: Path) -> None:
    """A case run three times whose second run failed before any criterion (the agent raised)
    has three runs in the database's view, the second failed, as in the document's own runs: a
    failed run dropped would make the case 2 of 2 instead of 2 of 3 (a false green in `compare`
    and `runs flaky`)."""
    from agenteval.store import record_run
    from agenteval.verdicts.paired import runs_of

    runs = [case("c", {"m": 1.0}, run_index=0), case("c", {}, run_index=1, error="agent raised"),
            case("c", {"m": 1.0}, run_index=2), case("d", {"m": 1.0}, run_index=0)]
    doc = result(runs, result_id="r1")
    record_run(tmp_path, [doc])
    got, want = RunStore(tmp_path).case_runs("r1"), runs_of(doc)
    assert {e: {j: r.passed for j, r in rs.items()} for e, rs in got.items()} == {
        e: {j: r.passed for j, r in rs.items()} for e, rs in want.items()} == {
        "c": {0: True, 1: False, 2: True}, "d": {0: True}}
