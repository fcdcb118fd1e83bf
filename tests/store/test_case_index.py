"""A run's case index: a case, or a page of case runs, read from its own bytes is what the
loaded document gives; kept in the history database while the file is the one indexed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import agenteval.store.case_index as case_index_module
from agenteval.cli.main import cli
from agenteval.schema import EvalSetResult, EvalStatus, MetricError
from agenteval.store import RunStore, load_result, record_run, save_result
from agenteval.store.case_index import Unindexed, case_index
from agenteval.verdicts.outcome import outcomes
from tests.conftest import PARITY
from tests.result_builders import case, result


def _document() -> EvalSetResult:
    unreachable = [MetricError(metric_name="j", message="the judge is unreachable")]
    return result([case("b", {"m": s}, run_index=i) for i, s in enumerate([0.9, 0.1, 0.7])]
                  + [case('q"uote\\é', {"m": 0.2, "j": None}, metric_errors=unreachable),
                     case("c", {"m": 0.9}), case("d", {}, error="the agent crashed")], gating="all_runs")


def _same(path: Path) -> None:
    """Every case and some pages of the document at `path`, read by its index, are the loaded
    document's."""
    loaded = load_result(path)
    index = case_index(path)
    for want in outcomes(loaded):
        assert index.case(want.eval_id) == want
    assert index.case("no such case") is None
    assert list(index.outcomes()) == outcomes(loaded)
    runs = loaded.eval_case_results
    assert index.page(1, 3) == (len(runs), runs[1:4])
    assert index.page(len(runs), 10) == (len(runs), [])
    failed = [r for r in runs if r.final_eval_status == EvalStatus.FAILED]
    assert failed and index.page(0, 100, {int(EvalStatus.FAILED)}) == (len(failed), failed)
    assert index.head == loaded.model_copy(update={"eval_case_results": [], "summary": []})


def test_every_case_and_page_of_a_written_document(tmp_path: Path) -> None:
    _same(save_result(tmp_path, _document()))


@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_documents_written_by_score(tmp_path: Path, parallelism: str) -> None:
    out = tmp_path / "scored.json"
    r = CliRunner().invoke(cli, ["score", str(PARITY / "expected.evalset.json"), "--actual",
                                 str(PARITY / "actual.evalset.json"), "--config_file_path",
                                 str(PARITY / "config_IN_ORDER.json"), "--output", str(out), "--no_cache",
                                 "--parallelism", parallelism])
    assert r.exit_code in (0, 1), r.output
    _same(out)


@pytest.mark.parametrize("layout", ["compact", "without summaries", "keys in another order"])
def test_a_document_not_laid_out_as_agenteval_writes_it_has_no_index(tmp_path: Path, layout: str) -> None:
    data = _document().model_dump(mode="json")
    path = tmp_path / "other.json"
    if layout == "compact":
        path.write_text(json.dumps(data))
    elif layout == "without summaries":
        del data["summary"]
        path.write_text(json.dumps(data, indent=2))
    else:
        data["eval_case_results"] = [dict(reversed(r.items())) for r in data["eval_case_results"]]
        path.write_text(json.dumps(data, indent=2))
    with pytest.raises(Unindexed):
        case_index(path)


def test_a_stored_runs_index_is_kept_until_its_file_changes(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (run_id,) = record_run(tmp_path, [_document()])
    store = RunStore(tmp_path)
    path = store.resolve(run_id).result_path
    scans: list[Path] = []
    scan = case_index_module.scan
    monkeypatch.setattr(case_index_module, "scan", lambda p: scans.append(p) or scan(p))
    first = case_index(path, store.path, run_id)
    again = case_index(path, store.path, run_id)
    assert scans == [path] and again == first  # the second from the database
    want = outcomes(load_result(path))
    assert again.case("c") == next(c for c in want if c.eval_id == "c")

    failed = first.page(0, 10, {int(EvalStatus.FAILED)})[0]
    changed = _document()
    assert changed.eval_case_results[4].eval_id == "c"
    changed.eval_case_results[4].final_eval_status = EvalStatus.FAILED
    save_result(tmp_path, changed)  # written again: scanned again
    assert case_index(path, store.path, run_id).page(0, 10, {int(EvalStatus.FAILED)})[0] == failed + 1
    assert scans == [path, path]


def test_a_document_changed_under_the_same_size_and_time_is_found_stale(tmp_path: Path) -> None:
    path = save_result(tmp_path, _document())
    index = case_index(path)
    info = path.stat()
    text = path.read_bytes()
    path.write_bytes(text.replace(b'"eval_id": "c"', b'"eval_id": "x"'))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    with pytest.raises(Unindexed):
        index.case("c")
    with pytest.raises(Unindexed):
        index.page(0, 10)
    with pytest.raises(Unindexed):
        list(index.outcomes())


def test_a_database_busy_with_a_writer_is_not_waited_for(tmp_path: Path) -> None:
    import sqlite3
    import time

    (run_id,) = record_run(tmp_path, [_document()])
    store = RunStore(tmp_path)
    path = store.resolve(run_id).result_path
    writer = sqlite3.connect(store.path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # (as a run being recorded holds it)
    try:
        started = time.monotonic()
        index = case_index(path, store.path, run_id)
        assert time.monotonic() - started < 30  # (the connection's own busy timeout is 60 s)
        assert index.case("c") is not None
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    case_index(path, store.path, run_id)  # kept now
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT count(*) FROM case_spans WHERE run_id = ?", (run_id,)).fetchone()[0] > 0
