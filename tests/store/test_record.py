"""The tidying every recording does first (`store.record.tidy`): a journaled run with no
document (a run, or a resume, being recorded) costs no count of the journal's case runs; a run
recorded, then killed before the journal forgot it, is still forgotten."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agenteval.schema import RunSpec
from agenteval.store import RunStore, record_run
from agenteval.store.journal import Journal
from agenteval.store.record import tidy
from tests.result_builders import case, result
from tests.store.test_verdict_copy import OUTCOMES, RUN, _journaled


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the calls of `Journal.runs` (each reads every run's case runs and rows-file tail)."""
    calls: list[int] = []
    real = Journal.runs
    monkeypatch.setattr(Journal, "runs", lambda self: calls.append(1) or real(self))
    return calls


def test_a_journaled_run_without_documents_is_not_counted(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    journal = _journaled(tmp_path, OUTCOMES[:3])  # (owned by this process: being recorded)
    record_run(tmp_path, [result([case("a", {"m": 1.0})], "other", "s")])  # (another run's document)
    calls = _counted(monkeypatch)
    tidy(tmp_path)
    assert calls == []
    assert [r.run_id for r in journal.runs()] == [RUN]  # (kept: it is not recorded)
    journal.close()


def test_a_run_recorded_then_killed_before_it_was_forgotten_is_forgotten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    journal = _journaled(tmp_path, OUTCOMES[:3])
    doc = result([case("a", {"m": 1.0})], "doc", "s", created=time.time() + 60)  # (after the journal's)
    doc.run = RunSpec(run_id=RUN, command="eval", started=1.0)
    record_run(tmp_path, [doc])
    journal.close()  # (killed before `forget`: nobody owns the run now)
    calls = _counted(monkeypatch)
    tidy(tmp_path)
    assert calls == [1]  # (counted: it has a document)
    assert Journal(tmp_path).runs() == [] and [d.run_id for d in RunStore(tmp_path).documents(RUN)] == ["doc"]

