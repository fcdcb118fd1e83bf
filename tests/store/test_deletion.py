"""Deleting a recorded run (`store.deletion`): whole or not at all, its reviews with it, the
history's files but not the user's, never a run being written, and never brought back by a
recording's tidying of the history."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval.schema import EvalSetResult, RunSpec
from agenteval.store import RunStore, list_results, record_run
from agenteval.store import deletion as deletion_module
from agenteval.store.db import UnknownRun
from agenteval.store.deletion import delete_run, find
from agenteval.store.journal import Journal, RunOwned
from agenteval.store.record import tidy
from agenteval.store.reviews import Review, ReviewStore
from tests.result_builders import case, result


def _doc(result_id: str, set_id: str, group: str | None, created: float) -> EvalSetResult:
    doc = result([case("a", {"m": 1.0}), case("b", {"m": 0.0})], result_id, set_id, created=created)
    if group is not None:
        doc.run = RunSpec(run_id=group, command="eval", started=created)
    return doc


def _two_runs(root: Path) -> None:
    """Run g1 of two eval sets (documents g1_s and g1_t), then run g2 of one (g2_s)."""
    record_run(root, [_doc("g1_s", "s", "g1", 1.0), _doc("g1_t", "t", "g1", 1.0)])
    record_run(root, [_doc("g2_s", "s", "g2", 2.0)])
    reviews = ReviewStore(root)
    reviews.save(Review("g1_s", "a", 0, "", "agree"))
    reviews.save(Review("g2_s", "b", 0, "", "disagree"))


def _ids(root: Path) -> list[str]:
    return sorted(r.run_id for r in RunStore(root).list_runs())


def test_a_run_is_deleted_whole_with_its_reviews_and_files_and_stays_deleted(tmp_path: Path) -> None:
    _two_runs(tmp_path)
    done = delete_run(tmp_path, "g1")  # the run id `eval` prints: both of its documents
    assert done.run_id == "g1" and sorted(d.run_id for d in done.documents) == ["g1_s", "g1_t"]
    assert done.reviews == 1 and not done.kept and not done.journaled
    assert _ids(tmp_path) == ["g2_s"]
    assert [p.name for p in list_results(tmp_path)] == ["g2_s.evalset_result.json"]
    assert not list((tmp_path / ".agenteval" / "eval_history").glob("*.deleting"))
    assert [r.run_id for r in ReviewStore(tmp_path).reviews()] == ["g2_s"]
    with pytest.raises(UnknownRun):  # its cases' rows went with it
        RunStore(tmp_path).counts("g1_s")
    tidy(tmp_path)  # what every recording does first: nothing of it is recorded again
    assert _ids(tmp_path) == ["g2_s"]


def test_one_document_of_a_run_is_deleted_by_its_id_and_latest_by_its_alias(tmp_path: Path) -> None:
    _two_runs(tmp_path)
    assert find(tmp_path, "g1_t").exact == "g1_t"
    delete_run(tmp_path, "g1_t")
    assert _ids(tmp_path) == ["g1_s", "g2_s"]
    assert delete_run(tmp_path, "latest").documents[0].run_id == "g2_s"
    assert _ids(tmp_path) == ["g1_s"]
    with pytest.raises(UnknownRun, match="no run 'g9'"):
        delete_run(tmp_path, "g9")


def test_a_document_written_outside_the_history_is_left(tmp_path: Path) -> None:
    mine = tmp_path / "out.json"
    doc = _doc("o_s", "s", "o", 1.0)
    mine.write_text(doc.model_dump_json())
    record_run(tmp_path, [doc], paths=[mine])
    done = delete_run(tmp_path, "o")
    assert done.kept == [mine] and not done.files
    assert mine.is_file() and _ids(tmp_path) == []


def test_a_failed_deletion_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _two_runs(tmp_path)
    before = sorted(p.name for p in (tmp_path / ".agenteval" / "eval_history").iterdir())

    def broken(path: Path, ids: list[str]) -> int:
        raise OSError("disk gone")

    monkeypatch.setattr(deletion_module, "_delete_rows", broken)
    with pytest.raises(OSError):
        delete_run(tmp_path, "g1")
    assert sorted(p.name for p in (tmp_path / ".agenteval" / "eval_history").iterdir()) == before
    assert _ids(tmp_path) == ["g1_s", "g1_t", "g2_s"]


def test_a_run_being_written_is_refused_and_an_unfinished_one_is_forgotten(tmp_path: Path) -> None:
    _two_runs(tmp_path)
    owner = Journal(tmp_path)
    owner.begin(RunSpec(run_id="g2", command="eval", started=3.0), "{}", 1)  # g2 resumed, say
    owner.flush()
    with pytest.raises(RunOwned, match="owned by a live process"):
        delete_run(tmp_path, "g2")
    assert _ids(tmp_path) == ["g1_s", "g1_t", "g2_s"] and len(list_results(tmp_path)) == 3
    owner.release("g2")  # the resume ended without finishing: g2 is interrupted
    done = delete_run(tmp_path, "g2")
    assert done.journaled and _ids(tmp_path) == ["g1_s", "g1_t"]
    assert [r.run_id for r in Journal(tmp_path).runs()] == []
    owner.begin(RunSpec(run_id="u1", command="eval", started=4.0), "{}", 1)  # never recorded
    owner.flush()
    owner.release("u1")
    done = delete_run(tmp_path, "u1")
    assert done.run_id == "u1" and done.journaled and not done.documents
    assert Journal(tmp_path).runs() == []
    owner.close()
