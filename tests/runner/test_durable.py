"""Claiming a run to resume it."""

from pathlib import Path

import pytest

from agenteval.errors import DataError
from agenteval.runner.durable import claim_resume
from agenteval.store import RunStore, record_run
from agenteval.store.journal import Journal, journal_path
from agenteval.store.sqlite import let_wal_go
from tests.journal_writers import killed, killed_after_window, padded_wal, wal_sizes
from tests.result_builders import case, result


def test_claiming_a_killed_run_merges_nothing_of_its_wal(tmp_path: Path) -> None:
    # Its look-ups would otherwise merge the killed run's WAL, pages of rows that are deleted
    # once the run is recorded (`Journal.hold_wal`), before the resume's first case.
    killed(tmp_path, 400, 300)
    journal = Journal(tmp_path)
    before = wal_sizes(journal.path)
    assert claim_resume(journal, "latest") == "r1"
    assert wal_sizes(journal.path) == before
    journal.close()


def test_claiming_a_killed_run_with_a_tail_and_a_large_wal_merges_nothing_of_it(tmp_path: Path) -> None:
    # The claim commits the case runs the killed run's rows file holds past its last commit; a
    # WAL past SQLite's automatic checkpoint (1,000 pages: a 10,000-case run's is 3,500) was then
    # merged into the file at that commit, with its fsyncs, before the resume's first case.
    killed_after_window(tmp_path, 400, 100)
    padded_wal(journal_path(tmp_path), 6_000_000)  # (1,465 pages, in the WAL)
    journal = Journal(tmp_path)
    before = wal_sizes(journal.path)
    assert before[1] > 6_000_000 > before[0]
    assert claim_resume(journal, "latest") == "r1"
    assert journal.finished_keys("r1") == {("s", f"c{i}", 0) for i in range(100)}  # (the tail, committed)
    assert wal_sizes(journal.path)[0] == before[0]  # nothing merged
    journal.close()



def test_claiming_a_killed_run_merges_nothing_of_the_historys_wal(tmp_path: Path) -> None:
    # A killed run's stages leave the history's WAL unmerged: the claim's first look-up of the
    # history merged it, with its syncs, before the resume's first case (`store.sqlite.hold_wal`).
    killed(tmp_path, 400, 300)
    history = RunStore(tmp_path)
    record_run(tmp_path, [result([case("a", {"m": 1.0})], "other", "s")])
    padded_wal(history.path, 6_000_000)
    before = wal_sizes(history.path)
    assert before[1] > 6_000_000 > before[0]
    journal = Journal(tmp_path)
    assert claim_resume(journal, "r1") == "r1"
    history.check()  # (as `eval` does before its first case)
    assert wal_sizes(history.path)[0] == before[0]  # nothing merged
    held = let_wal_go(history.path)  # (what the recording does: `closed_beside`)
    assert held is not None
    held.close()  # the last connection: it merges the WAL
    assert wal_sizes(history.path)[1] == 0
    journal.close()

def test_the_claim_reads_a_killed_runs_tail_once_to_commit_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Finding the run (`latest`, an id, a prefix) needs its id alone; counting its case runs
    # (`Journal.runs`) read the tail from its rows file each time, twice before the commit.
    import agenteval.store.journal_tail as journal_tail

    killed_after_window(tmp_path, 400, 100)
    scans: list[int] = []
    scan = journal_tail.scan
    monkeypatch.setattr(journal_tail, "scan", lambda *a: scans.append(1) or scan(*a))
    journal = Journal(tmp_path)
    assert claim_resume(journal, "latest") == "r1"
    assert len(scans) == 1
    journal.release("r1")
    for ref in ("r1", "r", "latest"):
        assert journal.resolve(ref) == journal.get(ref).run_id == "r1"
    with pytest.raises(DataError, match="no journaled run 'x'"):
        journal.resolve("x")
    journal.close()


def test_a_run_begun_when_a_legacy_case_id_was_its_absolute_path_resumes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its fingerprint holds the set's digest with the absolute id; the set read now has the
    # relative one (`legacy_case_id`): the resume is not refused as "eval set changed".
    import hashlib
    import json

    from agenteval.datasets import load_eval_set
    from agenteval.runner import EvalJob, Selection
    from agenteval.runner.durable import changes, fingerprint

    path = tmp_path / "greet.test.json"
    path.write_text('[{"query": "hi", "reference": "hello"}]')
    monkeypatch.chdir(tmp_path)
    eval_set = load_eval_set(path)
    assert eval_set.eval_cases[0].eval_id == "greet.test.json"
    job = EvalJob(selections=[Selection(path, eval_set)])
    then = json.loads(fingerprint(job))
    before = eval_set.model_copy(update={"eval_cases": [
        eval_set.eval_cases[0].model_copy(update={"eval_id": str(path)})]})
    then["content"][eval_set.eval_set_id] = hashlib.sha256(before.model_dump_json().encode()).hexdigest()
    assert changes(json.dumps(then), job) == []
    then["content"][eval_set.eval_set_id] = "0" * 64  # any other content is still refused
    assert changes(json.dumps(then), job) == [f"eval set {eval_set.eval_set_id!r} changed"]
