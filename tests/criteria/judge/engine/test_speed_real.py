"""On the real embedded model: a one-pass reply that is the label alone (the schema ends the
object after it) gives the same label and the same label probabilities as a reply with its
rationale (a stop string placed after the label did not: llama.cpp then reported wrong
probabilities), a failing verdict still gets its short rationale, and a second question of the
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


def test_the_label_alone_keeps_the_label_and_its_probabilities() -> None:
    model = Counted(resolve_model("local", {}))
    question = prompts.final_response_match("How much is my refund?", "Your refund is $1,000.",
                                            "The refund is $100.")
    other = prompts.final_response_match("When does it open?", "At 9 am.", "It opens at 9:00.")

    async def ask(rationales: str, text: str) -> JudgeAnswer:
        judge = JudgeService(lambda n: model, rationales=rationales)  # type: ignore[arg-type]
        return await judge.ask("local", prompts.SYSTEM, text, VALID, 5,
                               examples=examples.FINAL_RESPONSE_MATCH, positive=frozenset({"valid"}))

    async def run() -> tuple[JudgeAnswer, JudgeAnswer, JudgeAnswer, JudgeAnswer]:
        return (await ask("always", question), await ask("never", question),
                await ask("negative", question), await ask("negative", other))

    written, alone, failing, passing = asyncio.run(run())
    assert written.distribution and alone.distribution
    assert alone.distribution == pytest.approx(written.distribution, abs=0.03)
    assert alone.readings == written.readings and "invalid" in alone.readings
    assert alone.replies == ['{"verdict": "invalid"}']
    assert failing.model_calls == 2 and any(s.verdict and s.verdict.rationale for s in failing.samples)
    assert passing.model_calls == 1 and passing.readings.count("valid") >= 3
    # The second question evaluated its material and closing line, not the fixed text before.
    last = model.usages[-1]
    material = len(other) - other.index("User prompt:")
    assert last.prompt_tokens - last.cached_tokens < material  # tokens, fewer than its characters
    assert last.prompt_tokens - last.cached_tokens < 80
