"""`trajectory_judge_v1`: a reference-free judge of each turn's tool calls.

Per invocation, needing no expected calls: did the calls accomplish the user's request, without
needless or harmful steps, and does the reply report their results truly? Asked as narrow checks
(`conversation_checks.trajectory`): the turn's goal (what the user asked for against what the
calls, each with its arguments, result and, where the recorded events carry it, the agent that
made it, did), the reply's report of the results, one question per call that changes something
(was it asked for?), and a rule for a call repeated with the same arguments. The invocation
scores 1 (accomplished) when every check passes, else 0; overall, the mean over invocations.
Asked through the `JudgeCriterion` machinery like the other judged criteria (samples, confidence
from log-probabilities, `min_confidence`, `escalate_to`, audit records with the prompt and every
raw reply).

Unlike `multi_turn_trajectory_quality_v1` (one yes/no about the whole conversation, reported on
its last turn, calls without authors), this one judges every turn on its own, names the agent of
each call, and asks for the request to have been accomplished, not only for sensible steps.
"""

from __future__ import annotations

from collections.abc import Sequence

from agenteval.criteria.base import EvalContext
from agenteval.criteria.judge import conversation_checks
from agenteval.criteria.judge.conversation_checks import CheckedConversation, Checks


class TrajectoryJudgeV1(CheckedConversation):
    """`trajectory_judge_v1`: per invocation 1 (accomplished: every check passed) or 0."""

    def checks(self, ctx: EvalContext) -> Checks:
        return conversation_checks.trajectory(ctx.actual)

    def scored(self, ctx: EvalContext) -> Sequence[int]:
        return range(len(ctx.actual))
