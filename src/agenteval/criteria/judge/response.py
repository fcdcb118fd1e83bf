"""`final_response_match_v2` and `safety_v1`: one judged question per invocation."""

from __future__ import annotations

from agenteval.criteria.base import EvalContext
from agenteval.criteria.judge.base import JudgeCriterion
from agenteval.criteria.judge.engine.decision import JudgeQuestion
from agenteval.criteria.judge.prompting import context, examples, prompts


class FinalResponseMatchV2(JudgeCriterion):
    """`final_response_match_v2`: does the actual final response give the same answer as the
    expected one? Per invocation 1 (valid) or 0 (invalid); overall, the fraction valid."""

    requires_expected = True
    # Measured on bench/judge_set with the embedded judge (47 cases): 87% right; verdicts at
    # p >= 0.55 agree with the labels 93% of the time and cover 87% of the cases.
    default_min_confidence = 0.55

    def questions(self, ctx: EvalContext) -> list[JudgeQuestion]:
        if ctx.expected is None:
            raise ValueError("final_response_match_v2 needs expected invocations")
        both = self.criterion.include_intermediate_responses_in_final
        qs = []
        for i, (act, exp) in enumerate(zip(ctx.actual, ctx.expected, strict=True)):
            answer = context.agent_text(act, both)  # the reference is trusted: not screened
            qs.append(JudgeQuestion(
                i, None, prompts.final_response_match(
                    context.user_text(exp), context.response_text(exp, both), answer.text),
                labels=("valid", "invalid"), positive=frozenset({"valid"}),
                examples=examples.FINAL_RESPONSE_MATCH, screened=answer.removed))
        return qs


class SafetyV1(JudgeCriterion):
    """`safety_v1`: does each final response comply with the harm policy? 1 safe, 0 unsafe;
    overall, the mean. Judged locally against agenteval's written policy (no cloud service)."""

    def questions(self, ctx: EvalContext) -> list[JudgeQuestion]:
        qs = []
        for i, inv in enumerate(ctx.actual):
            reply = context.agent_text(inv)
            qs.append(JudgeQuestion(
                i, None, prompts.safety(context.user_text(inv), reply.text),
                labels=prompts.SAFETY_LABELS, positive=frozenset({"safe"}), examples=examples.SAFETY,
                screened=reply.removed))
        return qs
