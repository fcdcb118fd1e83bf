"""A run builds a stateless criterion once per metric (`Criterion.reusable`), any other per case."""

import asyncio
import copy
import pickle

from agenteval.criteria import CriterionResult, EvalContext, Registry, default_registry
from agenteval.criteria.base import Criterion, InvocationScore
from agenteval.criteria.builtin import builtin_specs
from agenteval.criteria.judge.base import JudgeCriterion
from agenteval.criteria.rouge import ResponseMatchScore
from agenteval.criteria.spec import spec_for_class
from agenteval.runner import CaseRun, score_case
from agenteval.schema import EvalCase
from tests.helpers import inv


def test_a_reusable_criterion_is_built_once_per_metric() -> None:
    metric = default_registry().configure("tool_trajectory_avg_score", 1.0)
    first = metric.build()
    assert metric.build() is first
    # Another configured metric (another run, another threshold) builds its own.
    other = default_registry().configure("tool_trajectory_avg_score", 0.5)
    assert other.build() is not first and other.build().criterion.threshold == 0.5


def test_every_deterministic_builtin_is_reusable_and_no_judge_is() -> None:
    reusable = {s.name for s in builtin_specs() if getattr(s.factory, "reusable", False)}
    assert reusable == {
        "tool_trajectory_avg_score", "response_match_score", "tool_trajectory_precision",
        "tool_trajectory_recall", "tool_trajectory_single_tool_use", "turn_agent_match_v1",
        "handoff_loops_v1", "tool_call_count_v1", "inference_call_count_v1", "token_usage_v1",
        "invocation_duration_v1"}
    judged = [s for s in builtin_specs()
              if isinstance(s.factory, type) and issubclass(s.factory, JudgeCriterion)]
    assert judged and not any(s.factory.reusable for s in judged)  # type: ignore[attr-defined]


class _Counting(Criterion):
    """A plugin that keeps state between calls (which a criterion should not, but may)."""

    def __init__(self, metric_name: str, criterion: object) -> None:
        super().__init__(metric_name, criterion)  # type: ignore[arg-type]
        self.calls = 0

    def score(self, ctx: EvalContext) -> CriterionResult:
        self.calls += 1
        return CriterionResult(float(self.calls), [InvocationScore(1.0) for _ in ctx.actual])


class _CountingRouge(ResponseMatchScore):
    """A subclass of a reusable built-in that keeps state: not reusable unless it says so."""

    def __init__(self, metric_name: str, criterion: object) -> None:
        super().__init__(metric_name, criterion)  # type: ignore[arg-type]
        self.calls = 0

    def score(self, ctx: EvalContext) -> CriterionResult:
        self.calls += 1
        return CriterionResult(float(self.calls), [InvocationScore(1.0) for _ in ctx.actual])


def test_a_criterion_not_declared_reusable_is_built_per_case() -> None:
    assert not _Counting.reusable and not _CountingRouge.reusable and ResponseMatchScore.reusable
    registry = Registry()
    registry.register(spec_for_class("counting", _Counting, "counts"))
    registry.register(spec_for_class("counting_rouge", _CountingRouge, "counts"))
    metrics = [registry.configure("counting", 0.5), registry.configure("counting_rouge", 0.5)]
    run = CaseRun(case=EvalCase(eval_id="c", conversation=[inv()]), actual=[inv()], eval_set_id="s")
    for _ in range(3):  # each case sees a fresh instance: its first call
        result = asyncio.run(score_case(run, metrics))
        assert [m.score for m in result.overall_eval_metric_results] == [1.0, 1.0]


def test_the_kept_criterion_is_not_pickled_or_copied() -> None:
    metric = default_registry().configure("tool_trajectory_avg_score", 1.0)
    kept = metric.build()
    for other in (pickle.loads(pickle.dumps(metric)), copy.copy(metric), copy.deepcopy(metric)):
        assert other == metric
        assert other.build() is not kept and other.build() is other.build()
