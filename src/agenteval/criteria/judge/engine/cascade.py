"""Asking the judge for decisions: the async half of the cascade in `engine.decision`.

`settle` asks one question: the judge model's answer is voted and held to the threshold
(`decide`); an uncertain verdict, when a stronger judge is configured, is asked again of it,
whose decision decides (`escalate`). `decide_all` settles every question of a criterion
concurrently (up to `Policy.parallelism_limit` at once, or the judge's batch size when larger:
an embedded engine's slots, see `JudgeService.batch_size`), each followed by its cross-check
when its verdict calls for one, and returns the decisions in the questions' order. Each judge call
has its span (`engine.spans`). Nothing here changes a decision: each step makes a new one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import anyio

from agenteval.criteria.judge.engine.decision import (
    Decision,
    DecisionOptions,
    JudgeQuestion,
    cross_check,
    decide,
    escalate,
    hold,
    needs_check,
)
from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.criteria.judge.engine.spans import judge_span, traced
from agenteval.schema.criterion import Rationales


@dataclass(frozen=True)
class Policy:
    """How one criterion's questions are asked: its metric (named on the spans), the judge
    model, the system prompt, `num_samples` per question, how many questions are in flight at
    once, how sure a verdict must be (`options`), and which verdicts get a rationale
    (`rationales`; None: the judge service's own setting)."""

    metric: str
    judge_model: str
    system: str
    num_samples: int
    parallelism_limit: int
    options: DecisionOptions
    rationales: Rationales | None = None


def in_flight(judge: JudgeService, model: str, parallelism_limit: int) -> int:
    """How many of a criterion's questions are asked at once: its `parallelism_limit`, raised
    to the judge's batch size (an embedded engine's slots, which bound its calls themselves:
    asked one at a time, its other slots would sit idle)."""
    return max(parallelism_limit, judge.batch_size(model))


async def ask(judge: JudgeService, q: JudgeQuestion, model: str, policy: Policy,
              held: bool = True) -> Decision:
    """`model`'s decision on `q` in its judge span: voted, with its confidence, and (`held`)
    held to the policy's threshold."""
    with judge_span(policy.metric, q.invocation_index, q.item, model, q.prompt) as span:
        # A verdict whose confidence is judged (min_confidence) needs every sample.
        answer = await judge.ask(model, policy.system, q.prompt, q.labels, policy.num_samples,
                                 q.notes, q.examples, early_stop=not policy.options.min_confidence,
                                 positive=q.positive, rationales=policy.rationales)
        decision = traced(span, decide(q, model, answer))  # the span shows the judge's own verdict
    return hold(decision, policy.options) if held else decision


async def settle(judge: JudgeService, q: JudgeQuestion, policy: Policy) -> Decision:
    """The judge model's decision on `q`, escalated to the stronger judge when uncertain."""
    decision = await ask(judge, q, policy.judge_model, policy)
    if decision.awaits_escalation and policy.options.escalate_to:
        strong = await ask(judge, q, policy.options.escalate_to, policy, held=False)
        decision = escalate(decision, strong)
    return decision


async def decide_all(judge: JudgeService, questions: Sequence[JudgeQuestion],
                     policy: Policy) -> list[Decision]:
    """The final decision on each question (cross-checked where its verdict calls for it), in
    the questions' order; questions (and cross-checks) are asked concurrently, up to
    `in_flight(judge, policy)` at once."""
    decided: list[Decision | None] = [None] * len(questions)
    limiter = anyio.CapacityLimiter(in_flight(judge, policy.judge_model, policy.parallelism_limit))

    async def limited(q: JudgeQuestion) -> Decision:
        async with limiter:
            return await settle(judge, q, policy)

    async def one(index: int) -> None:
        decision = await limited(questions[index])
        check = decision.question.check
        if check is not None and needs_check(decision):
            decision = cross_check(decision, await limited(check))
        decided[index] = decision

    async with anyio.create_task_group() as tg:
        for index in range(len(questions)):
            tg.start_soon(one, index)
    return [d for d in decided if d is not None]


__all__ = ["Policy", "ask", "decide_all", "in_flight", "settle"]
