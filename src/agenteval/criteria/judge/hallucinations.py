"""`hallucinations_v1`: is each sentence of a response supported by its context?

Sentences are segmented deterministically (lines and bullets apart, then sentence ends), which
is exact and free, where ADK spends a judge call that may rewrite or drop sentences. Each
sentence is labelled supported / unsupported / contradictory / not_applicable against the
context: the agent's instructions, the user prompt, and the turn's tool calls with their
results. A sentence judged supported is cross-checked: the judge copies the sentence's fact and
the context's version of it side by side and compares them (`prompts.hallucination_check`);
"different" makes it contradictory, "not_stated" unsupported. Invocation score: share of
sentences that are supported (and confirmed) or not applicable; overall: mean over invocations.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agenteval.criteria.base import CriterionResult, EvalContext, InvocationScore, mean
from agenteval.criteria.judge.base import Answered, JudgeCriterion
from agenteval.criteria.judge.engine.decision import JudgeQuestion
from agenteval.criteria.judge.prompting import context, examples, prompts
from agenteval.criteria.judge.prompting.screen import screen
from agenteval.schema import HallucinationsCriterion

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
            texts = [context.response_text(inv)]
            if self.criterion.evaluate_intermediate_nl_responses:
                texts = [t for _, t in inv.intermediate_texts()] + texts
            n = 0
            cuts: tuple[str, ...] = ()
            for text in texts:
                screened = screen(text)  # judge-directed passages are no claims to check
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
                cuts += screened.removed
            if n == 0 and cuts:
                raise ValueError(f"invocation {i}: nothing left to check once the text addressed "
                                 f"to the judge was cut ({'; '.join(repr(c) for c in cuts)})")
        return qs

    def combine(self, ctx: EvalContext, answered: Sequence[Answered]) -> CriterionResult:
        per = []
        for i in range(len(ctx.actual)):
            mine = [a.score for a in answered if a.question.invocation_index == i]
            per.append(InvocationScore(mean(mine) if mine and None not in mine else None))
        return CriterionResult(mean([p.score for p in per]), per)
