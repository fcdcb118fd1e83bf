"""The built-in metrics, as registry specs."""

from __future__ import annotations

from agenteval.criteria.efficiency import (
    InferenceCallCount,
    InvocationDuration,
    TokenUsage,
    ToolCallCount,
)
from agenteval.criteria.registry import MetricSpec, spec_for_class
from agenteval.criteria.rouge import ResponseMatchScore
from agenteval.criteria.trajectory import (
    ToolTrajectoryAvgScore,
    ToolTrajectoryPrecision,
    ToolTrajectoryRecall,
    ToolTrajectorySingleToolUse,
)

_UNBOUNDED = 1e18


def builtin_specs() -> list[MetricSpec]:
    """Every built-in metric."""
    return [
        spec_for_class("tool_trajectory_avg_score", ToolTrajectoryAvgScore),
        spec_for_class("response_match_score", ResponseMatchScore),
        spec_for_class("tool_trajectory_precision", ToolTrajectoryPrecision),
        spec_for_class("tool_trajectory_recall", ToolTrajectoryRecall),
        spec_for_class("tool_trajectory_single_tool_use", ToolTrajectorySingleToolUse),
        spec_for_class("tool_call_count_v1", ToolCallCount, max_value=_UNBOUNDED,
                       informational=True),
        spec_for_class("inference_call_count_v1", InferenceCallCount, max_value=_UNBOUNDED,
                       informational=True),
        spec_for_class("token_usage_v1", TokenUsage, max_value=_UNBOUNDED, informational=True),
        spec_for_class("invocation_duration_v1", InvocationDuration, max_value=_UNBOUNDED,
                       informational=True),
    ]
