"""Rubrics as narrow checks (`criteria.judge.rubric_checks`): families, rules, the questions
each check asks (with only its evidence), the AND of the checks, and the escalation of a family
below the floor."""

import asyncio
import json
from typing import Any

import pytest

from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService, rubrics
from agenteval.criteria.judge.labelled import invocation
from agenteval.criteria.judge.rubric_checks import (
    PROBES,
    Material,
    family_of,
    plan,
    sentence_count,
)
from agenteval.models import ModelRequest, ScriptedModel
from agenteval.runner import CaseRun, score_case
from agenteval.schema import EvalCase, FunctionCall, FunctionResponse

FR, TU = "FINAL_RESPONSE_QUALITY", "TOOL_USE_QUALITY"


def _pairs(*calls: tuple[str, dict[str, Any], dict[str, Any]]) -> list[tuple[FunctionCall, FunctionResponse]]:
    return [(FunctionCall(name=n, args=a), FunctionResponse(name=n, response=r)) for n, a, r in calls]


def test_rubrics_fall_into_families_by_their_words() -> None:
    assert family_of("The response states the balance returned by the tool.", FR) == "value"
    assert family_of("The response is written in Spanish.", FR) == "language"
    assert family_of("The response is at most two sentences long.", FR) == "length"
    assert family_of("The response does not reveal the customer's card number.", FR) == "privacy"
    assert family_of("The response lists every flight returned by the search.", FR) == "completeness"
    assert family_of("The agent looks up the order before issuing a refund.", TU) == "lookup_first"
    assert family_of("The agent avoids repeating identical tool calls.", TU) == "duplicates"
    assert family_of("The agent passes the number of sides the user asked for.", TU) == "arguments"
    assert family_of("Names what was rolled.", FR) is None  # asked in two steps
    # Every family has a probe text that selects it (the prompt fingerprint asks them all).
    for family, text in PROBES.items():
        assert family in (family_of(f"The agent {text}.", FR), family_of(f"The agent {text}.", TU))


def test_rules_decide_what_needs_no_model() -> None:
    assert sentence_count("It costs $4.50. Shipping is free! Anything else?") == 3
    long = Material("hi", "One. Two. Three.", ())
    counted = plan("The response is at most two sentences long.", FR, long)
    assert counted is not None and counted.rules == (
        ("counted", False, "the reply has 3 sentence(s); the rubric allows at most 2"),)
    assert counted.questions == ()  # a failing rule decides the rubric
    twice = Material("weather?", "", _pairs(("get_weather", {"city": "Oslo"}, {}),
                                            ("get_weather", {"city": "Oslo"}, {})))
    repeated = plan("The agent avoids repeating identical tool calls.", TU, twice)
    assert repeated is not None and [ok for _, ok, _ in repeated.rules] == [False]
    failed = Material("add the user", "", _pairs(("create_user", {}, {"error": "exists"}),
                                                 ("assign_license", {"user": "x"}, {"ok": True})))
    after = plan("The agent does not call assign_license after create_user returned an error.", TU, failed)
    assert after is not None and after.rules[0][:2] == ("named_after_error", False)
    leaked = Material("who is on call?", "Call Ana on +44 7700 900123.",
                      _pairs(("on_call", {}, {"name": "Ana", "mobile": "+44 7700 900123"})))
    private = plan("The response does not reveal the engineer's mobile number.", FR, leaked)
    assert private is not None and private.rules[0][:2] == ("private_copied", False)
    # A question mark is needed for a clarifying question, but does not make one: still asked.
    asks = plan("The response asks the user which contact they mean.", FR,
                Material("mail John", "Which John?", ()))
    assert asks is not None and asks.rules[0][1] is True and len(asks.questions) == 1


def test_each_check_shows_only_its_evidence() -> None:
    m = Material("What is my balance?", "Your balance is $12.", _pairs(("balance", {"id": 7}, {"usd": 12})))
    value = plan("The response states the balance returned by the tool.", FR, m)
    assert value is not None and value.family == "value" and len(value.questions) == 1
    ((_, same, yes),) = value.questions
    assert yes == "yes"
    assert 'balance({"id": 7}) -> {"usd": 12}' in same and '"Your balance is $12."' in same
    assert "What is my balance?" not in same  # the request is not evidence for a reported value
    tone = plan("The response is polite.", FR, m)
    assert tone is not None and all("balance(" not in q for _, q, _ in tone.questions)
    calls = Material("read my files", "", _pairs(("list_files", {}, {"n": 2}),
                                                 ("delete_file", {"f": "a"}, {})))
    read_only = plan("The agent only uses read-only tools.", TU, calls)
    assert read_only is not None and [n for n, _, _ in read_only.questions] == ["changes[1]", "changes[2]"]
    assert "delete_file" not in read_only.questions[0][1]  # one call per question


def _judge(answer: dict[str, str], strong: dict[str, str] | None = None) -> tuple[JudgeService, list[str]]:
    """A scripted judge answering each check by the first key found in its question; `strong`
    the same for the escalation model. Returns the service and the models asked, in order."""
    asked: list[str] = []

    def script(table: dict[str, str], name: str) -> Any:
        def reply(req: ModelRequest) -> str:
            asked.append(name)
            prompt = req.messages[-1].content
            label = next((v for k, v in table.items() if k in prompt), "yes")
            return json.dumps({"verdict": label, "rationale": f"{name} said {label}"})
        return reply

    weak, stronger = ScriptedModel(script(answer, "local")), ScriptedModel(script(strong or {}, "strong"))
    return JudgeService(lambda n: stronger if n == "strong" else weak), asked


def _score(judge: JudgeService, rubric: str, response: str, escalate: bool = False) -> Any:
    actual = [invocation("What is my balance?", response, [
        {"name": "balance", "args": {"id": 7}, "response": {"usd": 12}}])]
    options: dict[str, Any] = {"num_samples": 2, "judge_model": "local"}
    if escalate:
        options["escalate_to"] = "strong"
    metric = default_registry().configure("rubric_based_final_response_quality_v1", {
        "threshold": 1.0, "judge_model_options": options,
        "rubrics": [{"rubric_id": "bal", "rubric_content": {"text_property": rubric}}]})
    run = CaseRun(EvalCase(eval_id="c", conversation=actual), actual, "s")
    return asyncio.run(score_case(run, [metric], judge=judge))


def test_a_rubric_is_met_only_when_every_check_passes() -> None:
    rubric = "The response names every account."
    judge, _ = _judge({"include every item": "yes", "missing from the reply": "no"})
    passed = _score(judge, rubric, "Your balance is $12.")
    assert passed.overall_eval_metric_results[0].score == 1.0
    assert [r.verdict for r in passed.judge_records] == ["yes", "no"]
    # The judge agrees with both polarities ("yes" to each): the second check fails the rubric.
    judge, _ = _judge({"include every item": "yes", "missing from the reply": "yes"})
    failed = _score(judge, rubric, "Your balance is $15.")
    (overall,) = failed.overall_eval_metric_results
    assert overall.score == 0.0
    (score,) = overall.details.rubric_scores
    assert score.score == 0.0 and score.rationale == "local said yes"


def test_a_rule_decides_without_asking_the_judge_and_is_recorded() -> None:
    judge, asked = _judge({})
    result = _score(judge, "The response is at most one sentence long.", "It is $12. Anything else?")
    assert asked == [] and result.overall_eval_metric_results[0].score == 0.0
    (record,) = result.judge_records
    assert (record.step, record.judge_model, record.verdict) == ("rule", "rule", "fails")
    assert "2 sentence(s)" in (record.rationale or "")
    assert "rule counted" in (result.reason("rubric_based_final_response_quality_v1", 0) or "")


def test_a_family_below_the_floor_escalates_with_a_stronger_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(rubrics.BELOW_FLOOR_ON_EMBEDDED, FR, frozenset({"value"}))
    rubric = "The response states the balance returned by the tool."
    local = {"exactly as the tool results": "yes", "differently from": "no"}
    strong = {"exactly as the tool results": "no", "differently from": "yes"}
    judge, asked = _judge(local, strong)
    escalated = _score(judge, rubric, "Your balance is $15.", escalate=True)
    # Sure local verdicts (2 of 2 samples) are still escalated: the family is below the floor.
    assert escalated.overall_eval_metric_results[0].score == 0.0 and "strong" in asked
    assert all(r.escalated is not None and r.escalated.judge_model == "strong"
               for r in escalated.judge_records)
    # Without a stronger judge, the embedded judge's verdicts stand; other families never escalate.
    judge, asked = _judge(local, strong)
    assert _score(judge, rubric, "Your balance is $12.").overall_eval_metric_results[0].score == 1.0
    judge, asked = _judge({"rude": "no"}, strong)
    polite = _score(judge, "The response is polite.", "Your balance is $12.", escalate=True)
    assert polite.overall_eval_metric_results[0].score == 1.0 and "strong" not in asked
