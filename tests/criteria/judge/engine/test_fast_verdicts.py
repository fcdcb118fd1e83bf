"""Cheap verdicts (issue 28, item 1) on a scripted judge: the fixed text of the questions asked
most often comes before their material, so a prompt cache holds it; a one-pass verdict is one
call whose `num_samples` votes are drawn from the label's probabilities, the same under the same
question; its reply ends at the label unless a rationale is asked for after it (by default:
after negative labels), written, capped, in the same reply."""

import asyncio
import json
import math
from collections import Counter
from typing import Any

import pytest

from agenteval.criteria.base import EvalContext
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
    "safety": (prompts.safety("Q1?", "A1"), prompts.safety("Q2?", "A2"), "User request:"),
}


@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_the_fixed_text_of_every_prompt_comes_before_its_material(kind: str) -> None:
    # The questions asked most often; the hallucination cross-check keeps its material first
    # (its notes echoed instructions stated before it, see `prompts.hallucination_check`), and
    # so do the rubric steps',
    # trajectory's and the multi-turn questions' (not re-measured in the new order).
    a, b, material = PAIRS[kind]
    shared = _common(a, b)
    start = a.index(material)
    # Everything before the material is shared (and so cached); after it, only the material
    # and a closing line (at most ~40 tokens) that is the same for every question.
    assert len(shared) >= start and start > 80
    closing = a.rsplit("\n", 1)[-1]
    assert closing == b.rsplit("\n", 1)[-1] and len(closing) <= 200


def _explains(schema: dict[str, Any], label: str) -> bool:
    """Whether `schema` has a rationale follow `label` (in the `anyOf` branch of that label, as
    a constrained decoder follows it)."""
    branches = schema.get("anyOf") or [schema]
    branch = next(b for b in branches if label in b["properties"]["verdict"]["enum"])
    return "rationale" in branch["properties"]


def _label_reply(p: dict[str, float], rationale: str = "the totals differ") -> Any:
    """A judge that answers its greedy label with the label token's probabilities `p` when asked
    for log-probabilities, and writes a rationale where the schema asks for one after it."""
    def reply(request: ModelRequest) -> Generation:
        label = max(p, key=lambda k: p[k])
        tail = f'", "rationale": "{rationale}"}}' if _explains(request.json_schema or {}, label) else '"}'
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


def test_the_hallucination_cross_check_keeps_its_material_first() -> None:
    prompt = prompts.hallucination_check("C", "S")
    assert prompt.startswith("Context:")
    assert prompt.index("Copy the fact") > prompt.index("Sentence:")


def test_safety_asks_for_the_label_first_with_no_notes() -> None:
    # Notes before the label were safety's cost (~26 generated tokens); its examples answer
    # with the label first, a rationale after "unsafe" only, as the one-pass reply does.
    from agenteval.criteria import default_registry
    from agenteval.criteria.judge.prompting import examples
    from tests.helpers import inv

    prompt = prompts.safety("Q?", "A")
    assert prompt.index(prompts.SAFETY_POLICY) < prompt.index("User request:")
    criterion = default_registry().configure("safety_v1", {"threshold": 0.5}).build()
    (question,) = criterion.questions(EvalContext(actual=[inv("Q?", "A")]))  # type: ignore[attr-defined]
    assert question.notes == () and question.positive == frozenset({"safe"})
    replies = [json.loads(reply) for _, reply in examples.SAFETY]
    assert {tuple(r) for r in replies if r["verdict"] == "safe"} == {("verdict",)}
    assert all(r["rationale"] for r in replies if r["verdict"] == "unsafe")


def test_a_passing_verdict_is_one_call_that_ends_at_the_label() -> None:
    model = ScriptedModel(_label_reply({"valid": 0.9, "invalid": 0.1}))
    answer = _ask(model)
    (request,) = model.requests
    assert request.logprobs and request.max_tokens == reply_tokens(RATIONALE_TOKENS)
    schema = request.json_schema or {}
    assert not _explains(schema, "valid") and _explains(schema, "invalid")
    assert answer.model_calls == 1 and answer.replies == ['{"verdict": "valid"}']
    assert len(answer.samples) == 5 and all(s.drawn for s in answer.samples)
    assert answer.distribution == pytest.approx({"valid": 0.9, "invalid": 0.1})
    # The reply argues for nothing; a vote drawn on the other label says where it comes from.
    assert {s.verdict.rationale for s in answer.samples if s.verdict and s.verdict.label == "valid"} == {""}


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


def test_a_failing_verdict_gets_its_capped_rationale_in_the_same_call() -> None:
    model = ScriptedModel(_label_reply({"valid": 0.2, "invalid": 0.8}))
    answer = _ask(model)
    (request,) = model.requests
    assert request.logprobs and request.temperature == 0.0
    assert request.max_tokens == reply_tokens(RATIONALE_TOKENS)
    assert answer.model_calls == 1
    assert answer.replies == ['{"verdict": "invalid", "rationale": "the totals differ"}']
    assert answer.distribution == pytest.approx({"valid": 0.2, "invalid": 0.8})
    on_label = [s.verdict.rationale for s in answer.samples if s.verdict and s.verdict.label == "invalid"]
    assert on_label and set(on_label) == {"the totals differ"}


@pytest.mark.parametrize(("rationales", "tokens", "why"), [
    ("never", VERDICT_TOKENS, ""), ("always", reply_tokens(RATIONALE_TOKENS), "the totals differ")])
@pytest.mark.parametrize("p_valid", [0.2, 0.9])
def test_rationales_are_written_only_where_asked(rationales: str, tokens: int, why: str,
                                                 p_valid: float) -> None:
    model = ScriptedModel(_label_reply({"valid": p_valid, "invalid": 1 - p_valid}))
    answer = _ask(model, rationales=rationales)
    (request,) = model.requests
    schema = request.json_schema or {}
    assert "anyOf" not in schema and request.max_tokens == tokens
    assert ("rationale" in schema["properties"]) == (rationales == "always")
    label = "valid" if p_valid > 0.5 else "invalid"
    assert {s.verdict.rationale for s in answer.samples if s.verdict and s.verdict.label == label} == {why}


def test_questions_without_their_positive_labels_keep_a_rationale() -> None:
    model = ScriptedModel(_label_reply({"valid": 0.9, "invalid": 0.1}))
    judge = JudgeService(lambda n: model)
    answer = asyncio.run(judge.ask("m", "sys", "Q", VALID, 1))
    (request,) = model.requests
    assert "anyOf" not in (request.json_schema or {}) and answer.model_calls == 1
    assert answer.samples[0].verdict is not None
    assert answer.samples[0].verdict.rationale == "the totals differ"


class _Cache(dict[str, str]):
    def put(self, key: str, value: str) -> None:
        self[key] = value


def test_a_cached_label_only_reply_is_not_served_for_an_explained_verdict() -> None:
    # A reply cached as the label alone (an older judge, or rationales="never") has no rationale:
    # the question asked now (a rationale after "invalid") is a model call, then a cache hit.
    cache = _Cache()
    model = ScriptedModel(_label_reply({"valid": 0.2, "invalid": 0.8}))
    alone = _ask(model, cache=cache, rationales="never")
    explained = _ask(model, cache=cache)
    again = _ask(model, cache=cache)
    assert (alone.model_calls, explained.model_calls, again.model_calls) == (1, 1, 0)
    assert again.cached and again.readings == explained.readings
    assert {s.verdict.rationale for s in again.samples if s.verdict and s.verdict.label == "invalid"} \
        == {"the totals differ"}


@pytest.mark.parametrize("p_valid", [0.3, 0.5, 0.55, 0.9])
def test_the_votes_do_not_depend_on_what_follows_the_label(p_valid: float) -> None:
    # Drawn with the label-only question's seed: the same votes (and order) with or without a
    # rationale after the label, as the shipped certificates measured them.
    p = {"valid": p_valid, "invalid": 1 - p_valid}
    for prompt in ("Q1", "Q2", "Q3"):
        explained = _ask(ScriptedModel(_label_reply(p)), prompt=prompt)
        alone = _ask(ScriptedModel(_label_reply(p)), prompt=prompt, rationales="never")
        assert explained.readings == alone.readings
