"""Progress of a run, as data: what the runner reports while it works.

The console's progress bar consumes these today; anything that watches a run (a web page over
server-sent events, a journal) takes the same stream. Events are plain frozen dataclasses:
cheap to build, safe to hand across threads, and serialisable with `dataclasses.asdict`.
"""


from collections.abc import Callable
from dataclasses import dataclass

from agenteval.schema.result import EvalStatus


@dataclass(frozen=True)
class RunStarted:
    """The run is about to start `total` case runs ((case, run) pairs)."""

    run_id: str
    total: int


@dataclass(frozen=True)
class CaseStarted:
    """A case run went into flight."""

    eval_set_id: str
    eval_id: str
    run_index: int


@dataclass(frozen=True)
class CaseFinished:
    """A case run was scored: its status, and the agent's error if inference failed."""

    eval_set_id: str
    eval_id: str
    run_index: int
    status: EvalStatus
    seconds: float
    error: str | None = None


@dataclass(frozen=True)
class TurnDone:
    """A turn of a case run finished in this process: `turn` turns done of `turns` (None for a
    simulated conversation, whose length is known only at its end). Every executor reports
    it, whichever process the agent runs in."""

    eval_set_id: str
    eval_id: str
    run_index: int
    turn: int
    turns: int | None


@dataclass(frozen=True)
class JudgeCallsPlanned:
    """A judged criterion of a case run is about to ask its questions: `calls` judge questions
    are now planned for the case run in all (so far: a later criterion, a cross-check or an
    escalation adds to them). Comes before those questions' `JudgeCallDone`s."""

    eval_set_id: str
    eval_id: str
    run_index: int
    calls: int


@dataclass(frozen=True)
class JudgeCallDone:
    """A judge question was answered: `model_calls` requests to `model` (0 when every sample
    came from the cache), `prompt_tokens` processed by them, `samples` verdicts read.

    When it was asked while a case run was scored, the event names that case run and says
    where its judging stands: `call` questions answered of `calls` planned so far (the
    questions of the judged criteria that have started; a later criterion, a cross-check or an
    escalation adds to them), `seconds` since its first question was asked. Otherwise (a
    question asked outside a case run) those are None and 0."""

    model: str
    model_calls: int
    prompt_tokens: int
    samples: int
    cached: bool
    eval_set_id: str | None = None
    eval_id: str | None = None
    run_index: int | None = None
    call: int = 0
    calls: int | None = None
    seconds: float | None = None


@dataclass(frozen=True)
class RunFinished:
    """The run ended (every case run scored)."""

    run_id: str
    passed: int
    failed: int
    not_evaluated: int
    seconds: float


ProgressEvent = (RunStarted | CaseStarted | TurnDone | CaseFinished | JudgeCallsPlanned | JudgeCallDone
                 | RunFinished)
Listener = Callable[[ProgressEvent], None]

__all__ = ["CaseFinished", "CaseStarted", "JudgeCallDone", "JudgeCallsPlanned", "Listener", "ProgressEvent",
           "RunFinished", "RunStarted", "TurnDone"]
