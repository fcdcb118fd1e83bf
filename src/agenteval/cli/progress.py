"""The console's progress bar, fed by the runner's progress events."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TYPE_CHECKING

from agenteval.schema.progress import CaseFinished, JudgeCallDone, ProgressEvent, RunStarted

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


class ProgressBar:
    """A transient bar on stderr: case runs done of the total, and judge calls made so far.
    Use as a context manager; pass the instance as the run's listener. The bar (and rich's
    refresh thread) starts at the first event, not on entering: until then the process keeps
    one thread, so `score` may fork its worker processes from it (`runner.sharded`). Rich's
    bar is made then too: its module is not imported before a run's first event (for `score`,
    after its workers have started).

    Finished case runs are added to the bar at most every `EVERY` seconds (and when it ends),
    not one at a time: rich's `advance` (a lock, a clock read, a speed sample: 2-3 µs a case)
    was about half of what a case cost the parent of a sharded `score` besides writing its
    bytes, and the bar is redrawn only ten times a second.

    `shown` (default: whether stderr is a terminal) False: no bar at all. A transient bar is
    never drawn to a pipe or a file (CI's logs), yet rich's refresh thread would still rebuild
    it ten times a second beside the run (≈ 28 M instructions in a 1,000-case `eval`)."""

    EVERY = 0.05

    def __init__(self, description: str = "evaluating", shown: bool | None = None) -> None:
        self._description = description
        self._shown = sys.stderr.isatty() if shown is None else shown
        self._bar: tuple[Progress, TaskID] | None = None
        self._judge_calls = 0
        self._entered = False
        self._finished = 0  # case runs finished and not yet added to the bar
        self._next = 0.0  # when they may be added next (`time.monotonic`)

    def __enter__(self) -> ProgressBar:
        self._entered = True
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._entered = False
        if self._bar is not None:
            self._add_finished()
            bar, self._bar = self._bar[0], None
            bar.__exit__(kind, value, tb)

    def _add_finished(self) -> None:
        if self._bar is not None and self._finished:
            self._bar[0].advance(self._bar[1], self._finished)
            self._finished = 0
        self._next = time.monotonic() + self.EVERY

    def _started(self) -> tuple[Progress, TaskID]:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[judge]}"), TimeElapsedColumn(),
                            console=Console(stderr=True), transient=True)
        task = progress.add_task(self._description, total=None, judge="")
        progress.__enter__()
        return progress, task

    def __call__(self, event: ProgressEvent) -> None:
        if self._bar is None:
            if not self._entered or not self._shown:
                return
            self._bar = self._started()
        if isinstance(event, CaseFinished):  # (the most frequent event: tested first)
            self._finished += 1
            if time.monotonic() >= self._next:
                self._add_finished()
            return
        progress, task = self._bar
        if isinstance(event, RunStarted):
            progress.update(task, total=event.total or None)  # 0: not known
        elif isinstance(event, JudgeCallDone) and event.model_calls:
            self._judge_calls += event.model_calls
            progress.update(task, judge=f"judge calls {self._judge_calls}")
