"""The built-in metrics, as registry specs."""

from __future__ import annotations

from agenteval.criteria.efficiency import (
    InferenceCallCount,
    InvocationDuration,
    TokenUsage,
    ToolCallCount,
)
from agenteval.criteria.handoffs import HandoffLoops, TurnAgentMatch
from agenteval.criteria.judge.hallucinations import HallucinationsV1
from agenteval.criteria.judge.multi_turn import (
    MultiTurnTaskSuccess,
    MultiTurnToolUseQuality,
    MultiTurnTrajectoryQuality,
    RubricMultiTurnTrajectoryQuality,
)
from agenteval.criteria.judge.response import FinalResponseMatchV2, SafetyV1
from agenteval.criteria.judge.rubrics import RubricFinalResponseQuality, RubricToolUseQuality
from agenteval.criteria.judge.simulator_quality import PerTurnUserSimulatorQuality
from agenteval.criteria.judge.trajectory_judge import TrajectoryJudgeV1
from agenteval.criteria.rouge import ResponseMatchScore
from agenteval.criteria.spec import MetricSpec, spec_for_class
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
        spec_for_class("turn_agent_match_v1", TurnAgentMatch),
        spec_for_class("handoff_loops_v1", HandoffLoops),
        spec_for_class("final_response_match_v2", FinalResponseMatchV2),
        spec_for_class("rubric_based_final_response_quality_v1", RubricFinalResponseQuality),
        spec_for_class("rubric_based_tool_use_quality_v1", RubricToolUseQuality),
        spec_for_class("hallucinations_v1", HallucinationsV1),
        spec_for_class("safety_v1", SafetyV1),
        spec_for_class("multi_turn_task_success_v1", MultiTurnTaskSuccess),
        spec_for_class("multi_turn_trajectory_quality_v1", MultiTurnTrajectoryQuality),
        spec_for_class("multi_turn_tool_use_quality_v1", MultiTurnToolUseQuality),
        spec_for_class("rubric_based_multi_turn_trajectory_quality_v1",
                       RubricMultiTurnTrajectoryQuality),
        spec_for_class("per_turn_user_simulator_quality_v1", PerTurnUserSimulatorQuality),
        spec_for_class("trajectory_judge_v1", TrajectoryJudgeV1),
        spec_for_class("tool_call_count_v1", ToolCallCount, max_value=_UNBOUNDED,
                       informational=True),
        spec_for_class("inference_call_count_v1", InferenceCallCount, max_value=_UNBOUNDED,
                       informational=True),
        spec_for_class("token_usage_v1", TokenUsage, max_value=_UNBOUNDED, informational=True),
        spec_for_class("invocation_duration_v1", InvocationDuration, max_value=_UNBOUNDED,
                       informational=True),
    ]
