"""What keeps a verdict cheap (issue 28, item 1), on a scripted judge: the shared prefix of a
criterion's questions comes first, a verdict-first reply is capped a few tokens after its
label and still read, and an embedded engine's slots are filled with concurrent questions."""

import asyncio
import json
import math
from typing import Any

import pytest

from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.engine.verdict import (
    RATIONALE_TOKENS,
    VERDICT_TOKENS,
    Verdict,
    parse_verdict,
    reply_tokens,
)
from agenteval.models import ModelRequest, ModelResponse, ScriptedModel
from agenteval.runner import CaseRun, score_case
from agenteval.schema import EvalCase, EvalCaseResult
from tests.helpers import inv

VALID = ("valid", "invalid")


class Slotted:
    """A scripted model that, like the embedded engine, has `slots` decoded together."""

    def __init__(self, inner: ScriptedModel, slots: int) -> None:
        self.inner, self.slots = inner, slots

    @property
    def name(self) -> str:
        return self.inner.name

    async def generate(self, request: ModelRequest) -> ModelResponse:
        return await self.inner.generate(request)


def _reply(request: ModelRequest) -> str:
    props = (request.json_schema or {}).get("properties", {})
    if "sentence_says" in props:
        return json.dumps({"sentence_says": "x", "context_says": "x", "verdict": "same"})
    if "required" in props:
        return json.dumps({"required": "the number 4"})
    if "reply_gives" in props:
        return json.dumps({"reply_gives": "4", "verdict": "meets"})
    label = props["verdict"]["enum"][0]
    return json.dumps({"verdict": label, "rationale": "fine"})


def _score(model: Any, name: str, options: dict[str, Any], response: str, **service: Any) -> EvalCaseResult:
    judge = JudgeService(lambda n: model, **service)
    metric = default_registry().configure(name, {"threshold": 0.5, **options})
    run = CaseRun(EvalCase(eval_id="c", conversation=[inv("q?", "ref")]), [inv("q?", response)], "s")
    return asyncio.run(score_case(run, [metric], judge=judge))


FOUR_SENTENCES = "It is 4. It is even. It is small. It is square."


def test_an_engines_slots_are_filled_with_concurrent_questions() -> None:
    # hallucinations_v1 asks one question per sentence (and a cross-check per supported one);
    # at the default parallelism_limit 1 an engine with 4 slots still gets 4 at once.
    slotted = ScriptedModel(_reply, latency=0.05)
    result = _score(Slotted(slotted, 4), "hallucinations_v1", {}, FOUR_SENTENCES)
    assert result.overall_eval_metric_results[0].score == 1.0
    assert slotted.max_in_flight == 4
    plain = ScriptedModel(_reply, latency=0.05)  # an HTTP judge: parallelism_limit holds
    _score(plain, "hallucinations_v1", {}, FOUR_SENTENCES)
    assert plain.max_in_flight == 1
    limited = ScriptedModel(_reply, latency=0.05)
    _score(limited, "hallucinations_v1", {"judge_model_options": {"parallelism_limit": 2}}, FOUR_SENTENCES)
    assert limited.max_in_flight == 2


def test_a_rubrics_requirements_are_asked_concurrently_on_an_engine() -> None:
    # Rubrics of no family of narrow checks (`rubric_checks`): judged in two steps.
    rubrics = [{"rubric_id": f"r{i}", "rubric_content": {"text_property": f"uses British spelling {i}"}}
               for i in range(3)]
    model = ScriptedModel(_reply, latency=0.05)
    result = _score(Slotted(model, 4), "rubric_based_final_response_quality_v1", {"rubrics": rubrics}, "4")
    assert result.overall_eval_metric_results[0].score == 1.0
    assert model.max_in_flight == 3


def test_questions_of_a_criterion_share_their_prefix_and_differ_at_the_end() -> None:
    # The system prompt and solved examples are the same for every question (the engine's
    # prompt cache holds them); what differs comes last. Questions about one invocation also
    # share its context before the sentence.
    model = ScriptedModel(_reply)
    _score(model, "hallucinations_v1", {"judge_model_options": {"num_samples": 1}}, FOUR_SENTENCES)
    firsts = [r for r in model.requests if "sentence_says" not in r.json_schema["properties"]]  # type: ignore[index]
    assert len(firsts) == 4
    heads = {r.messages[:-1] for r in firsts}
    assert len(heads) == 1 and len(firsts[0].messages) > 2  # system + examples, shared
    lasts = [r.messages[-1].content for r in firsts]
    context_end = lasts[0].index("Sentence written by the agent")
    assert all(text[:context_end] == lasts[0][:context_end] for text in lasts)


def test_a_verdict_first_reply_is_capped_and_notes_first_replies_are_not() -> None:
    model = ScriptedModel(_reply)
    _score(model, "final_response_match_v2", {}, "ref")  # 5 samples: a one-pass try, then written
    # The one-pass try (a rationale after "invalid" only) and the written samples are capped
    # at the label plus the rationale's tokens; the label alone at VERDICT_TOKENS.
    assert {r.max_tokens for r in model.requests} == {reply_tokens(RATIONALE_TOKENS)}
    assert "anyOf" in (model.requests[0].json_schema or {})
    alone = ScriptedModel(_reply)
    _score(alone, "final_response_match_v2", {}, "ref", rationales="never")
    assert alone.requests[0].max_tokens == VERDICT_TOKENS
    assert reply_tokens(RATIONALE_TOKENS) < 200
    # Safety asks for its label first too (since session 11), capped the same way.
    safety = ScriptedModel(lambda r: json.dumps({"verdict": "safe"}))
    _score(safety, "safety_v1", {}, "ref")
    assert safety.requests[0].max_tokens == reply_tokens(RATIONALE_TOKENS)
    # Notes come before the label: their reply is not cut at the label's budget.
    noted = ScriptedModel(lambda r: json.dumps({"reply_does": "answers", "verdict": "safe"}))
    judge = JudgeService(lambda n: noted)
    asyncio.run(judge.ask("m", "sys", "Q", ("safe", "unsafe"), 1, notes=("reply_does",)))
    assert noted.requests[0].max_tokens == judge.max_tokens
    capped = JudgeService(lambda n: model, rationale_tokens=0)
    assert reply_tokens(capped.rationale_tokens) == 16


def test_a_cut_reply_is_read_with_what_it_has() -> None:
    cut = '{"verdict": "invalid", "rationale": "the totals differ: 12 against 1'
    assert parse_verdict(cut, VALID) == Verdict("invalid", "the totals differ: 12 against…")
    assert parse_verdict('{"verdict": "valid", "rationale": "', VALID) == Verdict("valid", "")
    assert parse_verdict('{"verdict": "valid", "rati', VALID) == Verdict("valid", "")
    assert parse_verdict('{"verdict": "valid", ', VALID) == Verdict("valid", "")
    assert parse_verdict('{"verdict": "valid"', VALID) == Verdict("valid", "")


@pytest.mark.parametrize("text", ['{"verdict": "inv', '{"verdict": "', '{"reply_does": "gives a recipe'])
def test_a_reply_cut_before_its_label_has_no_verdict(text: str) -> None:
    assert parse_verdict(text, VALID) is None
    assert parse_verdict(text, ("safe", "unsafe"), ("reply_does",)) is None


def test_a_capped_reply_scores_and_explains_the_verdict() -> None:
    model = ScriptedModel(['{"verdict": "invalid", "rationale": "the agent says 9 is prime, the'])
    result = _score(model, "final_response_match_v2", {"judge_model_options": {"num_samples": 1}},
                    "9 is prime")
    (record,) = result.judge_records
    assert record.score == 0.0 and record.rationale == "the agent says 9 is prime…"
    assert "the agent says 9 is prime" in (result.reasons[0].reason if result.reasons else "")


def _rubric_reply(p_meets: float) -> Any:
    """A one-pass step-2 reply saying meets with probability `p_meets` at the verdict token."""
    from agenteval.models import Generation, TokenLogprob

    def reply(request: ModelRequest) -> Any:
        props = (request.json_schema or {}).get("properties", {})
        if "required" in props:
            return json.dumps({"required": "the number 4"})
        if not request.logprobs:
            return json.dumps({"reply_gives": "4", "verdict": "meets"})
        head, label = '{"reply_gives": "4", "verdict": "', "meets"
        top = (("meets", math.log(p_meets)), ("fails", math.log(1 - p_meets)))
        tokens = (TokenLogprob(head, 0.0), TokenLogprob(label, math.log(p_meets), top),
                  TokenLogprob('"}', 0.0))
        return Generation(head + label + '"}', logprobs=tokens)
    return reply


@pytest.mark.parametrize(("p", "escalated"), [(0.7, True), (0.9, False)])
def test_rubric_verdicts_below_the_floor_go_to_the_stronger_judge(p: float, escalated: bool) -> None:
    weak, strong = ScriptedModel(_rubric_reply(p)), ScriptedModel(_reply)
    models = {"local": weak, "strong": strong}
    judge = JudgeService(lambda n: models[n])
    rubric = {"rubric_id": "r", "rubric_content": {"text_property": "uses British spelling"}}
    metric = default_registry().configure("rubric_based_final_response_quality_v1", {
        "threshold": 0.5, "rubrics": [rubric], "judge_model_options": {"escalate_to": "strong"}})
    run = CaseRun(EvalCase(eval_id="c", conversation=[inv("q?", "4")]), [inv("q?", "4")], "s")
    result = asyncio.run(score_case(run, [metric], judge=judge))
    verdict = result.judge_records[-1]
    assert (verdict.escalated is not None) == escalated and verdict.score == 1.0
    plain = default_registry().configure("rubric_based_final_response_quality_v1", {
        "threshold": 0.5, "rubrics": [rubric]})
    alone_judge = JudgeService(lambda n: ScriptedModel(_rubric_reply(p)))
    alone = asyncio.run(score_case(run, [plain], judge=alone_judge))
    # Without a stronger judge nothing is held to the floor: no threshold is shipped.
    assert alone.judge_records[-1].escalated is None and alone.judge_records[-1].score == 1.0
