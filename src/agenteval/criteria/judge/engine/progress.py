"""Where a case run's judging stands, for progress reports: questions planned and answered.

The scorer of a case run opens `judging(...)` around its scoring; the judged criteria `plan`
their questions as they start asking them (the listener given to `judging` hears
`JudgeCallsPlanned`); a progress listener wrapped by `tagging` then hears each answered
question (`JudgeCallDone`) with the case run it belongs to, "k of n" and the time since the
case's first question. The tally travels with the calling context (a context
variable), so concurrent case runs in one process keep their own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace

from agenteval.schema.progress import JudgeCallDone, JudgeCallsPlanned, Listener


@dataclass(eq=False, repr=False)  # compared by identity: two fewer methods compiled at import
class CaseJudging:
    """One case run's judge questions: planned so far, answered so far, and when the first
    was planned or answered (monotonic seconds; None before); `listener` hears each plan."""

    eval_set_id: str
    eval_id: str
    run_index: int
    listener: Listener | None = None
    planned: int = 0
    answered: int = 0
    started: float | None = field(default=None)

    def _begin(self) -> None:
        if self.started is None:
            self.started = time.monotonic()


_CASE: ContextVar[CaseJudging | None] = ContextVar("agenteval_case_judging", default=None)


@contextmanager
def judging(eval_set_id: str, eval_id: str, run_index: int,
            listener: Listener | None = None) -> Iterator[CaseJudging]:
    """Judge questions asked inside (in this context and the tasks it starts) are the case
    run's; `listener` hears `JudgeCallsPlanned` as criteria plan theirs."""
    tally = CaseJudging(eval_set_id, eval_id, run_index, listener)
    token = _CASE.set(tally)
    try:
        yield tally
    finally:
        _CASE.reset(token)


def plan(questions: int) -> None:
    """`questions` more judge questions are about to be asked for the current case run (none
    is counted outside `judging`)."""
    tally = _CASE.get()
    if tally is not None and questions > 0:
        tally._begin()
        tally.planned += questions
        if tally.listener is not None:
            tally.listener(JudgeCallsPlanned(tally.eval_set_id, tally.eval_id, tally.run_index,
                                             tally.planned))


def tag(event: JudgeCallDone) -> JudgeCallDone:
    """Counts `event` as an answered question of the current case run and returns it with the
    case run and its count (`call` of `calls`, `seconds`); unchanged outside `judging`."""
    tally = _CASE.get()
    if tally is None:
        return event
    tally._begin()
    assert tally.started is not None
    tally.answered += 1
    tally.planned = max(tally.planned, tally.answered)  # an unplanned check or escalation
    return replace(event, eval_set_id=tally.eval_set_id, eval_id=tally.eval_id,
                   run_index=tally.run_index, call=tally.answered, calls=tally.planned,
                   seconds=round(time.monotonic() - tally.started, 3))


def tagging(listener: Callable[[JudgeCallDone], None]) -> Callable[[JudgeCallDone], None]:
    """`listener`, hearing each event `tag`ged with its case run."""
    return lambda event: listener(tag(event))


__all__ = ["CaseJudging", "judging", "plan", "tag", "tagging"]
