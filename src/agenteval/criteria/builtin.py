"""The built-in metrics, as registry specs.

The informational metrics (reported on every run) are registered with their classes; every
other one by name, its module imported when a run configures it (`Registry.register_deferred`):
a `score` of deterministic criteria never imports the judged criteria's modules (their prompts,
examples and rubric checks: 2-3% of its start-up), and a judged run imports only its own.
"""

from __future__ import annotations

import functools
import importlib

from agenteval.criteria.efficiency import (
    InferenceCallCount,
    InvocationDuration,
    TokenUsage,
    ToolCallCount,
)
from agenteval.criteria.registry import Registry
from agenteval.criteria.spec import MetricSpec, spec_for_class

_UNBOUNDED = 1e18

_BY_NAME = [  # (metric, module under agenteval.criteria, class), in the registry's order
    ("tool_trajectory_avg_score", "trajectory", "ToolTrajectoryAvgScore"),
    ("response_match_score", "rouge", "ResponseMatchScore"),
    ("tool_trajectory_precision", "trajectory", "ToolTrajectoryPrecision"),
    ("tool_trajectory_recall", "trajectory", "ToolTrajectoryRecall"),
    ("tool_trajectory_single_tool_use", "trajectory", "ToolTrajectorySingleToolUse"),
    ("turn_agent_match_v1", "handoffs", "TurnAgentMatch"),
    ("handoff_loops_v1", "handoffs", "HandoffLoops"),
    ("final_response_match_v2", "judge.response", "FinalResponseMatchV2"),
    ("rubric_based_final_response_quality_v1", "judge.rubrics", "RubricFinalResponseQuality"),
    ("rubric_based_tool_use_quality_v1", "judge.rubrics", "RubricToolUseQuality"),
    ("hallucinations_v1", "judge.hallucinations", "HallucinationsV1"),
    ("safety_v1", "judge.response", "SafetyV1"),
    ("multi_turn_task_success_v1", "judge.multi_turn", "MultiTurnTaskSuccess"),
    ("multi_turn_trajectory_quality_v1", "judge.multi_turn", "MultiTurnTrajectoryQuality"),
    ("multi_turn_tool_use_quality_v1", "judge.multi_turn", "MultiTurnToolUseQuality"),
    ("rubric_based_multi_turn_trajectory_quality_v1", "judge.multi_turn",
     "RubricMultiTurnTrajectoryQuality"),
    ("per_turn_user_simulator_quality_v1", "judge.simulator_quality", "PerTurnUserSimulatorQuality"),
    ("trajectory_judge_v1", "judge.trajectory_judge", "TrajectoryJudgeV1"),
]


def _informational() -> list[MetricSpec]:
    return [
        spec_for_class("tool_call_count_v1", ToolCallCount, max_value=_UNBOUNDED,
                       informational=True),
        spec_for_class("inference_call_count_v1", InferenceCallCount, max_value=_UNBOUNDED,
                       informational=True),
        spec_for_class("token_usage_v1", TokenUsage, max_value=_UNBOUNDED, informational=True),
        spec_for_class("invocation_duration_v1", InvocationDuration, max_value=_UNBOUNDED,
                       informational=True),
    ]


def _spec(name: str, module: str, cls: str) -> MetricSpec:
    """The spec of the built-in metric `name`, its class imported from its module."""
    return spec_for_class(name, getattr(importlib.import_module(f"agenteval.criteria.{module}"), cls))


def register_builtins(registry: Registry) -> Registry:
    """Registers every built-in metric in `registry` (the ones not informational by name, their
    modules imported when first looked up); returns it."""
    for name, module, cls in _BY_NAME:
        registry.register_deferred(name, functools.partial(_spec, name, module, cls))
    for spec in _informational():
        registry.register(spec)
    return registry


def builtin_specs() -> list[MetricSpec]:
    """Every built-in metric (each class imported)."""
    return [*(_spec(*entry) for entry in _BY_NAME), *_informational()]
