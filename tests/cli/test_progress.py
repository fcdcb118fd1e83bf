"""`cli.progress`: the bar starts with the run's first event, so the process keeps one thread
until then (`score` forks its worker processes from it: `runner.sharded.forks_here`)."""

from __future__ import annotations

import threading

from agenteval.cli.progress import ProgressBar
from agenteval.schema.progress import RunStarted


def _bar_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if type(t).__name__ == "_RefreshThread"]  # rich's


def test_the_bar_starts_no_thread_before_the_first_event() -> None:
    assert not _bar_threads()
    with ProgressBar("scoring") as bar:
        assert not _bar_threads()
        bar(RunStarted("r", 3))
        assert len(_bar_threads()) == 1
        assert bar._progress.tasks[0].total == 3
    assert not bar._progress.live.is_started


def test_an_event_after_the_bar_ended_does_not_start_it() -> None:
    bar = ProgressBar()
    with bar:
        pass
    bar(RunStarted("r", 3))
    assert not bar._progress.live.is_started
