"""Judged criteria the embedded judge answers below the floor, and the escalation that follows.

Measured by their shipped certificates (`shipped_certificates/`, held-out labels in
`bench/judge_set/`): a criterion listed in `BELOW_FLOOR_ON_EMBEDDED` agreed with the labels less
often than `CRITERION_FLOOR` on the embedded judge, or was measured on fewer labels than a
certificate needs (`DEFAULT_MIN_LABELS`) to show otherwise. With a stronger judge configured
(`escalate_to`) and no `min_confidence` of the user's, each of its verdicts on the embedded judge
goes to the stronger judge (as a rubric family below the floor does, `rubrics`); without one,
nothing changes but what its certificate shows in reports. A `min_confidence` the user sets is
kept: the user chose which verdicts to trust. Every judged criterion's options pass through
`escalating` (`JudgeCriterion.decision_options`); it changes only those of the listed criteria.
"""

from __future__ import annotations

import math
from dataclasses import replace

from agenteval.criteria.judge.engine.decision import DecisionOptions

# Agreement below which a criterion's embedded verdicts are not trusted (rubrics.FAMILY_FLOOR).
CRITERION_FLOOR = 0.8
# The conversation criteria whose shipped certificate on the embedded judge is under the floor
# (bench/README.md, "Certificates of the conversation criteria"); a test keeps this equal to
# the certificates.
BELOW_FLOOR_ON_EMBEDDED: frozenset[str] = frozenset({
    "multi_turn_task_success_v1", "multi_turn_trajectory_quality_v1", "multi_turn_tool_use_quality_v1",
    "rubric_based_multi_turn_trajectory_quality_v1", "trajectory_judge_v1",
    "per_turn_user_simulator_quality_v1"})


def is_embedded(judge_model: str) -> bool:
    """Whether `judge_model` names the embedded judge."""
    from agenteval.models.base import ModelUnavailable
    from agenteval.models.resolve import parse_model_name

    try:
        return parse_model_name(judge_model).backend == "local"
    except ModelUnavailable:
        return False


def escalating(metric: str, options: DecisionOptions, judge_model: str) -> DecisionOptions:
    """`options`, with every verdict held to a threshold none reaches (so escalated) when
    `metric` is below the floor on the embedded judge, that is the judge, a stronger one is
    configured and the user set no `min_confidence`."""
    if options.escalate_to and options.min_confidence is None and metric in BELOW_FLOOR_ON_EMBEDDED \
            and is_embedded(judge_model):
        return replace(options, min_confidence=math.inf)
    return options


__all__ = ["BELOW_FLOOR_ON_EMBEDDED", "CRITERION_FLOOR", "escalating", "is_embedded"]
