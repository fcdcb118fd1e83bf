"""A run database of schema version 2 (made by the agenteval of before version 3:
`tests/fixtures/history_v2/make.py`) read by this one: its stored rows answer as they did, and
the same document recorded here (its one-run cases' summaries derived, not stored) answers the
same, to the last bit."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sqlite3
from pathlib import Path
from typing import Any

from agenteval.store import RunStore, history_db_path, save_result
from agenteval.store.history_schema import SCHEMA_VERSION

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "history_v2"


def _answers(store: RunStore, run_id: str) -> dict[str, Any]:
    """What the history's readers answer of a run, as `make.py` wrote them (JSON)."""
    summary = store.summary(run_id).model_dump(mode="json")
    summary["eval_set_result_id"] = "old_1"
    means = store.criterion_means([run_id])
    return json.loads(json.dumps({
        "summary": summary, "criterion_means": {"old_1": means[run_id]},
        "case_runs": {e: {str(i): dataclasses.asdict(o) for i, o in runs.items()}
                      for e, runs in store.case_runs(run_id).items()}}))


def _stored_summaries(store: RunStore, run_id: str) -> int:
    with sqlite3.connect(store.path) as db:
        (count,) = db.execute("SELECT count(*) FROM metric_summaries WHERE run_id = ?", (run_id,)).fetchone()
    return int(count)


def test_a_version_2_history_reads_as_before_and_a_run_recorded_now_reads_the_same(tmp_path: Path) -> None:
    path = history_db_path(tmp_path)
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:
        db.executescript((FIXTURE / "history.sql").read_text())
    expected = json.loads((FIXTURE / "answers.json").read_text())
    store = RunStore(tmp_path)
    assert _answers(store, "old_1") == expected  # (the database upgraded in place first)
    assert _stored_summaries(store, "old_1") == 24  # its rows as they were: 2 criteria of 12 cases

    spec = importlib.util.spec_from_file_location("make_history_v2", FIXTURE / "make.py")
    assert spec is not None and spec.loader is not None
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    doc = make.document().model_copy(update={"eval_set_result_id": "new_1"})
    store.record(doc, save_result(tmp_path, doc))
    assert _answers(store, "new_1") == expected
    assert _stored_summaries(store, "new_1") == 2  # the case of two runs; the others derived
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
        assert db.execute("SELECT sum(summaries_derived), count(*) FROM cases GROUP BY run_id "
                          "ORDER BY run_id").fetchall() == [(12, 13), (0, 13)]  # new_1, old_1
