"""Rubric-based criteria: one judged item per (invocation, rubric).

The final-response and tool-use criteria ask each item in two steps (`TwoStepRubricCriterion`):
the concrete requirement, then whether the agent meets it; see `prompts.RUBRIC_SYSTEM` for why.

Effective rubrics for an invocation: the criterion's own rubrics (any type), the case's rubrics
of the metric's type, and that invocation's expected rubrics of the metric's type. Unlike ADK,
every invocation keeps its own rubrics (ADK drops all but the last invocation's), and a metric
left with no rubrics is an error that says which `type` was needed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import ClassVar

import anyio

from agenteval.criteria.base import CriterionResult, EvalContext, InvocationScore, mean
from agenteval.criteria.judge import rubric_checks, weak
from agenteval.criteria.judge.base import Answered, JudgeCriterion, keep_records
from agenteval.criteria.judge.engine.cascade import decide_all, in_flight
from agenteval.criteria.judge.engine.decision import DecisionOptions, JudgeQuestion
from agenteval.criteria.judge.engine.spans import judge_span, judged
from agenteval.criteria.judge.prompting import context, prompts
from agenteval.criteria.judge.prompting import examples as judge_examples
from agenteval.criteria.judge.prompting.screen import Screened
from agenteval.schema import EvalMetricResultDetails, JudgeRecord, RubricsBasedCriterion, RubricScore
from agenteval.schema.rubric import Rubric


def effective_rubrics(criterion: RubricsBasedCriterion, rubric_type: str, case_rubrics: Sequence[Rubric],
                      invocation_rubrics: Sequence[Rubric]) -> list[Rubric]:
    """The rubrics that apply, with duplicate ids rejected."""
    chosen = list(criterion.rubrics) + [r for r in [*case_rubrics, *invocation_rubrics]
                                        if r.type == rubric_type]
    ids = [r.rubric_id for r in chosen]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate rubric id(s): {', '.join(duplicates)}")
    return chosen


def rubric_text(rubric: Rubric) -> str:
    """What a rubric asks: its text property, else its description, else its id."""
    return rubric.rubric_content.text_property or rubric.description or rubric.rubric_id


# Rubric verdicts stay below the floor on the embedded judge at any threshold (68-74% on the
# labelled sets, 53-66% on the blind ones; bench/README.md), so none is shipped for gating. With
# a stronger judge configured (`escalate_to`), verdicts whose probability is below this are its
# to decide: measured there, the verdicts at p >= 0.8 agreed 82% / 90% with the labelled sets
# (final response / tool use; 83% / 78% on the blind sets), and 37-55% of verdicts fall below it.
ESCALATE_BELOW = 0.8


# Rubric families whose checks stayed below the floor (FAMILY_FLOOR agreement) on the embedded
# judge, measured on the labelled and blind rubric sets (bench/README.md, "Rubric checks"); their
# verdicts go to the stronger judge whenever `escalate_to` is set. The shipped certificates list
# every family's agreement (`Certificate.families`).
FAMILY_FLOOR = 0.8
# Measured on the whole blind final-response set (44 cases, 2-12 per family) and 13 blind
# tool-use cases (2026-11-26): families with few labels are not thereby shown to be above it.
BELOW_FLOOR_ON_EMBEDDED: dict[str, frozenset[str]] = {
    "FINAL_RESPONSE_QUALITY": frozenset({"clarify", "completeness", "format", "language", "next_step",
                                         "tone", "unbacked", "value"}),
    "TOOL_USE_QUALITY": frozenset({"arguments", "chained", "coverage", "lookup_first", "read_only"}),
}


def below_floor(rubric_type: str, judge_model: str) -> frozenset[str]:
    """The families below the floor on `judge_model` (measured for the embedded judge only)."""
    if not weak.is_embedded(judge_model):
        return frozenset()
    return BELOW_FLOOR_ON_EMBEDDED.get(rubric_type, frozenset())


class RubricCriterion(JudgeCriterion):
    """Shared logic of the rubric criteria: which rubrics apply, and per-rubric scores."""

    criterion_model = RubricsBasedCriterion
    criterion: RubricsBasedCriterion
    rubric_type: ClassVar[str] = ""

    def decision_options(self) -> DecisionOptions:
        """As configured; with `escalate_to` and no `min_confidence`, a verdict whose
        probability is below ESCALATE_BELOW goes to the stronger judge."""
        options = super().decision_options()
        if options.escalate_to and options.min_confidence is None \
                and options.shipped_min_confidence is None:
            return replace(options, shipped_min_confidence=ESCALATE_BELOW)
        return options

    def rubrics_for(self, ctx: EvalContext, index: int) -> list[Rubric]:
        expected = ctx.expected[index].rubrics if ctx.expected and index < len(ctx.expected) else None
        return effective_rubrics(self.criterion, self.rubric_type, ctx.case_rubrics, expected or [])

    def no_rubrics(self, ctx: EvalContext) -> ValueError:
        """The error for a case where no rubric applies, naming the `type` that was needed."""
        untyped = [r.rubric_id for r in ctx.case_rubrics if r.type is None]
        hint = (f"; the case's rubrics {', '.join(untyped)} have no type (they need "
                f'"type": "{self.rubric_type}")') if untyped else ""
        return ValueError(f"no rubrics apply: give rubrics in the criterion, or rubrics of type "
                          f"{self.rubric_type} on the case or its invocations{hint}")

    def combine(self, ctx: EvalContext, answered: Sequence[Answered]) -> CriterionResult:
        """A rubric's verdict on an invocation is met only when all its checks pass (the lowest
        of their scores; None when any is a judge error). Per invocation: mean over its
        rubrics; overall: mean over every (invocation, rubric) pooled, as in ADK; per rubric
        (`rubric_scores`): mean over the invocations, with the first failing check's reason."""
        verdicts: dict[tuple[int, str], list[Answered]] = {}
        for a in answered:
            verdicts.setdefault((a.question.invocation_index, a.question.item or ""), []).append(a)
        scored = {key: (None if any(a.score is None for a in items) else min(a.score or 0.0 for a in items))
                  for key, items in verdicts.items()}
        per = []
        for i in range(len(ctx.actual)):
            mine = [v for (inv, _), v in scored.items() if inv == i]
            per.append(InvocationScore(mean(mine) if mine and None not in mine else None))
        result = CriterionResult(mean(list(scored.values())), per)
        by_id: dict[str, list[tuple[float | None, list[Answered]]]] = {}
        for (_, rid), items in verdicts.items():
            by_id.setdefault(rid, []).append((scored[(items[0].question.invocation_index, rid)], items))
        scores = []
        for rid, rows in by_id.items():
            values = [v for v, _ in rows if v is not None]
            items = [a for _, group in rows for a in group]
            worst = next((a for a in items if a.score is None or a.score < 1.0), items[0])
            scores.append(RubricScore(rubric_id=rid, score=sum(values) / len(values) if values else None,
                                      rationale=worst.record.rationale))
        result.details = EvalMetricResultDetails(rubric_scores=scores)
        return result


class TwoStepRubricCriterion(RubricCriterion):
    """A rubric criterion judged in two steps (see `prompts.RUBRIC_SYSTEM`): per (invocation,
    rubric), the judge first writes the concrete requirement (`ask_note`, greedy, recorded with
    `step="requirement"`), then votes on whether the agent meets it. A requirement that cannot
    be read is a judge error."""

    examples: ClassVar[tuple[tuple[str, str], ...]] = ()  # solved step-2 questions
    requirement_examples: ClassVar[tuple[tuple[str, str], ...]] = ()  # solved step-1 questions
    notes: ClassVar[tuple[tuple[str, str], ...]] = ()  # what the judge writes before its verdict

    def reply(self, ctx: EvalContext, index: int) -> Screened:
        """The agent's text that the step-2 prompts of invocation `index` show, screened once
        for all its rubrics; empty for criteria whose prompts show no agent text."""
        return Screened("")

    def requirement_prompt(self, ctx: EvalContext, index: int, rubric: str) -> str:
        """Step 1: the prompt asking for the concrete requirement of `rubric`."""
        raise NotImplementedError

    def prompt(self, ctx: EvalContext, index: int, requirement: str, reply: str) -> str:
        """Step 2: does invocation `index` (its screened `reply`, or its calls) meet
        `requirement`?"""
        raise NotImplementedError

    def questions(self, ctx: EvalContext) -> list[JudgeQuestion]:
        raise NotImplementedError("two-step rubric questions need the judge: use aquestions")

    async def aquestions(self, ctx: EvalContext) -> tuple[list[JudgeQuestion], list[JudgeRecord]]:
        questions, records, _ = await self.prepare(ctx)
        return questions, records

    async def prepare(self, ctx: EvalContext) -> tuple[list[JudgeQuestion], list[JudgeRecord], set[int]]:
        """The questions, the records of the calls and rules they came from, and which
        questions (by index) belong to a family below the floor on this judge (escalated when
        a stronger judge is configured). A rubric of a family is asked as its checks
        (`rubric_checks.plan`), any other in two steps."""
        if ctx.judge is None:
            raise RuntimeError("no judge service was given to the scorer")
        judge, options = ctx.judge, self.criterion.judge_model_options
        items = [(i, r) for i in range(len(ctx.actual)) for r in self.rubrics_for(ctx, i)]
        if not items:
            raise self.no_rubrics(ctx)
        replies = {i: self.reply(ctx, i) for i in {i for i, _ in items}}
        weak = below_floor(self.rubric_type, options.judge_model)
        # Per item, in order: its records (rules, requirement), its questions, whether escalated.
        slots: list[tuple[list[JudgeRecord], list[JudgeQuestion], bool]] = []
        two_step = []
        for k, (i, rubric) in enumerate(items):
            planned = rubric_checks.plan(rubric_text(rubric), self.rubric_type, self.material(
                ctx, i, replies[i].text))
            slots.append(([], [], planned is not None and planned.family in weak))
            if planned is None:
                two_step.append(k)
                continue
            for name, ok, why in planned.rules:
                slots[k][0].append(JudgeRecord(
                    metric_name=self.metric_name, invocation_index=i, item=rubric.rubric_id,
                    judge_model="rule", step="rule", prompt=f"{planned.family}: {name}",
                    prompt_version=prompts.PROMPT_VERSION, verdict="meets" if ok else "fails",
                    score=1.0 if ok else 0.0, rationale=f"rule {name}: {why}"))
            slots[k][1].extend(JudgeQuestion(
                i, rubric.rubric_id, prompt, labels=("yes", "no"), positive=frozenset({passes_on}),
                screened=replies[i].removed) for _check, prompt, passes_on in planned.questions)
        limiter = anyio.CapacityLimiter(in_flight(judge, options.judge_model, options.parallelism_limit))

        async def prepare(k: int) -> None:
            i, rubric = items[k]
            step = JudgeQuestion(i, rubric.rubric_id, self.requirement_prompt(ctx, i, rubric_text(rubric)))
            async with limiter:
                with judge_span(self.metric_name, i, rubric.rubric_id, options.judge_model,
                                step.prompt, "requirement") as recorded:
                    answer = await judge.ask_note(options.judge_model, prompts.RUBRIC_SYSTEM,
                                                  step.prompt, prompts.REQUIRED, self.requirement_examples)
                    record = self.record(step, answer)
                    record.step = "requirement"
                    note = answer.samples[0].verdict if answer.samples else None
                    if note is None:
                        record.error = (answer.error
                                        or "the judge's requirement for this rubric could not be read")
                    else:
                        record.rationale = note.rationale
                    judged(recorded, record)
            slots[k][0].append(record)
            if note is None:
                return
            reply = replies[i]
            slots[k][1].append(JudgeQuestion(
                i, rubric.rubric_id, self.prompt(ctx, i, note.rationale, reply.text),
                labels=prompts.MEETS, positive=frozenset({"meets"}),
                notes=prompts.note_names(self.notes), examples=self.examples,
                screened=reply.removed))

        async with anyio.create_task_group() as tg:
            for k in two_step:
                tg.start_soon(prepare, k)
        questions = [q for _, qs, _ in slots for q in qs]
        flags = [escalated for _, qs, escalated in slots for _ in qs]
        return (questions, [r for records, _, _ in slots for r in records],
                {n for n, escalated in enumerate(flags) if escalated})

    def material(self, ctx: EvalContext, index: int, reply: str) -> rubric_checks.Material:
        """What the checks of invocation `index` may show: request, reply, calls, declarations."""
        inv = ctx.actual[index]
        declarations = [d for a in ctx.actual if a.app_details
                        for details in a.app_details.agent_details.values()
                        for d in details.tool_declarations]
        return rubric_checks.material(inv, reply, context.user_text(inv), declarations)

    async def ascore(self, ctx: EvalContext) -> CriterionResult:
        """As `JudgeCriterion.ascore`, with the rules' outcomes among the checks and the
        questions of a family below the floor held to a threshold no verdict reaches (so
        escalated) when `escalate_to` is set."""
        questions, premises, escalating = await self.prepare(ctx)
        assert ctx.judge is not None
        policy = self.policy()
        plain = [q for k, q in enumerate(questions) if k not in escalating]
        weak = [q for k, q in enumerate(questions) if k in escalating]
        done = [self.answered(d) for d in await decide_all(ctx.judge, plain, policy)]
        if weak:
            forced = replace(policy, options=replace(policy.options, min_confidence=math.inf)) \
                if policy.options.escalate_to else policy
            done += [self.answered(d) for d in await decide_all(ctx.judge, weak, forced)]
        rules = [Answered(JudgeQuestion(r.invocation_index or 0, r.item, r.prompt), r.score, r)
                 for r in premises if r.step == "rule"]
        result = self.combine(ctx, [*done, *rules])
        keep_records(result, premises, done)
        self.explain([*done, *rules], result)
        return result


class RubricFinalResponseQuality(TwoStepRubricCriterion):
    """`rubric_based_final_response_quality_v1`: does each final response satisfy each rubric
    (facts backed by the user prompt and tool results)? Score: share of rubrics met. The
    requirement is written from the user prompt and tool results; the response is then
    compared with it."""

    rubric_type = "FINAL_RESPONSE_QUALITY"
    examples = judge_examples.RUBRIC_FINAL_RESPONSE
    requirement_examples = judge_examples.RUBRIC_REQUIREMENTS
    notes = prompts.REPLY_GIVES

    def reply(self, ctx: EvalContext, index: int) -> Screened:
        both = self.criterion.include_intermediate_responses_in_final
        return context.agent_text(ctx.actual[index], both)

    def requirement_prompt(self, ctx: EvalContext, index: int, rubric: str) -> str:
        inv = ctx.actual[index]
        return prompts.rubric_requirement(context.user_text(inv), context.calls(inv), rubric)

    def prompt(self, ctx: EvalContext, index: int, requirement: str, reply: str) -> str:
        return prompts.rubric_final_response(reply, requirement)


class RubricToolUseQuality(TwoStepRubricCriterion):
    """`rubric_based_tool_use_quality_v1`: does each invocation's tool use satisfy each rubric?
    The requirement is written from the tool declarations and the user prompt; the calls (with
    results, not the final answer) are then compared with it."""

    rubric_type = "TOOL_USE_QUALITY"
    examples = judge_examples.RUBRIC_TOOL_USE
    requirement_examples = judge_examples.TOOL_REQUIREMENTS
    notes = prompts.CALLS_DID

    def requirement_prompt(self, ctx: EvalContext, index: int, rubric: str) -> str:
        inv = ctx.actual[index]
        return prompts.tool_requirement(context.user_text(inv), context.declarations(ctx.actual),
                                        rubric)

    def prompt(self, ctx: EvalContext, index: int, requirement: str, reply: str) -> str:
        return prompts.rubric_tool_use(context.calls(ctx.actual[index]), requirement)
