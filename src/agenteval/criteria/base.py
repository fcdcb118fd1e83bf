"""The criterion contract: configuration in, a result out; criteria are stateless.

A criterion scores a case's actual invocations (against the expected ones when it needs a
reference). Deterministic criteria implement `score` (sync, cheap); criteria that call a model
implement `ascore`. Exceptions raised by a criterion are recorded by the runner as that
criterion's error; they never stop the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

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
    from agenteval.criteria.judge.service import JudgeService


@dataclass
class InvocationScore:
    """One invocation's score. `score is None` means not evaluated; `error` says why."""

    score: float | None
    details: EvalMetricResultDetails | None = None
    error: str | None = None


@dataclass
class CriterionResult:
    """A criterion's result for a case: the overall score and one entry per invocation."""

    score: float | None
    per_invocation: list[InvocationScore]
    details: EvalMetricResultDetails | None = None
    error: str | None = None
    status: EvalStatus | None = None  # set only by criteria that decide status themselves
    records: list[JudgeRecord] = field(default_factory=list)


@dataclass
class EvalContext:
    """Everything a criterion may read about one case."""

    actual: Sequence[Invocation]
    expected: Sequence[Invocation] | None = None
    scenario: ConversationScenario | None = None
    session_state: dict[str, Any] | None = None
    case_rubrics: Sequence[Rubric] = ()
    judge: JudgeService | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    trace: Trace | None = None  # the case run's spans, when they were recorded


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


class Criterion:
    """Base of every criterion. Subclasses set `criterion_model` and implement score/ascore."""

    criterion_model: ClassVar[type[BaseCriterion]] = BaseCriterion
    requires_expected: ClassVar[bool] = False
    is_async: ClassVar[bool] = False

    def __init__(self, metric_name: str, criterion: BaseCriterion) -> None:
        self.metric_name = metric_name
        self.criterion = criterion

    def score(self, ctx: EvalContext) -> CriterionResult:
        """Scores a case synchronously (deterministic criteria)."""
        raise NotImplementedError

    async def ascore(self, ctx: EvalContext) -> CriterionResult:
        """Scores a case; by default the synchronous `score`."""
        return self.score(ctx)


class PerInvocationCriterion(Criterion):
    """A reference-based criterion scored per invocation pair and averaged over the case."""

    requires_expected = True

    def score_pair(self, actual: Invocation, expected: Invocation) -> float:
        """The score of one actual invocation against its expected one."""
        raise NotImplementedError

    def score(self, ctx: EvalContext) -> CriterionResult:
        if ctx.expected is None:
            raise ValueError(f"{self.metric_name} needs expected invocations")
        scores = [self.score_pair(a, e) for a, e in zip(ctx.actual, ctx.expected, strict=False)]
        overall = fsum_left(scores) / len(scores) if scores else None
        return CriterionResult(overall, [InvocationScore(s) for s in scores])
