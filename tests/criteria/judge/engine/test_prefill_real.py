"""On the real embedded model: a one-pass reply begun in the prompt (`engine.prefill`) is the
reply written whole, with fewer tokens generated: the same label, rationale and (to 0.01)
label probabilities, for a passing verdict (the label alone) and a failing one (its
rationale after the label). The failing one is two calls (`prefill.label_first`, then
`prefill.rationale_after`): its text and label probabilities are also those of the one reply
begun in the prompt that the judge wrote before the split (`prefilled`)."""

import asyncio
from dataclasses import replace

import pytest

from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.engine.logprobs import label_distribution
from agenteval.criteria.judge.engine.prefill import HEAD_TOKENS, RATIONALE_HEAD_TOKENS, prefilled
from agenteval.criteria.judge.engine.service import JudgeAnswer
from agenteval.criteria.judge.engine.verdict import explained_verdict_schema, reply_tokens
from agenteval.criteria.judge.prompting import examples, prompts
from agenteval.models import LLM, ModelRequest, ModelResponse, TokenLogprob, Usage, resolve_model

pytestmark = pytest.mark.model

VALID = ("valid", "invalid")


class Counted:
    """The model, keeping each reply's usage; `hide` hides what the model says it can do (a
    judge then writes its replies whole)."""

    def __init__(self, inner: LLM, hide: bool = False) -> None:
        self._model = inner
        if not hide:
            self.inner = inner
        self.usages: list[Usage] = []

    @property
    def name(self) -> str:
        return self._model.name

    async def generate(self, request: ModelRequest) -> ModelResponse:
        response = await self._model.generate(request)
        self.usages.append(response.usage)
        return response


def test_a_reply_begun_in_the_prompt_is_the_reply_written_whole() -> None:
    local = resolve_model("local", {})
    begun, whole = Counted(local), Counted(local, hide=True)
    failing = prompts.final_response_match("How much is my refund?", "Your refund is $1,000.",
                                           "The refund is $100.")
    passing = prompts.final_response_match("When does it open?", "At 9 am.", "It opens at 9:00.")

    async def ask(model: Counted, text: str) -> JudgeAnswer:
        judge = JudgeService(lambda n: model)  # type: ignore[arg-type, return-value]
        return await judge.ask("local", prompts.SYSTEM, text, VALID, 5,
                               examples=examples.FINAL_RESPONSE_MATCH, positive=frozenset({"valid"}))

    async def evaluate(request: ModelRequest) -> None:
        # The request's prompt evaluated, one token generated: a first evaluation's logits differ
        # in the third decimal from a cached prompt's, whatever the request, so each prompt is
        # evaluated once before the calls compared; the next call evaluates its prompt's last
        # token again whatever followed it in the slot, so one generated token is enough (a
        # whole reply here took 8-24 decode steps, the test's largest cost).
        await local.generate(replace(request, max_tokens=1))

    def judged(text: str) -> ModelRequest:
        return ModelRequest(JudgeService._messages(prompts.SYSTEM, text, examples.FINAL_RESPONSE_MATCH))

    async def one_reply() -> tuple[str, dict[str, float] | None]:
        # The failing question as the judge asked it before the split: one reply begun in the
        # prompt, its rationale after the label.
        generation = (await local.generate(one_request)).generations[0]
        tokens = (TokenLogprob(one_head, 0.0), *(generation.logprobs or ()))
        return generation.text, label_distribution(tokens, VALID)

    one_request, one_head = prefilled(replace(  # type: ignore[misc]
        judged(failing), json_schema=explained_verdict_schema(VALID, frozenset({"invalid"})),
        max_tokens=reply_tokens(), logprobs=20))

    async def run() -> tuple[list[JudgeAnswer], tuple[str, dict[str, float] | None]]:
        answers: list[JudgeAnswer] = []
        for text in (failing, passing):
            await evaluate(judged(text))
            answers += [await ask(whole, text), await ask(begun, text)]
        # The one reply (its prompt evaluated first), then the split again: the split's label
        # and the reply are read with the same tokens in the slot, so with the same numerics
        # (logits read after other cached tokens differ in the second or third decimal).
        await evaluate(one_request)
        one = await one_reply()
        return [*answers, await ask(begun, failing)], one

    (whole_f, begun_f, whole_p, begun_p, again), (one_text, one_labels) = asyncio.run(run())
    # The split's reply is the one reply's, character for character, with its probabilities.
    assert begun_f.replies[0] == again.replies[0] == one_text
    assert one_labels and again.distribution == pytest.approx(one_labels, abs=0.001)
    for a, b in ((begun_f, whole_f), (begun_p, whole_p)):
        # The same verdicts and rationales (a reply written whole may put a space before its
        # closing brace, which the grammar after the head leaves out).
        assert [(s.verdict.label, s.verdict.rationale) for s in a.samples if s.verdict] == \
            [(s.verdict.label, s.verdict.rationale) for s in b.samples if s.verdict]
        assert a.distribution and b.distribution
        assert a.distribution == pytest.approx(b.distribution, abs=0.01)
    assert begun_f.replies[0].startswith('{"verdict": "invalid", "rationale": "')
    assert begun_p.replies == ['{"verdict": "valid"}']  # the head is in the reply text
    label, rationale, label_p = begun.usages[:3]  # failing: two calls; passing: one
    assert begun_f.model_calls == 2 and begun_p.model_calls == 1
    assert label_p.completion_tokens <= whole.usages[1].completion_tokens - HEAD_TOKENS
    # Neither the head nor `", "rationale": "` generated (the label's call ends with `"}`).
    assert label.completion_tokens + rationale.completion_tokens <= \
        whole.usages[0].completion_tokens - HEAD_TOKENS - RATIONALE_HEAD_TOKENS + 2
    # `", "rationale": "` evaluated with the prompt; the rest was in the slot.
    assert rationale.prompt_tokens - rationale.cached_tokens <= RATIONALE_HEAD_TOKENS + 2
