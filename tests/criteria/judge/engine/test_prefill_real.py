"""On the real embedded model: a one-pass reply begun in the prompt (`engine.prefill`) is the
reply written whole, with fewer tokens generated: the same label, rationale and (to 0.01)
label probabilities, for a passing verdict (the label alone) and a failing one (its
rationale after the label)."""

import asyncio

import pytest

from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.engine.prefill import HEAD_TOKENS
from agenteval.criteria.judge.engine.service import JudgeAnswer
from agenteval.criteria.judge.prompting import examples, prompts
from agenteval.models import LLM, ModelRequest, ModelResponse, Usage, resolve_model

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

    async def run() -> list[JudgeAnswer]:
        # Each prompt evaluated once first (a first evaluation's logits differ in the third
        # decimal from a cached prompt's, whatever the request).
        return [await ask(m, t) for t in (failing, passing) for m in (whole, whole, begun)]

    _, whole_f, begun_f, _, whole_p, begun_p = asyncio.run(run())
    for a, b in ((begun_f, whole_f), (begun_p, whole_p)):
        # The same verdicts and rationales (a reply written whole may put a space before its
        # closing brace, which the grammar after the head leaves out).
        assert [(s.verdict.label, s.verdict.rationale) for s in a.samples if s.verdict] == \
            [(s.verdict.label, s.verdict.rationale) for s in b.samples if s.verdict]
        assert a.distribution and b.distribution
        assert a.distribution == pytest.approx(b.distribution, abs=0.01)
    assert begun_f.replies[0].startswith('{"verdict": "invalid", "rationale": "')
    assert begun_p.replies == ['{"verdict": "valid"}']  # the head is in the reply text
    for a, b in ((begun.usages[0], whole.usages[1]), (begun.usages[1], whole.usages[3])):
        assert a.completion_tokens <= b.completion_tokens - HEAD_TOKENS
