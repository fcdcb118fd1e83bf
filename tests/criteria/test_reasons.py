"""Every criterion gives a reason with its score, made where it decides, and the scorer stores
it in the case result (`EvalCaseResult.reasons`), overall and per invocation."""

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import pytest

from agenteval.criteria import Registry, default_registry
from agenteval.criteria.base import CriterionResult, EvalContext
from agenteval.criteria.custom import function_spec
from agenteval.criteria.efficiency import ToolCallCount
from agenteval.criteria.judge import JudgeService
from agenteval.criteria.reasons import mean_reason
from agenteval.models import ScriptedModel
from agenteval.runner import CaseRun, score_case
from agenteval.runner.scoring import run_criterion
from agenteval.schema import BaseCriterion, EvalCase, Invocation
from tests.helpers import call, inv


class _Explained:
    """A criterion's result, read as a stored document reads: `reason(name, index)`."""

    def __init__(self, result: CriterionResult) -> None:
        self.result = result

    def reason(self, name: str, index: int | None = None) -> str | None:
        return self.result.reason if index is None else self.result.per_invocation[index].reason


def _score(name: str, criterion: Any, expected: list[Invocation], actual: list[Invocation],
           judge: JudgeService | None = None) -> _Explained:
    metric = default_registry().configure(name, criterion)
    ctx = EvalContext(actual=actual, expected=expected, judge=judge)
    return _Explained(asyncio.run(run_criterion(metric, ctx)))


def _trajectory(match: str, expected: list[Any], actual: list[Any], **extra: Any) -> str | None:
    result = _score("tool_trajectory_avg_score", {"threshold": 1.0, "match_type": match, **extra},
                    [inv("q", "a", expected)], [inv("q", "a", actual)])
    return result.reason("tool_trajectory_avg_score", 0)


def test_exact_names_the_first_mismatched_call_and_argument() -> None:
    why = _trajectory("EXACT", [call("get_time"), call("get_weather", city="Paris")],
                      [call("get_time"), call("get_weather", city="paris")])
    assert why == ('EXACT: call 2: expected get_weather(city="Paris"), got get_weather(city="paris"): '
                   "argument city differs")


def test_exact_names_a_missing_or_extra_call_and_a_missing_argument() -> None:
    assert _trajectory("EXACT", [call("a"), call("b", x=1)], [call("a")]) == (
        "EXACT: missing call 2 of 2: expected b(x=1), got 1 call")
    assert _trajectory("EXACT", [call("a")], [call("a"), call("c")]) == (
        "EXACT: extra call 2: c() (expected 1 call, got 2)")
    assert _trajectory("EXACT", [call("a", x=1, y=2)], [call("a", x=1)]) == (
        "EXACT: call 1: expected a(x=1, y=2), got a(x=1): argument y missing")
    assert _trajectory("EXACT", [call("a", x=1)], [call("b", x=1)]) == (
        "EXACT: call 1: expected a(x=1), got b(x=1)")


def test_in_order_and_any_order_name_the_call_not_made() -> None:
    assert _trajectory("IN_ORDER", [call("a"), call("b")], [call("b"), call("a")]) == (
        "IN_ORDER: expected call 2 of 2, b(), not made in order after call 2; it was made earlier, "
        "at call 1")
    assert _trajectory("ANY_ORDER", [call("a", n=1), call("b")], [call("b"), call("a", n=2)]) == (
        "ANY_ORDER: expected call a(n=1) not made (1 of 2 matched); closest: call 2, a(n=2): "
        "argument n differs")


def test_a_match_says_how_it_matched() -> None:
    assert _trajectory("EXACT", [call("a")], [call("a")]) == "EXACT: 1 call as expected"
    assert _trajectory("IN_ORDER", [call("a")], [call("z"), call("a")]) == (
        "IN_ORDER: 1 call expected in order (1 more allowed)")
    assert _trajectory("EXACT", [], []) == "EXACT: no calls expected, none made"


def test_args_match_names_the_argument_its_matcher_rejected() -> None:
    why = _trajectory("EXACT", [call("f", q="hello", n=1)], [call("f", q="HELLO", n=2)],
                      args_match={"f": {"q": "text"}})
    assert why == 'EXACT: call 1: expected f(q="hello", n=1), got f(q="HELLO", n=2): argument n differs'


def test_the_overall_reason_names_the_deciding_invocation_and_the_threshold() -> None:
    result = _score("tool_trajectory_avg_score", 1.0,
                    [inv("q", "a", [call("a")]), inv("r", "b", [call("b")])],
                    [inv("q", "a", [call("a")]), inv("r", "b", [call("c")])])
    assert result.reason("tool_trajectory_avg_score") == (
        "mean 0.5 < threshold 1 over 2 invocations; lowest: invocation 1 (0): "
        "EXACT: call 1: expected b(), got c()")
    one = _score("tool_trajectory_avg_score", 1.0, [inv("q", "a", [call("a")])],
                 [inv("q", "a", [call("a")])])
    assert one.reason("tool_trajectory_avg_score") == "mean 1 ≥ threshold 1: EXACT: 1 call as expected"


def test_partial_credit_trajectory_reasons() -> None:
    exp, act = [inv("q", "a", [call("a"), call("b")])], [inv("q", "a", [call("a"), call("c"), call("d")])]
    p = _score("tool_trajectory_precision", 0.5, exp, act)
    assert p.reason("tool_trajectory_precision", 0) == (
        "1 of 3 calls made were expected; first extra: call 2, c()")
    r = _score("tool_trajectory_recall", 0.5, exp, act)
    assert r.reason("tool_trajectory_recall", 0) == "1 of 2 calls expected were made; first missing: b()"
    assert r.reason("tool_trajectory_recall") == (
        "mean 0.5 ≥ threshold 0.5: 1 of 2 calls expected were made; first missing: b()")
    s = _score("tool_trajectory_single_tool_use", {"threshold": 1.0, "tool_name": "d"}, exp,
               [inv("q", "a", [call("a")]), inv("r", "b", [call("d")])])
    assert s.reason("tool_trajectory_single_tool_use") == "score 1 ≥ threshold 1: d called in invocation 1"
    assert s.reason("tool_trajectory_single_tool_use", 0) == "d not called"


def test_rouge_reason_gives_precision_recall_f_and_threshold() -> None:
    result = _score("response_match_score", 0.8, [inv("q", "the cat sat on the mat")],
                    [inv("q", "the cat sat")])
    f = result.result.score
    assert f is not None
    assert result.reason("response_match_score", 0) == (
        f"ROUGE-1 F {f:.4g} < threshold 0.8 (precision 1, recall 0.5)")
    assert result.reason("response_match_score") == (
        f"mean {f:.4g} < threshold 0.8: ROUGE-1 F {f:.4g} < threshold 0.8 (precision 1, recall 0.5)")


def test_efficiency_reasons_are_overall_and_informational() -> None:
    count = ToolCallCount("tool_call_count_v1", BaseCriterion(threshold=0.0))
    result = count.score(EvalContext(actual=[inv("q", "a", [call("a"), call("b")]), inv()]))
    assert result.reason == (
        "mean 1 tool calls per invocation over 2 invocations (from the recorded invocations; "
        "informational)")
    assert [p.reason for p in result.per_invocation] == [None, None]


def _judge(labels: list[str]) -> JudgeService:
    model = ScriptedModel([json.dumps({"rationale": f"because {i}", "verdict": v})
                           for i, v in enumerate(labels)])
    return JudgeService(lambda name: model)


def test_a_judged_reason_is_the_vote_its_confidence_and_the_threshold() -> None:
    options = {"threshold": 0.5, "judge_model_options": {"num_samples": 5, "min_confidence": 0.55}}
    result = _score("final_response_match_v2", options, [inv("q", "Paris")], [inv("q", "Paris.")],
                    _judge(["valid", "invalid", "valid", "valid", "invalid"]))
    assert result.reason("final_response_match_v2", 0) == (
        "3 of 5 samples said valid; confidence 0.60 ≥ 0.55")
    assert result.reason("final_response_match_v2") == (
        "score 1 ≥ threshold 0.5: 3 of 5 samples said valid; confidence 0.60 ≥ 0.55")


def test_a_negative_judged_reason_carries_the_rationale() -> None:
    options = {"threshold": 0.5, "judge_model_options": {"num_samples": 1}}
    result = _score("final_response_match_v2", options, [inv("q", "Paris")], [inv("q", "Lyon")],
                    _judge(["invalid"]))
    assert result.reason("final_response_match_v2", 0) == "the judge said invalid — because 0"


def test_an_uncertain_judged_reason_says_it_was_not_used() -> None:
    options = {"threshold": 0.5, "judge_model_options": {"num_samples": 5, "min_confidence": 0.8}}
    result = _score("final_response_match_v2", options, [inv("q", "Paris")], [inv("q", "Paris.")],
                    _judge(["valid", "valid", "valid", "invalid", "invalid"]))
    why = result.reason("final_response_match_v2", 0)
    assert why is not None and why.startswith("3 of 5 samples said valid; confidence 0.60 < 0.8: "
                                              "judge uncertain")
    assert result.reason("final_response_match_v2") is None  # not evaluated: the error says why


@pytest.mark.parametrize(("returned", "overall", "per"), [
    (0.7, None, None),
    (SimpleNamespace(value=0.7, reason="close enough"), "close enough", None),
    (SimpleNamespace(overall_score=0.7, overall_eval_status=None, reason="mine",
                     per_invocation_results=[SimpleNamespace(score=0.7, reason="turn says")]),
     "mine", "turn says"),
])
def test_custom_criteria_keep_their_own_reason_or_none(returned: Any, overall: str | None,
                                                       per: str | None) -> None:
    registry = Registry()
    registry.register(function_spec("mine", lambda *args: returned))
    metric = registry.configure("mine", 0.5)
    run = CaseRun(EvalCase(eval_id="c", conversation=[inv()]), [inv()], "s")
    result = asyncio.run(score_case(run, [metric]))
    assert result.overall_eval_metric_results[0].score == 0.7
    # Stored: the overall reason always, an invocation's only where it did not pass (0.7 ≥ 0.5).
    assert (result.reason("mine"), result.reason("mine", 0)) == (overall, None)
    ctx = EvalContext(actual=[inv()], expected=[inv()])
    direct = asyncio.run(run_criterion(metric, ctx))
    assert (direct.reason, direct.per_invocation[0].reason) == (overall, per)


def test_the_document_keeps_every_overall_reason_and_those_of_invocations_that_did_not_pass() -> None:
    metric = default_registry().configure("tool_trajectory_avg_score", 0.5)
    expected = [inv("q", "a", [call("a")]), inv("r", "b", [call("b")])]
    run = CaseRun(EvalCase(eval_id="c", conversation=expected),
                  [inv("q", "a", [call("a")]), inv("r", "b", [call("c")])], "s")
    result = asyncio.run(score_case(run, [metric]))
    assert [(r.invocation_index, r.reason) for r in result.reasons] == [
        (None, "mean 0.5 ≥ threshold 0.5 over 2 invocations; lowest: invocation 1 (0): "
               "EXACT: call 1: expected b(), got c()"),
        (1, "EXACT: call 1: expected b(), got c()")]


def test_mean_reason_without_a_score_is_none_and_ties_are_not_singled_out() -> None:
    assert mean_reason(None, 0.5, [None], [None]) is None
    assert mean_reason(1.0, 0.5, [1.0, 1.0], ["x", "y"]) == "mean 1 ≥ threshold 0.5 over 2 invocations"


def test_a_mean_reason_of_invocation_scores_is_mean_reason_reading_only_the_reason_it_names() -> None:
    import random

    from agenteval.criteria.base import InvocationScore, _mean_reason

    rng = random.Random(5)
    for _ in range(3000):
        n = rng.randint(0, 4)
        scores = [rng.choice([None, 0.0, 0.25, 0.5, 2 / 3, 1.0]) for _ in range(n)]
        texts = [rng.choice([None, "", f"why {i}"]) for i in range(n)]
        made: list[int] = []

        def lazy(i: int, text: str | None, made: list[int] = made) -> Any:
            return lambda: made.append(i) or text

        per = [InvocationScore(s, reason=lazy(i, t) if rng.random() < 0.5 else t)
               for i, (s, t) in enumerate(zip(scores, texts, strict=True))]
        present = [s for s in scores if s is not None]
        overall = rng.choice([None, sum(present) / len(present) if present else None, 0.5])
        threshold = rng.choice([0.5, 1.0, 0.0])
        said = _mean_reason(overall, threshold, per)
        assert len(made) <= 1  # the invocation it names, at most
        assert said == mean_reason(overall, threshold, scores, texts), (overall, threshold, scores, texts)


@pytest.mark.parametrize("value", [
    {"a": [1, 2.5, None, True], "b": {"c": "é\n\"x\""}}, [], {}, [float("nan"), float("inf"), 1e300],
    {"k": "東京", "n": -0.0, "big": 10**30}, [[[[[]]]]], {1: "int key", None: "none key"},
])
def test_a_container_argument_is_written_as_json_dumps_writes_it(value: Any) -> None:
    from agenteval.criteria.reasons import value_text

    assert value_text(value) == json.dumps(value, ensure_ascii=False)


def test_a_container_json_cannot_write_raises_as_json_dumps_raises() -> None:
    from agenteval.criteria.reasons import value_text

    cyclic: list[Any] = [1]
    cyclic.append(cyclic)
    for bad, error in (([1, {2, 3}], TypeError), ({"x": object()}, TypeError), (cyclic, ValueError)):
        with pytest.raises(error) as raised:
            value_text(bad)
        with pytest.raises(error) as expected:
            json.dumps(bad, ensure_ascii=False)
        assert str(raised.value) == str(expected.value)
    assert value_text([1, 2]) == "[1, 2]"  # and the encoder still works after a failure


def test_a_call_is_written_with_json_strings_and_containers_and_reprs_otherwise() -> None:
    from agenteval.criteria.reasons import call_text
    from agenteval.schema import FunctionCall

    class Text(str):
        pass

    made = FunctionCall(name="book", args={"city": "Kraków", "n": 3, "f": 0.5, "ok": True, "none": None,
                                          "guests": [{"name": "Ana"}], "note": 'say "hi"'})
    assert call_text(made) == ('book(city="Kraków", n=3, f=0.5, ok=True, none=None, '
                               'guests=[{"name": "Ana"}], note="say \\"hi\\"")')
    assert call_text(FunctionCall(name="x", args={})) == "x()"
    assert call_text(FunctionCall(name="x", args=None)) == "x()"
    assert call_text(FunctionCall.model_construct(name="x", args={"s": Text("t")})) == 'x(s="t")'
