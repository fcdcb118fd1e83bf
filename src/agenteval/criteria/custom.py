"""Custom criteria: plain Python functions named in the config, or registered from Python.

A function takes `(eval_metric, actual_invocations, expected_invocations,
conversation_scenario)`, as ADK's custom metrics do, sync or async. It may return a number
(the overall score; status follows the threshold), a `CriterionResult`, an object shaped like
ADK's EvaluationResult (`overall_score`, `overall_eval_status`, `per_invocation_results`), or
one shaped like pydantic_evals' `EvaluationReason` (`value`, `reason`). The reason is the
function's own: a `reason` text on the result (and on each per-invocation result) is kept; a
bare number has none, and none is made up for it.
A score outside the metric's declared interval (`metric_info.metric_value_info.interval`,
default [0, 1]) is the criterion's error, not a score: a metric that returns 5 on a 0-1 scale
is broken, and its 5 would pass any threshold.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ConfigDict

from agenteval.criteria.base import Criterion, CriterionResult, EvalContext, InvocationScore
from agenteval.criteria.spec import MetricSpec
from agenteval.errors import DataError
from agenteval.schema import BaseCriterion, EvalConfig, EvalMetric, EvalStatus
from agenteval.schema.config import Interval


class CustomCriterionConfig(BaseCriterion):
    """A custom metric's criterion: a threshold plus any keys the function wants to read."""

    model_config = ConfigDict(defer_build=True, extra="allow")


def import_function(dotted: str) -> Callable[..., Any]:
    """Imports `package.module.function`; raises ImportError or AttributeError."""
    module_name, _, attr = dotted.rpartition(".")
    if not module_name:
        raise ImportError(f"{dotted!r} is not a dotted module.function path")
    fn = getattr(importlib.import_module(module_name), attr)
    if not callable(fn):
        raise TypeError(f"{dotted!r} is not callable")
    return fn  # type: ignore[no-any-return]


def _status(value: Any) -> EvalStatus | None:
    if value is None:
        return None
    if isinstance(value, EvalStatus):
        return value
    raw = getattr(value, "value", value)
    return EvalStatus(int(raw)) if isinstance(raw, int) else EvalStatus[str(raw).split(".")[-1]]


def _reason(value: Any) -> str | None:
    reason = getattr(value, "reason", None)
    return reason if isinstance(reason, str) and reason else None


def to_result(value: Any, n_invocations: int) -> CriterionResult:
    """Normalises whatever a custom function returned."""
    if isinstance(value, CriterionResult):
        return value
    if isinstance(value, (bool, int, float)):
        score = float(value)
        return CriterionResult(score, [InvocationScore(score) for _ in range(n_invocations)])
    if value is None:
        raise TypeError("the custom metric returned None")
    if not hasattr(value, "overall_score") and isinstance(getattr(value, "value", None),
                                                          (bool, int, float)):
        score = float(value.value)  # an EvaluationReason(value, reason)
        return CriterionResult(score, [InvocationScore(score) for _ in range(n_invocations)],
                               reason=_reason(value))
    overall = getattr(value, "overall_score", None)
    per = getattr(value, "per_invocation_results", None) or []
    return CriterionResult(
        None if overall is None else float(overall),
        [InvocationScore(getattr(p, "score", None), reason=_reason(p)) for p in per],
        status=_status(getattr(value, "overall_eval_status", None)),
        reason=_reason(value),
    )


class FunctionCriterion(Criterion):
    """Runs a custom metric function; scores outside `interval` make the result an error."""

    criterion_model = CustomCriterionConfig
    is_async = True

    def __init__(self, metric_name: str, criterion: BaseCriterion,
                 fn: Callable[..., Any], path: str | None = None,
                 interval: Interval | None = None) -> None:
        super().__init__(metric_name, criterion)
        self.fn = fn
        self.path = path
        self.interval = interval or Interval()

    async def ascore(self, ctx: EvalContext) -> CriterionResult:
        metric = EvalMetric(
            metric_name=self.metric_name,
            criterion=self.criterion.model_dump(),
            custom_function_path=self.path,
        )
        value = self.fn(metric, list(ctx.actual),
                        list(ctx.expected) if ctx.expected is not None else None, ctx.scenario)
        if inspect.isawaitable(value):
            value = await value
        return self.checked(to_result(value, len(ctx.actual)))

    def checked(self, result: CriterionResult) -> CriterionResult:
        """`result`, or an error result if a score in it lies outside the declared interval."""
        scores = [("score", result.score)] + [
            (f"invocation {i + 1}'s score", p.score) for i, p in enumerate(result.per_invocation)]
        for what, score in scores:
            if score is not None and not self.interval.contains(score):
                return CriterionResult(None, [], error=(
                    f"the custom metric returned {what} {score}, outside its declared interval "
                    f"{self.interval} (metric_info.metric_value_info.interval)"))
        return result


def function_spec(name: str, fn: Callable[..., Any], *, path: str | None = None,
                  description: str = "", min_value: float = 0.0,
                  max_value: float = 1.0, interval: Interval | None = None) -> MetricSpec:
    """A metric spec for a custom function whose scores lie in `interval` (default: the closed
    [min_value, max_value])."""
    scores = interval or Interval(min_value=min_value, max_value=max_value)

    def factory(metric_name: str, criterion: BaseCriterion) -> Criterion:
        return FunctionCriterion(metric_name, criterion, fn, path, scores)

    return MetricSpec(name=name, factory=factory, criterion_model=CustomCriterionConfig,
                      description=description, min_value=scores.min_value,
                      max_value=scores.max_value, custom_function_path=path)


def config_specs(config: EvalConfig, source: str | Path | None) -> list[MetricSpec]:
    """Specs for the config's `custom_metrics`, their functions imported; errors name the
    failing key. (`metric_info` was validated with the config.)"""
    specs = []
    for name, decl in (config.custom_metrics or {}).items():
        key = f"custom_metrics.{name}.code_config.name"
        try:
            fn = import_function(decl.code_config.name)
        except Exception as e:  # any import-time failure is the config's problem
            raise DataError(source, key, f"cannot import {decl.code_config.name!r}: {e}") from None
        interval = decl.metric_info.interval() if decl.metric_info is not None else Interval()
        specs.append(function_spec(name, fn, path=decl.code_config.name,
                                   description=decl.description, interval=interval))
    return specs
