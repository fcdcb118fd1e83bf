"""Human reviews stored with the run (`store.reviews`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval.errors import DataError
from agenteval.store import RunStore, record_run
from agenteval.store.reviews import Review, ReviewStore
from tests.result_builders import case, result


def test_reviews_are_kept_per_verdict_replaced_and_survive_a_re_record(tmp_path: Path) -> None:
    doc = result([case("a", {"m": 1.0})], "s_1")
    record_run(tmp_path, [doc, result([case("a", {"m": 1.0})], "s_2")])
    store = ReviewStore(tmp_path)
    store.save(Review("s_1", "a", 0, "", "agree", "fine"))
    store.save(Review("s_1", "a", 0, "safety_v1", "agree"))
    store.save(Review("s_1", "a", 0, "safety_v1", "disagree", "the judge was wrong"))
    store.save(Review("s_2", "a", 0, "", "disagree"))
    got = [(r.target, r.agreement, r.comment) for r in store.reviews("s_1")]
    assert got == [("", "agree", "fine"), ("safety_v1", "disagree", "the judge was wrong")]
    assert [r.run_id for r in store.reviews(eval_id="a")] == ["s_1", "s_1", "s_2"]
    record_run(tmp_path, [doc])  # the run recorded again keeps its reviews
    assert len(store.reviews("s_1")) == 2
    assert RunStore(tmp_path).list_runs()[0].run_id == "s_1"  # the run database is unharmed
    assert store.delete("s_1", "a", 0, "") and not store.delete("s_1", "a", 0, "")
    assert [r.target for r in store.reviews("s_1")] == ["safety_v1"]


def test_no_database_means_no_reviews_and_bad_reviews_are_refused(tmp_path: Path) -> None:
    store = ReviewStore(tmp_path)
    assert store.reviews() == [] and not store.delete("x", "a", 0, "")
    assert not (tmp_path / ".agenteval").exists()
    with pytest.raises(DataError, match="agreement"):
        store.save(Review("s", "a", 0, "", "maybe"))  # type: ignore[arg-type]
    with pytest.raises(DataError, match="comment"):
        store.save(Review("s", "a", 0, "", "agree", "x" * 5000))


def test_a_review_of_a_run_not_recorded_or_deleted_is_refused_not_kept(tmp_path: Path) -> None:
    """A review saved while its run was being deleted was kept without its run (the web checked
    the run, then saved): the run's presence is checked in the statement that inserts."""
    from agenteval.store.db import UnknownRun
    from agenteval.store.deletion import delete_run

    store = ReviewStore(tmp_path)
    with pytest.raises(UnknownRun, match="no run 's_1'"):
        store.save(Review("s_1", "a", 0, "", "agree"))  # no database
    assert not (tmp_path / ".agenteval").exists()
    record_run(tmp_path, [result([case("a", {"m": 1.0})], "s_1")])
    store.save(Review("s_1", "a", 0, "", "agree"))
    assert delete_run(tmp_path, "s_1").reviews == 1
    with pytest.raises(UnknownRun, match=r"run_id.*no run 's_1'.*not saved"):
        store.save(Review("s_1", "a", 0, "", "disagree"))
    assert store.reviews() == []
