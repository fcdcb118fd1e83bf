"""Criteria: the registry, deterministic criteria, efficiency metrics and custom metrics."""

from agenteval.criteria.base import (
    Criterion,
    CriterionResult,
    EvalContext,
    InvocationScore,
    PerInvocationCriterion,
)
from agenteval.criteria.custom import register_function
from agenteval.criteria.registry import (
    ConfiguredMetric,
    MetricSpec,
    Registry,
    default_registry,
    register_criterion,
)
from agenteval.criteria.rouge import rouge1_fmeasure, tokenize

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
    "rouge1_fmeasure",
    "tokenize",
]
