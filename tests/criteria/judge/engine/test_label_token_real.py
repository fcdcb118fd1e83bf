"""On the real embedded model: a label call asked for its first token alone
(`prefill.label_token`) reports the label's probabilities that the call written whole reports,
and its reply, completed as the grammar forces it, is that call's text."""

import asyncio

import pytest

from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.engine.logprobs import label_distribution
from agenteval.criteria.judge.engine.prefill import first_label, label_call, label_token, prefilled
from agenteval.criteria.judge.engine.verdict import VERDICT_TOKENS, verdict_schema
from agenteval.criteria.judge.prompting import prompts
from agenteval.models import ModelRequest, TokenLogprob, resolve_model

pytestmark = pytest.mark.model

QUESTIONS = [
    (prompts.final_response_match("When does it open?", "At 9 am.", "It opens at 9:00."),
     ("valid", "invalid")),
    (prompts.final_response_match("How much is my refund?", "Your refund is $1,000.",
                                  "The refund is $100."), ("valid", "invalid")),
    (prompts.hallucination(prompts.hallucination_context("", "Roll a die.", "roll() -> 4"),
                           "You rolled a 6."), prompts.HALLUCINATION_LABELS),
]


def test_the_first_token_alone_gives_the_label_probabilities_of_the_call_written_whole() -> None:
    local = resolve_model("local", {})

    async def run() -> None:
        for question, labels in QUESTIONS:  # no solved examples: a short prompt
            one = ModelRequest(JudgeService._messages(prompts.SYSTEM, question, ()),
                               json_schema=verdict_schema(labels, rationale=False),
                               max_tokens=VERDICT_TOKENS, logprobs=20)
            request, head = prefilled(one)  # type: ignore[misc]
            assert label_call(request) == labels
            await local.generate(request)  # the prompt evaluated: each call below reads it cached
            whole = (await local.generate(request)).generations[0]
            short = (await local.generate(label_token(request))).generations[0]
            assert whole.logprobs and short.logprobs and len(short.logprobs) == 1
            assert len(whole.logprobs) >= 2  # the label's tokens, then at least `"}`
            read = first_label(short.text[len(head):], labels)
            assert read is not None
            assert head + read[0] + '"}' == whole.text  # the reply the grammar forces
            full = label_distribution((TokenLogprob(head, 0.0), *whole.logprobs), labels)
            alone = label_distribution((TokenLogprob(head, 0.0), short.logprobs[0]), labels)
            assert full and alone and alone == pytest.approx(full, abs=1e-6)

    asyncio.run(run())
