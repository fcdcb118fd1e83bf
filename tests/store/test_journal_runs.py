"""The journal's runs found by a reference (an id, a unique prefix, `latest`) and listed with
their owners."""

from pathlib import Path

import pytest

from agenteval.errors import DataError
from agenteval.schema import RunSpec
from agenteval.store.journal import Journal
from agenteval.store.journal_runs import UnjournaledRun, find


def test_latest_is_the_newest_run(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.begin(RunSpec(run_id="20250101-000000-aaaaaa", command="eval", started=1.0), "{}", 3)
    journal.begin(RunSpec(run_id="20250102-000000-bbbbbb", command="eval", started=2.0), "{}", 3)
    assert journal.get("latest").run_id == "20250102-000000-bbbbbb"
    assert journal.get("20250101").run_id == "20250101-000000-aaaaaa"
    assert journal.resolve("20250102") == "20250102-000000-bbbbbb"
    assert [(r.run_id, r.status) for r in journal.runs()] == [
        ("20250102-000000-bbbbbb", "running"), ("20250101-000000-aaaaaa", "running")]
    # An empty reference names no run (not the only one), and an ambiguous prefix lists its runs.
    with pytest.raises(DataError, match="no journaled run ''"):
        journal.get("")
    with pytest.raises(DataError, match="'2025010' is ambiguous: it matches 20250102-000000-bbbbbb, "
                       "20250101-000000-aaaaaa"):
        journal.get("2025010")
    journal.close()
    assert {r.status for r in Journal(tmp_path).runs()} == {"interrupted"}


def test_find_prefers_an_exact_id_and_breaks_ties_by_id(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    # An id that is also a prefix of another names itself, not both.
    assert find(path, {"r1": 1.0, "r10": 2.0}, "r1") == "r1"
    # Begun in the same second: the greater id is the latest.
    assert find(path, {"r1": 5.0, "r2": 5.0, "r0": 4.0}, "latest") == "r2"
    with pytest.raises(UnjournaledRun, match=r"journal\.sqlite: no journaled run 'x'"):
        find(path, {"r1": 1.0}, "x")
    with pytest.raises(UnjournaledRun):
        find(path, {}, "latest")
