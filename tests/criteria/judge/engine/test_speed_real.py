"""On the real embedded model: a one-pass verdict is one call whatever its label. Its schema
ends the reply after a passing label and continues with a short rationale after a failing one
(`verdict.explained_verdict_schema`, an `anyOf` in llama.cpp's grammar); up to the label the
reply is the label-only one, with the same label probabilities (a stop string placed after the
label did not keep them: llama.cpp then reported wrong probabilities). A second question of the
criterion evaluates only its material (the fixed text before it comes from the engine's cache)."""

import asyncio

import pytest

from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.engine.service import JudgeAnswer
from agenteval.criteria.judge.prompting import examples, prompts
from agenteval.models import LLM, ModelRequest, ModelResponse, Usage, resolve_model

pytestmark = pytest.mark.model

VALID = ("valid", "invalid")


class Counted:
    """The model, keeping each reply's usage (prompt tokens, and those taken from the cache)."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.usages: list[Usage] = []

    @property
    def name(self) -> str:
        return self.inner.name

    async def generate(self, request: ModelRequest) -> ModelResponse:
        response = await self.inner.generate(request)
        self.usages.append(response.usage)
        return response


def test_one_pass_keeps_the_label_and_its_probabilities_and_explains_a_failure() -> None:
    model = Counted(resolve_model("local", {}))
    failing = prompts.final_response_match("How much is my refund?", "Your refund is $1,000.",
                                           "The refund is $100.")
    passing = prompts.final_response_match("When does it open?", "At 9 am.", "It opens at 9:00.")

    async def ask(rationales: str, text: str) -> JudgeAnswer:
        judge = JudgeService(lambda n: model, rationales=rationales)  # type: ignore[arg-type]
        return await judge.ask("local", prompts.SYSTEM, text, VALID, 5,
                               examples=examples.FINAL_RESPONSE_MATCH, positive=frozenset({"valid"}))

    async def run() -> list[JudgeAnswer]:
        return [await ask(r, failing) for r in ("always", "never", "negative")] + \
            [await ask(r, passing) for r in ("negative", "never")]

    written, alone_f, one_f, one_p, alone_p = asyncio.run(run())
    # Failing: one pass (on the embedded engine two calls: the label, then the reply begun up
    # to its rationale, `engine.prefill.rationale_after`), the label-only reply's tokens up to
    # the label and its probabilities bit for bit (both asked after the prompt was evaluated
    # once: the first call on a prompt evaluates its material in one batch, later ones only its
    # last token, and the logits of the two differ in the third decimal), then the rationale.
    assert alone_f.replies == ['{"verdict": "invalid"}']
    assert one_f.model_calls == 2 and one_f.replies[0].startswith('{"verdict": "invalid", "rationale": "')
    assert any(s.verdict and s.verdict.label == "invalid" and s.verdict.rationale for s in one_f.samples)
    assert alone_f.distribution and one_f.distribution and written.distribution
    assert one_f.distribution == alone_f.distribution and one_f.readings == alone_f.readings
    assert written.distribution == pytest.approx(alone_f.distribution, abs=0.03)
    # Passing: one call that ends at the label, the label-only reply token for token.
    assert one_p.model_calls == 1 and one_p.replies == alone_p.replies == ['{"verdict": "valid"}']
    assert alone_p.distribution and one_p.distribution
    assert one_p.distribution == pytest.approx(alone_p.distribution, abs=0.03)
    assert one_p.readings.count("valid") >= 3
    # The first question on the passing case evaluated its material and closing line, not the
    # fixed text before.
    first = model.usages[3]
    material = len(passing) - passing.index("User prompt:")
    assert first.prompt_tokens - first.cached_tokens < material  # tokens, fewer than its characters
    assert first.prompt_tokens - first.cached_tokens < 80
