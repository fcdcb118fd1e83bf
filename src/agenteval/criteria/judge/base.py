"""The judged-criterion base: questions per invocation, majority vote, audit records.

A subclass lists its questions (`JudgeQuestion`: which invocation, which rubric or sentence,
the prompt, the labels and which labels count as positive) and how per-question scores combine.
All questions of a case are asked concurrently, up to `parallelism_limit` at once.

Voting: each question gets `num_samples` samples. The verdict is the label most samples chose
among those that could be read; a tie between the positive and negative side goes to the
negative side (fail closed). If half or more of the samples could not be read even after a
retry, the question has no verdict and is a judge error: the metric is not evaluated and, by
default, the case fails. A pass is never assembled from a minority of readable samples.

Reasons (`explain`): per invocation the vote of its question(s) with the confidence and the
`min_confidence` it was held to; overall the score against the threshold and the invocation
that scored lowest.

Cross-checks: a question may carry a second question (`check`) that is asked only when its
verdict is one of `check_when`; the second verdict then decides the question's score (so it can
only turn a pass into a fail or a judge error), and both records are kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal

import anyio

from agenteval.criteria.base import Criterion, CriterionResult, EvalContext, InvocationScore, mean
from agenteval.criteria.judge import explain, prompts
from agenteval.criteria.judge.logprobs import side_probability
from agenteval.criteria.judge.service import JudgeAnswer
from agenteval.criteria.judge.spans import judge_span, judged
from agenteval.criteria.reasons import mean_reason
from agenteval.schema import JudgeRecord, LlmAsAJudgeCriterion

# Criteria whose verdicts on the embedded 1.5B judge stay well below the 90% goal (53-74% on
# the labelled and blind sets, bench/README.md): front ends say so when they run there.
WEAK_ON_EMBEDDED = frozenset({
    "rubric_based_final_response_quality_v1", "rubric_based_tool_use_quality_v1"})


@dataclass(frozen=True)
class JudgeQuestion:
    """One question for the judge."""

    invocation_index: int
    item: str | None
    prompt: str
    labels: tuple[str, ...] = ("yes", "no")
    positive: frozenset[str] = frozenset({"yes"})
    notes: tuple[str, ...] = ()  # fields the judge fills in before its label
    examples: tuple[tuple[str, str], ...] = ()  # solved (prompt, reply) pairs shown first
    screened: tuple[str, ...] = ()  # passages cut from the agent's text (see `screen`)
    check: JudgeQuestion | None = None  # asked when this question's verdict is in check_when
    check_when: frozenset[str] = frozenset()


@dataclass
class Answered:
    """A question with its voted score (None on judge error) and audit records: its own, then
    its cross-check's when one was asked."""

    question: JudgeQuestion
    score: float | None
    record: JudgeRecord
    checks: list[JudgeRecord] = field(default_factory=list)

    @property
    def records(self) -> list[JudgeRecord]:
        return [self.record, *self.checks]


def vote(answer: JudgeAnswer, q: JudgeQuestion) -> tuple[float | None, str | None, str | None, str | None]:
    """(score, label, rationale, error) by majority over the readable samples; the judge's
    own failure, when it could not be asked, is the error."""
    if answer.error is not None:
        return None, None, None, answer.error
    readable = [s.verdict for s in answer.samples if s.verdict is not None]
    if len(readable) * 2 <= len(answer.samples):
        return None, None, None, (f"only {len(readable)} of {len(answer.samples)} judge samples could "
                                  "be read")
    positive = sum(1 for v in readable if v.label in q.positive)
    negative = len(readable) - positive
    side = [v for v in readable if (v.label in q.positive) == (positive > negative)]
    label = Counter(v.label for v in side).most_common(1)[0][0]
    rationale = next(v.rationale for v in side if v.label == label)
    return (1.0 if positive > negative else 0.0), label, rationale, None


def confidence(answer: JudgeAnswer, q: JudgeQuestion, label: str | None
               ) -> tuple[float | None, Literal["logprobs", "samples"] | None]:
    """The verdict's confidence and where it comes from: the probability of the verdict's side
    at the verdict token when the answer has label probabilities, else the samples' agreement
    (None with a single sample, which says nothing about it)."""
    if label is None:
        return None, None
    if answer.distribution is not None:
        return side_probability(answer.distribution, q.positive, label), "logprobs"
    share = agreement(answer, q, label)
    return share, None if share is None else "samples"


def agreement(answer: JudgeAnswer, q: JudgeQuestion, label: str | None) -> float | None:
    """The share of all samples (unreadable ones included) on the verdict's side; None with a
    single sample."""
    if label is None or len(answer.samples) < 2:
        return None
    side = label in q.positive
    return sum(1 for s in answer.samples
               if s.verdict is not None and (s.verdict.label in q.positive) == side) / len(answer.samples)


class JudgeCriterion(Criterion):
    """Base of the LLM-judged criteria."""

    criterion_model = LlmAsAJudgeCriterion
    criterion: LlmAsAJudgeCriterion
    is_async = True
    # The shipped min_confidence for verdicts whose confidence is a probability (from
    # log-probabilities), used when judge_model_options sets none; chosen on the labelled
    # sets in bench/judge_set (see docs). None: no default threshold.
    default_min_confidence: ClassVar[float | None] = None

    def min_confidence(self, source: str | None) -> float | None:
        """The threshold below which a verdict of this confidence source is uncertain: the
        configured one, else the shipped default for probabilities."""
        configured = self.criterion.judge_model_options.min_confidence
        if configured is not None:
            return configured
        return self.default_min_confidence if source == "logprobs" else None

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
            prompt=q.prompt, replies=[s.raw for s in answer.samples if s.raw or not s.drawn],
            verdicts=[s.verdict.label if s.verdict else None for s in answer.samples],
            prompt_tokens=answer.prompt_tokens, cached=all(s.cached for s in answer.samples),
            screened=list(q.screened),
            label_probs=None if answer.distribution is None else
            {k: round(v, 4) for k, v in answer.distribution.items()})

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
        lowest-scoring invocation."""
        for i, inv in enumerate(result.per_invocation):
            if inv.reason is None:
                inv.reason = explain.invocation_text(
                    [a for a in answered if a.question.invocation_index == i], self.min_confidence)
        if result.reason is None:
            result.reason = mean_reason(result.score, self.criterion.threshold,
                                        [p.score for p in result.per_invocation],
                                        [p.reason for p in result.per_invocation], what="score")

    async def ascore(self, ctx: EvalContext) -> CriterionResult:
        if ctx.judge is None:
            raise RuntimeError("no judge service was given to the scorer")
        judge = ctx.judge
        options = self.criterion.judge_model_options
        questions, premises = await self.aquestions(ctx)
        if not questions and not premises:
            raise ValueError("nothing to judge (no rubrics or no responses)")
        answered: list[Answered | None] = [None] * len(questions)
        limiter = anyio.CapacityLimiter(options.parallelism_limit)

        async def answer(q: JudgeQuestion, model: str) -> JudgeRecord:
            """One judge model's voted answer to `q`, as its audit record."""
            with judge_span(self.metric_name, q.invocation_index, q.item, model, q.prompt) as recorded:
                # A verdict whose confidence is judged (min_confidence) needs every sample.
                reply = await judge.ask(model, prompts.SYSTEM, q.prompt, q.labels, options.num_samples,
                                        q.notes, q.examples, early_stop=not options.min_confidence)
                score, label, rationale, error = vote(reply, q)
                record = self.record(q, reply)
                record.judge_model = model
                record.verdict, record.score, record.rationale, record.error = label, score, rationale, error
                record.confidence, record.confidence_source = confidence(reply, q, label)
                judged(recorded, record)
            return record

        async def ask_one(q: JudgeQuestion) -> tuple[float | None, str | None, JudgeRecord]:
            async with limiter:
                record = await answer(q, options.judge_model)
                threshold = self.min_confidence(record.confidence_source)
                if (threshold is not None and record.error is None and record.confidence is not None
                        and record.confidence < threshold):
                    # Uncertain: never a pass. The stronger judge decides, or nobody does.
                    record.uncertain = True
                    if options.escalate_to:
                        strong = record.escalated = await answer(q, options.escalate_to)
                        record.score, record.verdict = strong.score, strong.verdict
                        record.rationale, record.error = strong.rationale, strong.error
                    else:
                        record.score = None
                        how = "p=" if record.confidence_source == "logprobs" else "confidence "
                        record.error = (f"judge uncertain: {record.verdict} with {how}"
                                        f"{record.confidence:.2f}, below min_confidence {threshold:g}")
            return record.score, record.verdict, record

        async def ask(index: int) -> None:
            q = questions[index]
            score, label, record = await ask_one(q)
            done = Answered(q, score, record)
            if q.check is not None and label in q.check_when:
                done.score, _, check = await ask_one(q.check)
                done.checks.append(check)
            answered[index] = done

        async with anyio.create_task_group() as tg:
            for index in range(len(questions)):
                tg.start_soon(ask, index)
        done = [a for a in answered if a is not None]
        result = self.combine(ctx, done)
        result.records = [*premises, *(r for a in done for r in a.records)]
        failed = [r for r in premises if r.error] + [
            next(r for r in a.records if r.error is not None) for a in done if a.score is None]
        if failed:
            first = failed[0]
            result.score = None
            result.error = (f"judge error on {len(failed)} of {len(done) + len(premises)} "
                            "question(s); first: "
                            f"invocation {first.invocation_index}"
                            f"{f', {first.item}' if first.item else ''}: {first.error}")
        self.explain(done, result)
        return result
