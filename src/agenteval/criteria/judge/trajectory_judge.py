"""`trajectory_judge_v1`: a reference-free judge of each turn's tool calls.

One question per invocation, needing no expected calls: given the user's request, the tool
calls the agents made in order (each with its arguments, its result and, where the recorded
events carry it, the agent that made it) and the final reply, did the calls accomplish the
request without needless or harmful steps? `accomplished` scores 1, `not_accomplished` 0;
overall, the mean over invocations. Asked through the `JudgeCriterion` machinery like the other
judged criteria (samples, confidence from log-probabilities, `min_confidence`, `escalate_to`,
audit records with the prompt and every raw reply).

Unlike `multi_turn_trajectory_quality_v1` (one yes/no about the whole conversation, reported on
its last turn, calls without authors), this one judges every turn on its own, names the agent of
each call, and asks for the request to have been accomplished, not only for sensible steps.
"""

from __future__ import annotations

from agenteval.criteria.base import EvalContext
from agenteval.criteria.judge.base import JudgeCriterion
from agenteval.criteria.judge.engine.decision import JudgeQuestion
from agenteval.criteria.judge.prompting import context, examples, prompts


class TrajectoryJudgeV1(JudgeCriterion):
    """`trajectory_judge_v1`: per invocation 1 (accomplished) or 0 (not accomplished)."""

    def questions(self, ctx: EvalContext) -> list[JudgeQuestion]:
        if not ctx.actual:
            raise ValueError("the conversation has no invocations")
        qs = []
        for i, inv in enumerate(ctx.actual):
            reply = context.agent_text(inv)
            qs.append(JudgeQuestion(
                i, None, prompts.trajectory(context.user_text(inv), context.steps(inv), reply.text),
                labels=prompts.TRAJECTORY_LABELS, positive=frozenset({"accomplished"}),
                notes=prompts.note_names(prompts.TRAJECTORY_NOTES),
                examples=examples.TRAJECTORY, screened=reply.removed))
        return qs
