"""The judged-criterion base: questions per invocation, decisions, audit records, reasons.

A subclass lists its questions (`JudgeQuestion`: which invocation, which rubric or sentence,
the prompt, the labels and which labels count as positive) and how per-question scores combine.
The judge engine decides each question (`engine.cascade.decide_all`: vote → confidence → held
to `min_confidence` → escalated → cross-checked, see `engine.decision`); all questions of a
case are asked concurrently, up to `parallelism_limit` at once. This module turns the
decisions into audit records (`JudgeRecord`) and the criterion's result: a question without a
score is a judge error, which makes the metric not evaluated and, by default, fails the case.

Reasons (`explain`): per invocation the vote of its question(s) with the confidence and the
`min_confidence` it was held to; overall the score against the threshold and the invocation
that scored lowest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from agenteval.criteria.base import Criterion, CriterionResult, EvalContext, InvocationScore, mean
from agenteval.criteria.judge import explain, weak
from agenteval.criteria.judge.engine.cascade import Policy, decide_all
from agenteval.criteria.judge.engine.decision import Decision, DecisionOptions, JudgeQuestion
from agenteval.criteria.judge.engine.progress import plan
from agenteval.criteria.judge.engine.service import JudgeAnswer
from agenteval.criteria.judge.prompting import injection, prompts
from agenteval.criteria.reasons import mean_reason
from agenteval.schema import JudgeRecord, LlmAsAJudgeCriterion

# Criteria whose verdicts on the embedded 1.5B judge stay well below the 90% goal (53-74% on
# the labelled and blind sets, bench/README.md): front ends say so when they run there.
WEAK_ON_EMBEDDED = frozenset({
    "rubric_based_final_response_quality_v1", "rubric_based_tool_use_quality_v1"})


@dataclass(frozen=True)
class Answered:
    """A decided question as the criterion combines it: its score (the cross-check's when one
    was asked; None on judge error) and audit records: its own, then its cross-check's."""

    question: JudgeQuestion
    score: float | None
    record: JudgeRecord
    checks: tuple[JudgeRecord, ...] = ()

    @property
    def records(self) -> list[JudgeRecord]:
        return [self.record, *self.checks]


def keep_records(result: CriterionResult, premises: Sequence[JudgeRecord], done: Sequence[Answered]) -> None:
    """Puts the premises' and the decisions' records on `result`; any record with an error makes
    the result a judge error (no score) naming how many questions failed and the first."""
    result.records = [*premises, *(r for a in done for r in a.records)]
    failed = [r for r in premises if r.error] + [
        next(r for r in a.records if r.error is not None) for a in done if a.score is None]
    if failed:
        first = failed[0]
        # An uncertain verdict (below min_confidence, no stronger judge) is no judge fault: say
        # which it was rather than count it as an error.
        unsure = sum(1 for r in failed if (r.error or "").startswith("judge uncertain"))
        what = ("judge uncertain" if unsure == len(failed)
                else f"judge error{f' or uncertain ({unsure} uncertain)' if unsure else ''}")
        result.score = None
        result.error = (f"{what} on {len(failed)} of {len(done) + len(premises)} question(s); "
                        f"first: invocation {first.invocation_index}"
                        f"{f', {first.item}' if first.item else ''}: {first.error}")


class JudgeCriterion(Criterion):
    """Base of the LLM-judged criteria."""

    criterion_model = LlmAsAJudgeCriterion
    criterion: LlmAsAJudgeCriterion
    is_async = True
    # The shipped min_confidence for verdicts whose confidence is a probability (from
    # log-probabilities), used when judge_model_options sets none; chosen on the labelled
    # sets in bench/judge_set (see docs). None: no default threshold.
    default_min_confidence: ClassVar[float | None] = None

    def decision_options(self) -> DecisionOptions:
        """How sure this criterion's verdicts must be (see `engine.decision`): every verdict
        escalated when the criterion is below the floor on the embedded judge and a stronger
        judge is set (`weak.escalating`)."""
        options = self.criterion.judge_model_options
        return weak.escalating(self.metric_name, DecisionOptions(
            options.min_confidence, self.default_min_confidence, options.escalate_to or None),
            options.judge_model)

    def min_confidence(self, source: str | None) -> float | None:
        """The threshold below which a verdict of this confidence source is uncertain: the
        configured one, else the shipped default for probabilities."""
        return self.decision_options().threshold(source)

    def policy(self) -> Policy:
        """How the engine asks this criterion's questions."""
        options = self.criterion.judge_model_options
        return Policy(self.metric_name, options.judge_model, prompts.SYSTEM, options.num_samples,
                      options.parallelism_limit, self.decision_options(), options.rationales)

    def questions(self, ctx: EvalContext) -> list[JudgeQuestion]:
        """The questions to ask for this case."""
        raise NotImplementedError

    async def aquestions(self, ctx: EvalContext) -> tuple[list[JudgeQuestion], list[JudgeRecord]]:
        """The questions, and the records of any preparatory judge calls they were built from
        (a record with an `error` there makes the criterion a judge error). Default: `questions`."""
        return self.questions(ctx), []

    def record(self, q: JudgeQuestion, answer: JudgeAnswer) -> JudgeRecord:
        """The audit record of one answered question, before voting (no verdict yet)."""
        options = self.criterion.judge_model_options
        return JudgeRecord(
            metric_name=self.metric_name, invocation_index=q.invocation_index, item=q.item,
            judge_model=options.judge_model, prompt_version=prompts.PROMPT_VERSION,
            prompt=q.prompt, replies=answer.replies, verdicts=answer.readings,
            prompt_tokens=answer.prompt_tokens, cached=answer.cached, screened=list(q.screened),
            flagged=injection.flagged(q.prompt, q.screened),
            label_probs=None if answer.distribution is None else
            {k: round(v, 4) for k, v in answer.distribution.items()})

    def decision_record(self, d: Decision) -> JudgeRecord:
        """The audit record of one judge model's decision (its escalation's inside it)."""
        return self.record(d.question, d.answer).model_copy(update={
            "judge_model": d.model, "verdict": d.verdict, "score": d.score,
            "rationale": d.rationale, "error": d.error, "confidence": d.confidence,
            "confidence_source": d.confidence_source, "uncertain": d.uncertain,
            "span_id": d.span_id,
            "escalated": None if d.escalated is None else self.decision_record(d.escalated)})

    def answered(self, d: Decision) -> Answered:
        """A final decision as the criterion combines it; with `on_injection: "fail"`, a
        question whose material addressed the judge scores 0 (fails closed)."""
        checks = () if d.check is None else (self.decision_record(d.check),)
        record = self.decision_record(d)
        score = d.outcome
        if (self.criterion.judge_model_options.on_injection == "fail" and score is not None
                and (record.screened or record.flagged)):
            score = 0.0
        return Answered(d.question, score, record, checks)

    def combine(self, ctx: EvalContext, answered: Sequence[Answered]) -> CriterionResult:
        """Per invocation: mean of its questions' scores; overall: mean over all questions
        pooled (so, as in ADK, an invocation with more rubrics weighs more)."""
        per: list[InvocationScore] = []
        for i in range(len(ctx.actual)):
            mine = [a.score for a in answered if a.question.invocation_index == i]
            per.append(InvocationScore(mean(mine) if mine and None not in mine else None))
        return CriterionResult(mean([a.score for a in answered]), per)

    def explain(self, answered: Sequence[Answered], result: CriterionResult) -> None:
        """Fills the reasons `combine` left empty: per invocation, its questions' verdicts
        (`explain.invocation_text`); overall, the score against the threshold naming the
        lowest-scoring invocation, and what was found addressed to the judge in any question
        (`explain.injection_text`) when that invocation's reason does not say it: a passing
        invocation's reason is not kept, so the overall one is where every report reads it."""
        on_injection = self.criterion.judge_model_options.on_injection
        for i, inv in enumerate(result.per_invocation):
            if inv.reason is None:
                inv.reason = explain.invocation_text(
                    [a for a in answered if a.question.invocation_index == i], self.min_confidence,
                    on_injection)
        if result.reason is None:
            result.reason = mean_reason(result.score, self.criterion.threshold,
                                        [p.score for p in result.per_invocation],
                                        [p.reason for p in result.per_invocation], what="score")
            found = explain.injection_text(answered, on_injection)
            if found and result.reason is not None and found[2:] not in result.reason:
                result.reason += found

    async def ascore(self, ctx: EvalContext) -> CriterionResult:
        """Asks the questions (`aquestions`), has the engine decide them, and combines the
        decisions; any record with an error makes the result a judge error naming the first."""
        if ctx.judge is None:
            raise RuntimeError("no judge service was given to the scorer")
        questions, premises = await self.aquestions(ctx)
        if not questions and not premises:
            raise ValueError("nothing to judge (no rubrics or no responses)")
        plan(len(questions))  # for progress reports: "judge call k of n" of the case run
        done = [self.answered(d) for d in await decide_all(ctx.judge, questions, self.policy())]
        result = self.combine(ctx, done)
        keep_records(result, premises, done)
        self.explain(done, result)
        return result
