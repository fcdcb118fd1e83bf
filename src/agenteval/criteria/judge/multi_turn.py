"""Multi-turn criteria: one judgement over the whole conversation, reported on its last turn.

`multi_turn_task_success_v1`, `multi_turn_trajectory_quality_v1` and
`multi_turn_tool_use_quality_v1` ask one yes/no question each (local judge, no cloud service);
`rubric_based_multi_turn_trajectory_quality_v1` asks one per TRAJECTORY_QUALITY rubric (from the
criterion, the case, and every expected invocation). Earlier invocations carry no score.
"""

from __future__ import annotations

from typing import ClassVar

from agenteval.criteria.base import EvalContext
from agenteval.criteria.judge.base import JudgeCriterion
from agenteval.criteria.judge.engine.decision import JudgeQuestion
from agenteval.criteria.judge.prompting import context, prompts
from agenteval.criteria.judge.rubrics import RubricCriterion, effective_rubrics, rubric_text


def _conversation(ctx: EvalContext) -> tuple[str, tuple[str, ...]]:
    """The conversation text, and the passages screened out of the agent's replies."""
    replies = [context.agent_text(inv) for inv in ctx.actual]
    text = prompts.conversation_text([
        (context.user_text(inv), context.calls(inv), reply.text)
        for inv, reply in zip(ctx.actual, replies, strict=True)])
    return text, tuple(cut for reply in replies for cut in reply.removed)


class MultiTurnQuestion(JudgeCriterion):
    """A yes/no question about the whole conversation."""

    question: ClassVar[str] = ""

    def questions(self, ctx: EvalContext) -> list[JudgeQuestion]:
        if not ctx.actual:
            raise ValueError("the conversation has no invocations")
        convo, screened = _conversation(ctx)
        return [JudgeQuestion(len(ctx.actual) - 1, None, prompts.multi_turn(
            context.instructions(ctx.actual), convo, self.question), screened=screened)]


class MultiTurnTaskSuccess(MultiTurnQuestion):
    """`multi_turn_task_success_v1`: did the agent accomplish the user's goals?"""

    question = prompts.MULTI_TURN_QUESTIONS["task_success"]


class MultiTurnTrajectoryQuality(MultiTurnQuestion):
    """`multi_turn_trajectory_quality_v1`: were the agent's steps sensible across the turns?"""

    question = prompts.MULTI_TURN_QUESTIONS["trajectory_quality"]


class MultiTurnToolUseQuality(MultiTurnQuestion):
    """`multi_turn_tool_use_quality_v1`: right tools, right arguments, results used faithfully?"""

    question = prompts.MULTI_TURN_QUESTIONS["tool_use_quality"]


class RubricMultiTurnTrajectoryQuality(RubricCriterion):
    """`rubric_based_multi_turn_trajectory_quality_v1`: rubrics over the whole conversation."""

    rubric_type = "TRAJECTORY_QUALITY"

    def questions(self, ctx: EvalContext) -> list[JudgeQuestion]:
        if not ctx.actual:
            raise ValueError("the conversation has no invocations")
        expected = [r for inv in (ctx.expected or []) for r in (inv.rubrics or [])]
        rubrics = effective_rubrics(self.criterion, self.rubric_type, ctx.case_rubrics, expected)
        if not rubrics:
            raise self.no_rubrics(ctx)
        (convo, screened), instr = _conversation(ctx), context.instructions(ctx.actual)
        last = len(ctx.actual) - 1
        return [JudgeQuestion(last, r.rubric_id, prompts.multi_turn_rubric(
            instr, convo, rubric_text(r)), screened=screened)
            for r in rubrics]
