"""Criteria: the registry, deterministic criteria, efficiency metrics and custom metrics."""

from agenteval.criteria.base import (
    Criterion,
    CriterionResult,
    EvalContext,
    InvocationScore,
    PerInvocationCriterion,
)
from agenteval.criteria.defaults import (
    default_registry,
    register_criterion,
    register_function,
    resolve_metrics,
)
from agenteval.criteria.registry import Registry
from agenteval.criteria.rouge import rouge1_fmeasure, tokenize
from agenteval.criteria.spec import ConfiguredMetric, MetricSpec

__all__ = [
    "ConfiguredMetric",
    "Criterion",
    "CriterionResult",
    "EvalContext",
    "InvocationScore",
    "MetricSpec",
    "PerInvocationCriterion",
    "Registry",
    "default_registry",
    "register_criterion",
    "register_function",
    "resolve_metrics",
    "rouge1_fmeasure",
    "tokenize",
]
