"""The criterion contract: configuration in, a result out; criteria are stateless.

A criterion scores a case's actual invocations (against the expected ones when it needs a
reference). Deterministic criteria implement `score` (sync, cheap); criteria that call a model
implement `ascore`. Exceptions raised by a criterion are recorded by the runner as that
criterion's error; they never stop the run.

A result carries its reason beside its score, made where the score is decided (as
pydantic_evals' `EvaluationReason(value, reason)`): the first mismatched call, the ROUGE
precision and recall, the judge's vote, the threshold it was held to. The runner stores the
reasons in the result document (`EvalCaseResult.reasons`); reports display them and never
recompute them.

A reason may be given as its text or as a zero-argument function that makes it (`Reason`): it
is then made only when read (`reason` reads the text), so reasons that are never stored (a
passing invocation's, an informational criterion's) cost nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, Literal, overload

from agenteval.criteria.reasons import mean_reason_of
from agenteval.schema import (
    BaseCriterion,
    ConversationScenario,
    EvalMetricResultDetails,
    EvalStatus,
    Invocation,
    JudgeRecord,
    Rubric,
)
from agenteval.schema.trace import Trace

if TYPE_CHECKING:
    from agenteval.criteria.judge.engine.service import JudgeService
    from agenteval.tracing.figures import Figures


# A reason as given: its text, a function making it when it is first read, or none.
Reason = str | Callable[[], str | None] | None


class LazyReason:
    """A dataclass field holding a `Reason`: set to the text or to a function making it; read as
    the text (the function is called on the first read, and its text kept). The value lives in
    the instance's slot `_<name>`, which the classes' own `__init__` set directly (a descriptor
    call per result is a measurable share of scoring a large run)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}"

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> None: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> str | None: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> str | None:
        if obj is None:
            return None  # the field's default
        value = getattr(obj, self.slot)
        if value is None or isinstance(value, str):
            return value
        text: str | None = value()
        setattr(obj, self.slot, text)
        return text

    def __set__(self, obj: object, value: Reason) -> None:
        setattr(obj, self.slot, value)


@dataclass(init=False)
class InvocationScore:
    """One invocation's score. `score is None` means not evaluated; `error` says why.
    `reason`: why it scored so, in words (None when the criterion gives none). `agents`: when
    the criterion matched each agent on its own, every agent's verdict (agent -> None when it
    passed, else why not); None otherwise.

    Slotted (no `__dict__`): a large run makes hundreds of thousands, and a dict each was as
    much again for the allocator and, where results are kept, for the cyclic collector. The
    fields' defaults are `__init__`'s (a class default would shadow its slot)."""

    __slots__ = ("_reason", "agents", "details", "error", "score")

    score: float | None
    details: EvalMetricResultDetails | None
    error: str | None
    agents: dict[str, str | None] | None
    reason: LazyReason = LazyReason()  # (last: the only field with a class default)

    def __init__(self, score: float | None, details: EvalMetricResultDetails | None = None,
                 error: str | None = None, reason: Reason = None,
                 agents: dict[str, str | None] | None = None) -> None:
        self.score, self.details, self.error, self._reason = score, details, error, reason
        self.agents = agents


@dataclass(init=False)
class CriterionResult:
    """A criterion's result for a case: the overall score and one entry per invocation.
    `reason`: why the case scored so (the invocation that decided it and the threshold it was
    held to); None when the criterion gives none. Slotted, as `InvocationScore`."""

    __slots__ = ("_reason", "details", "error", "per_invocation", "records", "score", "status")

    score: float | None
    per_invocation: list[InvocationScore]
    details: EvalMetricResultDetails | None
    error: str | None
    status: EvalStatus | None  # set only by criteria that decide status themselves
    records: list[JudgeRecord]
    reason: LazyReason = LazyReason()

    def __init__(self, score: float | None, per_invocation: list[InvocationScore],
                 details: EvalMetricResultDetails | None = None, error: str | None = None,
                 status: EvalStatus | None = None, records: list[JudgeRecord] | None = None,
                 reason: Reason = None) -> None:
        self.score, self.per_invocation, self.details, self.error = score, per_invocation, details, error
        self.status, self.records, self._reason = status, [] if records is None else records, reason


# `EvalContext.extras` key: True when the user simulator's turn limit (`max_allowed_invocations`)
# ended the conversation, not the simulated user.
TURN_LIMITED = "user_simulator_turn_limit"


@dataclass
class EvalContext:
    """Everything a criterion may read about one case (`extras`: `TURN_LIMITED`)."""

    actual: Sequence[Invocation]
    expected: Sequence[Invocation] | None = None
    scenario: ConversationScenario | None = None
    session_state: dict[str, Any] | None = None
    case_rubrics: Sequence[Rubric] = ()
    judge: JudgeService | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    trace: Trace | None = None  # the case run's spans, when they were recorded
    # The figures of `trace`'s invocations (`tracing.figures.invocations_figures`) with the
    # trace and count they were read for: read once a case, not once per efficiency criterion
    # (three read them); set by `agenteval.criteria.efficiency`, not by callers.
    figures: tuple[Trace, int, list[Figures | None]] | None = field(
        default=None, init=False, repr=False, compare=False)


def fsum_left(values: Sequence[float]) -> float:
    """Left-to-right float sum, as ADK adds scores (Python 3.12's `sum()` compensates rounding,
    which changes the last digit of some means and would break exact parity)."""
    total = 0.0
    for v in values:
        total += v
    return total


def mean(values: Sequence[float | None]) -> float | None:
    """Mean of the non-None values; None when there are none."""
    present = [v for v in values if v is not None]
    return fsum_left(present) / len(present) if present else None


# Whether a criterion reads the expected events' authors (and handoff targets) as agents of the
# app: never; in a case whose expected events name two authors or more; always.
AgentUse = Literal["never", "several", "always"]


class Criterion:
    """Base of every criterion. Subclasses set `criterion_model` and implement score/ascore."""

    criterion_model: ClassVar[type[BaseCriterion]] = BaseCriterion
    requires_expected: ClassVar[bool] = False
    is_async: ClassVar[bool] = False
    # Whether one instance may score every case of a run: it keeps nothing of a case between
    # calls (what it holds derives from its configuration alone). A run then builds it once per
    # metric (`ConfiguredMetric.build`) instead of once per case. Not inherited: each class
    # states it itself (`__init_subclass__`), so a subclass that keeps state (a plugin's) is
    # built per case unless it says otherwise.
    reusable: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.reusable = bool(cls.__dict__.get("reusable", False))

    def __init__(self, metric_name: str, criterion: BaseCriterion) -> None:
        self.metric_name = metric_name
        self.criterion = criterion

    def agent_use(self) -> AgentUse:
        """Whether scoring reads the expected events' authors as the app's agents (see
        `AgentUse`): a run refuses, before it starts, an expected author that is not an agent of
        the app when some criterion does (it could only fail the case)."""
        return "never"

    def score(self, ctx: EvalContext) -> CriterionResult:
        """Scores a case synchronously (deterministic criteria)."""
        raise NotImplementedError

    async def ascore(self, ctx: EvalContext) -> CriterionResult:
        """Scores a case; by default the synchronous `score`."""
        return self.score(ctx)


class PerInvocationCriterion(Criterion):
    """A reference-based criterion scored per invocation pair and averaged over the case.

    Subclasses implement `score_pair`, or `assess_pair` to give the score with its reason. The
    overall reason is the mean against the threshold, naming the lowest-scoring invocation.
    """

    requires_expected = True

    def score_pair(self, actual: Invocation, expected: Invocation) -> float:
        """The score of one actual invocation against its expected one."""
        raise NotImplementedError

    def assess_pair(self, actual: Invocation, expected: Invocation) -> InvocationScore:
        """The score of one invocation pair with its reason; by default `score_pair`'s score
        and no reason."""
        return InvocationScore(self.score_pair(actual, expected))

    def score(self, ctx: EvalContext) -> CriterionResult:
        if ctx.expected is None:
            raise ValueError(f"{self.metric_name} needs expected invocations")
        return self.summarise([self.assess_pair(a, e)
                               for a, e in zip(ctx.actual, ctx.expected, strict=False)])

    def summarise(self, per: list[InvocationScore], overall: float | None = None) -> CriterionResult:
        """The case's result from its invocations' scores: their left-to-right mean when every
        invocation was scored (else None), with the overall reason made when read. `overall`:
        that mean, when the caller already has it (None: computed here)."""
        if overall is None:
            scores = [p.score for p in per if p.score is not None]
            overall = fsum_left(scores) / len(scores) if scores and len(scores) == len(per) else None
        # Positional, and the reason a partial: once per case and criterion, and keyword
        # arguments to a Python __init__ cost half as much again.
        return CriterionResult(overall, per, None, None, None, None,
                               partial(_mean_reason, overall, self.criterion.threshold, per))


def _mean_reason(overall: float | None, threshold: float, per: list[InvocationScore]) -> str | None:
    # Asks only for the reason of the invocation it names (an invocation's is made when read).
    return mean_reason_of(overall, threshold, [p.score for p in per], lambda i: per[i].reason)
