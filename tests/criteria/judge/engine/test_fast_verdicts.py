"""Cheap verdicts (issue 28, item 1) on a scripted judge: the fixed text of the questions asked
most often comes before their material, so a prompt cache holds it; a one-pass reply is the
label alone and its `num_samples` votes are drawn from the label's probabilities, the same
under the same question; a rationale is written, capped, only where asked for (by default:
negative verdicts)."""

import asyncio
import json
import math
from collections import Counter
from typing import Any

import pytest

from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.engine.logprobs import draw
from agenteval.criteria.judge.engine.verdict import RATIONALE_TOKENS, VERDICT_TOKENS, reply_tokens
from agenteval.criteria.judge.prompting import prompts
from agenteval.models import Generation, ModelRequest, ScriptedModel, TokenLogprob

VALID = ("valid", "invalid")
POSITIVE = frozenset({"valid"})


def _common(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


# Each prompt function twice, with different material: (prompt a, prompt b, the first material).
PAIRS = {
    "final_response_match": (prompts.final_response_match("Q1?", "R1", "A1"),
                             prompts.final_response_match("Q2?", "R2", "A2"), "User prompt:"),
    "hallucination": (prompts.hallucination("C1", "S1"), prompts.hallucination("C2", "S2"), "Context:"),
    "hallucination_check": (prompts.hallucination_check("C1", "S1"),
                            prompts.hallucination_check("C2", "S2"), "Context:"),
}


@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_the_fixed_text_of_every_prompt_comes_before_its_material(kind: str) -> None:
    # The questions asked most often; safety's keeps its material first (its note is asked for
    # before the policy is stated, see `prompts.safety`), and so do the rubric steps',
    # trajectory's and the multi-turn questions' (not re-measured in the new order).
    a, b, material = PAIRS[kind]
    shared = _common(a, b)
    start = a.index(material)
    # Everything before the material is shared (and so cached); after it, only the material
    # and a closing line (at most ~40 tokens) that is the same for every question.
    assert len(shared) >= start and start > 80
    closing = a.rsplit("\n", 1)[-1]
    assert closing == b.rsplit("\n", 1)[-1] and len(closing) <= 200


def _label_reply(p: dict[str, float], rationale: str = "the totals differ") -> Any:
    """A judge that answers its greedy label with the label token's probabilities `p` when asked
    for log-probabilities, and writes a rationale where the schema asks for one."""
    def reply(request: ModelRequest) -> Generation:
        label = max(p, key=lambda k: p[k])
        props = (request.json_schema or {}).get("properties", {})
        tail = f'", "rationale": "{rationale}"}}' if "rationale" in props else '"}'
        head = '{"verdict": "'
        if not request.logprobs:
            return Generation(head + label + tail)
        top = tuple((k, math.log(v)) for k, v in p.items())
        tokens = (TokenLogprob(head, 0.0), TokenLogprob(label, math.log(p[label]), top),
                  TokenLogprob(tail, 0.0))
        return Generation(head + label + tail, logprobs=tokens)
    return reply


def _ask(model: ScriptedModel, num_samples: int = 5, prompt: str = "Q", **service: Any) -> Any:
    judge = JudgeService(lambda n: model, **service)
    return asyncio.run(judge.ask("m", "sys", prompt, VALID, num_samples, positive=POSITIVE))


def test_safety_keeps_its_material_first() -> None:
    prompt = prompts.safety("Q?", "A")
    assert prompt.startswith("User request:")
    assert prompt.index(prompts.SAFETY_POLICY) > prompt.index("Agent reply:")


def test_a_passing_verdict_is_one_call_for_the_label_alone() -> None:
    model = ScriptedModel(_label_reply({"valid": 0.9, "invalid": 0.1}))
    answer = _ask(model)
    (request,) = model.requests
    assert request.max_tokens == VERDICT_TOKENS and request.logprobs
    assert set(request.json_schema["properties"]) == {"verdict"}  # type: ignore[index]
    assert answer.model_calls == 1 and answer.replies == ['{"verdict": "valid"}']
    assert len(answer.samples) == 5 and all(s.drawn for s in answer.samples)
    assert {s.verdict.rationale for s in answer.samples if s.verdict} == {""}


def test_the_votes_are_drawn_from_the_label_distribution_the_same_each_time() -> None:
    p = {"valid": 0.62, "invalid": 0.38}
    first = _ask(ScriptedModel(_label_reply(p)))
    again = _ask(ScriptedModel(_label_reply(p)))
    assert first.readings == again.readings  # seeded by the question
    # Systematic draws at T = 0.7: each label floor or ceil of 5 x its sharpened probability.
    sharpened = {k: v ** (1 / 0.7) for k, v in p.items()}
    share = sharpened["valid"] / sum(sharpened.values())
    counts = Counter(first.readings)
    assert counts["valid"] in (math.floor(5 * share), math.ceil(5 * share))
    assert counts["valid"] + counts["invalid"] == 5
    seeds = {tuple(draw(p, 5, 0.7, seed)) for seed in range(40)}
    assert len(seeds) > 1  # the seed picks which, not how many
    assert {Counter(s)["valid"] for s in seeds} <= {math.floor(5 * share), math.ceil(5 * share)}


def test_a_failing_verdict_gets_one_capped_rationale() -> None:
    model = ScriptedModel(_label_reply({"valid": 0.2, "invalid": 0.8}))
    answer = _ask(model)
    label_only, written = model.requests
    assert label_only.logprobs and label_only.max_tokens == VERDICT_TOKENS
    assert "rationale" in written.json_schema["properties"]  # type: ignore[index]
    assert written.max_tokens == reply_tokens(RATIONALE_TOKENS) and not written.logprobs
    assert written.temperature == 0.0 and written.messages == label_only.messages
    assert answer.model_calls == 2
    on_label = [s.verdict.rationale for s in answer.samples if s.verdict and s.verdict.label == "invalid"]
    assert on_label and set(on_label) == {"the totals differ"}


@pytest.mark.parametrize(("rationales", "calls", "why"), [
    ("never", 1, ""), ("always", 1, "the totals differ")])
def test_rationales_are_written_only_where_asked(rationales: str, calls: int, why: str) -> None:
    model = ScriptedModel(_label_reply({"valid": 0.2, "invalid": 0.8}))
    answer = _ask(model, rationales=rationales)
    assert len(model.requests) == calls
    schema = model.requests[0].json_schema
    assert ("rationale" in schema["properties"]) == (rationales == "always")  # type: ignore[index]
    assert {s.verdict.rationale for s in answer.samples
            if s.verdict and s.verdict.label == "invalid"} == {why}


def test_a_rationale_on_another_label_is_not_given_to_the_verdict() -> None:
    # Greedy again on the same prompt, a batch can tip a near tie: that reply argues for the
    # other label, so the verdict keeps none.
    def flip(request: ModelRequest) -> Generation:
        if request.logprobs:
            return _label_reply({"valid": 0.49, "invalid": 0.51})(request)
        return Generation(json.dumps({"verdict": "valid", "rationale": "all the same"}))
    answer = _ask(ScriptedModel(flip), num_samples=1)
    (sample,) = answer.samples
    assert sample.verdict is not None and sample.verdict.label == "invalid"
    assert sample.verdict.rationale == ""


def test_questions_without_their_positive_labels_keep_a_rationale() -> None:
    model = ScriptedModel(_label_reply({"valid": 0.9, "invalid": 0.1}))
    judge = JudgeService(lambda n: model)
    answer = asyncio.run(judge.ask("m", "sys", "Q", VALID, 1))
    assert len(model.requests) == 2 and answer.samples[0].verdict is not None
    assert answer.samples[0].verdict.rationale == "the totals differ"
