"""On the real embedded model: a verdict-first reply capped after its label gives the same
label and the same label probabilities as the uncapped reply (a stop string placed after the
label did not: llama.cpp then reported wrong probabilities), and its question's shared prefix
comes from the engine's cache."""

import asyncio

import pytest

from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.prompting import examples, prompts
from agenteval.models import resolve_model

pytestmark = pytest.mark.model


def test_the_token_cap_changes_neither_the_label_nor_its_probabilities() -> None:
    model = resolve_model("local", {})
    question = prompts.final_response_match("How much is my refund?", "Your refund is $1,000.",
                                            "The refund is $100.")

    async def ask(rationale_tokens: int) -> tuple[str | None, dict[str, float] | None, int]:
        judge = JudgeService(lambda n: model, rationale_tokens=rationale_tokens, max_tokens=200)
        answer = await judge.ask("local", prompts.SYSTEM, question, ("valid", "invalid"), 1,
                                 examples=examples.FINAL_RESPONSE_MATCH)
        verdict = answer.samples[0].verdict
        return (verdict.label if verdict else None), answer.distribution, len(answer.replies[0])

    async def both() -> tuple[tuple[str | None, dict[str, float] | None, int], ...]:
        return await ask(200), await ask(0)

    (label, probs, long), (capped_label, capped_probs, short) = asyncio.run(both())
    assert label == capped_label == "invalid"
    assert probs is not None and capped_probs is not None
    assert capped_probs == pytest.approx(probs, abs=0.02)
    assert short < long
