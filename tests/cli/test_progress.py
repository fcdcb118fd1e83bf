"""`cli.progress`: the bar starts with the run's first event, so the process keeps one thread
until then (`score` forks its worker processes from it: `runner.sharded.forks_here`)."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from rich.progress import TaskID

from agenteval.cli.progress import ProgressBar
from agenteval.schema import EvalStatus
from agenteval.schema.progress import CaseFinished, CaseStarted, RunStarted


def _bar_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if type(t).__name__ == "_RefreshThread"]  # rich's


@pytest.fixture(autouse=True)
def _earlier_bars_gone() -> None:
    # A stopped bar's refresh thread is told to end but not joined (rich's `Live.stop`): an
    # earlier test's may still be alive when the next test begins.
    for t in _bar_threads():
        t.join(10)


def test_the_bar_starts_no_thread_before_the_first_event() -> None:
    assert not _bar_threads()
    with ProgressBar("scoring", shown=True) as bar:
        assert not _bar_threads()
        bar(RunStarted("r", 3))
        assert len(_bar_threads()) == 1
        assert bar._bar is not None
        progress, _ = bar._bar
        assert progress.tasks[0].total == 3
    assert not progress.live.is_started
    assert bar._bar is None


def test_an_event_after_the_bar_ended_does_not_start_it() -> None:
    bar = ProgressBar(shown=True)
    with bar:
        pass
    bar(RunStarted("r", 3))
    assert bar._bar is None
    assert not _bar_threads()


def test_rich_progress_is_not_imported_before_the_first_event() -> None:
    # `score` makes its bar before it forks its workers: rich's progress module (and what it
    # brings) is imported only once the run speaks, off the serial start.
    code = ("import sys\n"
            "from agenteval.cli.progress import ProgressBar\n"
            "from agenteval.schema.progress import RunStarted\n"
            "with ProgressBar(shown=True) as bar:\n"
            "    assert 'rich.progress' not in sys.modules\n"
            "    bar(RunStarted('r', 3))\n"
            "    assert 'rich.progress' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_finished_case_runs_reach_the_bar_in_batches_and_all_of_them_by_its_end(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ProgressBar, "EVERY", 3600.0)  # (no batch is due again within the test)
    with ProgressBar("scoring", shown=True) as bar:
        bar(RunStarted("r", 1000))
        assert bar._bar is not None
        progress = bar._bar[0]
        added: list[float] = []
        advance = progress.advance

        def counted(task_id: TaskID, n: float = 1) -> None:
            added.append(n)
            advance(task_id, n)

        monkeypatch.setattr(progress, "advance", counted)
        for i in range(1000):
            bar(CaseStarted("s", f"c{i}", 0))
            bar(CaseFinished("s", f"c{i}", 0, EvalStatus.PASSED, 0.0))
        assert added == [1] and progress.tasks[0].completed == 1  # the first at once, the rest due later
    assert added == [1, 999] and progress.tasks[0].completed == 1000


def test_finished_case_runs_are_added_when_a_batch_is_due(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ProgressBar, "EVERY", 0.0)
    with ProgressBar("scoring", shown=True) as bar:
        bar(RunStarted("r", 3))
        assert bar._bar is not None
        progress = bar._bar[0]
        for i in range(3):
            bar(CaseFinished("s", f"c{i}", 0, EvalStatus.PASSED, 0.0))
            assert progress.tasks[0].completed == i + 1


def test_no_bar_where_stderr_is_no_terminal() -> None:
    # (a transient bar is never drawn to a pipe or a file; its refresh thread would still run)
    code = ("import sys, threading\n"
            "from agenteval.cli.progress import ProgressBar\n"
            "from agenteval.schema.progress import RunStarted\n"
            "with ProgressBar() as bar:\n"
            "    bar(RunStarted('r', 3))\n"
            "    assert bar._bar is None and threading.active_count() == 1\n"
            "    assert 'rich.progress' not in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    assert done.returncode == 0, done.stderr
