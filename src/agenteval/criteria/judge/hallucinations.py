"""`hallucinations_v1`: is each sentence of a response supported by its context?

Sentences are segmented deterministically (lines and bullets apart, then sentence ends), which
is exact and free, where ADK spends a judge call that may rewrite or drop sentences. Each
sentence is labelled supported / unsupported / contradictory / not_applicable against the
context: the agent's instructions, the user prompt, and the turn's tool calls with their
results. A sentence judged supported is cross-checked: the judge copies the sentence's fact and
the context's version of it side by side and compares them (`prompts.hallucination_check`);
"different" makes it contradictory, "not_stated" unsupported.

Scores combine as ADK 2.13.0's: each text checked (the final response; with
`evaluate_intermediate_nl_responses` also each text part of the turn's events, or each legacy
intermediate response) is a step scored by its share of sentences supported (and confirmed) or
not applicable; an invocation scores the mean of its steps, the case the mean of its
invocations, both with `statistics.mean` (exactly rounded, as ADK: a left-to-right sum differs
in the last digit for about a third of three-invocation cases).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence

from agenteval.criteria.base import CriterionResult, EvalContext, InvocationScore
from agenteval.criteria.judge.base import Answered, JudgeCriterion
from agenteval.criteria.judge.engine.decision import JudgeQuestion
from agenteval.criteria.judge.prompting import context, examples, prompts
from agenteval.criteria.judge.prompting.screen import Screened, screen
from agenteval.schema import HallucinationsCriterion, Invocation, InvocationEvents

LABELS = prompts.HALLUCINATION_LABELS
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def sentences(text: str) -> list[str]:
    """Sentences of a response: each line (bullet marker removed) split at sentence ends."""
    out = []
    for line in text.splitlines():
        line = _BULLET.sub("", line).strip()
        if line:
            out += [s.strip() for s in _SENTENCE_END.split(line) if s.strip()]
    return out


def _mean(values: Sequence[float | None]) -> float | None:
    """ADK's mean: `statistics.mean` of the values present; None when there are none."""
    present = [float(v) for v in values if v is not None]
    return statistics.mean(present) if present else None


def steps(inv: Invocation, intermediate: bool) -> list[Screened]:
    """The texts of `inv` checked, each a step, screened: with `intermediate`, each text part
    (thoughts excluded) of each event, as ADK, or each legacy intermediate response (which ADK
    does not check); then the final response."""
    texts: list[str] = []
    if intermediate:
        data = inv.intermediate_data
        if isinstance(data, InvocationEvents):
            texts = [p.text for e in data.invocation_events if e.content
                     for p in e.content.parts or [] if p.text and not p.thought]
        else:
            texts = [t for _, t in inv.intermediate_texts()]
    return [screen(t) for t in [*texts, context.response_text(inv)]]


def step_sentences(inv: Invocation, intermediate: bool) -> list[tuple[int, str]]:
    """(step index, sentence) of every sentence checked in `inv`, in order."""
    return [(k, s) for k, step in enumerate(steps(inv, intermediate)) for s in sentences(step.text)]


class HallucinationsV1(JudgeCriterion):
    """`hallucinations_v1`: share of the final response's sentences backed by the context (user prompt,
    tool calls and results); `evaluate_intermediate_nl_responses` also checks intermediate texts."""

    criterion_model = HallucinationsCriterion
    criterion: HallucinationsCriterion
    # Measured on bench/judge_set with the embedded judge (36 cases): 86% right; cases whose
    # verdicts all have p >= 0.5 agree with the labels 91% of the time and cover 94% of them.
    default_min_confidence = 0.5

    def questions(self, ctx: EvalContext) -> list[JudgeQuestion]:
        instructions = context.instructions(ctx.actual)
        qs = []
        for i, inv in enumerate(ctx.actual):
            base = prompts.hallucination_context(instructions, context.user_text(inv),
                                                 context.calls(inv))
            texts = steps(inv, self.criterion.evaluate_intermediate_nl_responses)
            n = 0
            for screened in texts:  # judge-directed passages are no claims to check
                for sentence in sentences(screened.text):
                    n += 1
                    check = JudgeQuestion(i, f"sentence {n}, cross-check",
                                          prompts.hallucination_check(base, sentence),
                                          labels=prompts.CHECK_LABELS, positive=frozenset({"same"}),
                                          notes=prompts.note_names(prompts.CHECK_NOTES),
                                          examples=examples.HALLUCINATION_CHECKS,
                                          screened=screened.removed)
                    qs.append(JudgeQuestion(i, f"sentence {n}", prompts.hallucination(base, sentence),
                                            labels=LABELS,
                                            positive=frozenset({"supported", "not_applicable"}),
                                            examples=examples.HALLUCINATIONS,
                                            screened=screened.removed,
                                            check=check, check_when=frozenset({"supported"})))
            cuts = tuple(c for screened in texts for c in screened.removed)
            if n == 0 and cuts:
                raise ValueError(f"invocation {i}: nothing left to check once the text addressed "
                                 f"to the judge was cut ({'; '.join(repr(c) for c in cuts)})")
        return qs

    def combine(self, ctx: EvalContext, answered: Sequence[Answered]) -> CriterionResult:
        """Per step, the share of its sentences that passed; per invocation, the mean of its
        steps (None if any sentence has no verdict); overall, the mean of the invocations."""
        intermediate = self.criterion.evaluate_intermediate_nl_responses
        per = []
        for i, inv in enumerate(ctx.actual):
            step_of = {f"sentence {n}": k
                       for n, (k, _) in enumerate(step_sentences(inv, intermediate), start=1)}
            by_step: dict[int, list[float | None]] = {}
            for a in answered:
                if a.question.invocation_index == i and a.question.item in step_of:
                    by_step.setdefault(step_of[a.question.item], []).append(a.score)
            scores = [v for step in by_step.values() for v in step]
            per.append(InvocationScore(
                None if not scores or None in scores else
                _mean([_mean(step) for step in by_step.values()])))
        return CriterionResult(_mean([p.score for p in per]), per)
