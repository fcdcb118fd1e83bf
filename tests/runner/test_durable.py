"""Claiming a run to resume it."""

from pathlib import Path

from agenteval.runner.durable import claim_resume
from agenteval.store.journal import Journal
from tests.journal_writers import killed, wal_sizes


def test_claiming_a_killed_run_merges_nothing_of_its_wal(tmp_path: Path) -> None:
    # Its look-ups would otherwise merge the killed run's WAL, pages of rows that are deleted
    # once the run is recorded (`Journal.hold_wal`), before the resume's first case.
    killed(tmp_path, 400, 300)
    journal = Journal(tmp_path)
    before = wal_sizes(journal.path)
    assert claim_resume(journal, "latest") == "r1"
    assert wal_sizes(journal.path) == before
    journal.close()
