"""The console's progress bar, fed by the runner's progress events."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agenteval.schema.progress import CaseFinished, JudgeCallDone, ProgressEvent, RunStarted


class ProgressBar:
    """A transient bar on stderr: case runs done of the total, and judge calls made so far.
    Use as a context manager; pass the instance as the run's listener. The bar (and rich's
    refresh thread) starts at the first event, not on entering: until then the process keeps
    one thread, so `score` may fork its worker processes from it (`runner.sharded`)."""

    def __init__(self, description: str = "evaluating") -> None:
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn("{task.fields[judge]}"), TimeElapsedColumn(),
                                  console=Console(stderr=True), transient=True)
        self._task = self._progress.add_task(description, total=None, judge="")
        self._judge_calls = 0
        self._entered = self._started = False

    def __enter__(self) -> ProgressBar:
        self._entered = True
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._entered = False
        if self._started:
            self._started = False
            self._progress.__exit__(kind, value, tb)

    def __call__(self, event: ProgressEvent) -> None:
        if self._entered and not self._started:
            self._started = True
            self._progress.__enter__()
        if isinstance(event, RunStarted):
            self._progress.update(self._task, total=event.total or None)  # 0: not known
        elif isinstance(event, CaseFinished):
            self._progress.advance(self._task)
        elif isinstance(event, JudgeCallDone) and event.model_calls:
            self._judge_calls += event.model_calls
            self._progress.update(self._task, judge=f"judge calls {self._judge_calls}")
