import asyncio

from agenteval.criteria import (
    CriterionResult,
    EvalContext,
    Registry,
    register_function,
    resolve_metrics,
)
from agenteval.runner import CaseRun, score_case
from agenteval.schema import EvalCase, EvalStatus
from tests.helpers import call, inv


def _run(actual: list, expected: list) -> CaseRun:  # type: ignore[type-arg]
    return CaseRun(case=EvalCase(eval_id="c", conversation=expected), actual=actual, eval_set_id="s")


def test_case_passes_when_every_gating_metric_passes() -> None:
    metrics = resolve_metrics(default_registry_config())
    result = asyncio.run(score_case(_run([inv(calls=[call("f")])], [inv(calls=[call("f")])]), metrics))
    assert result.final_eval_status == EvalStatus.PASSED
    statuses = {m.metric_name: m.eval_status for m in result.overall_eval_metric_results}
    assert statuses["tool_call_count_v1"] == EvalStatus.INFORMATIONAL
    assert result.eval_metric_result_per_invocation[0].eval_metric_results[0].score == 1.0


def default_registry_config():  # type: ignore[no-untyped-def]
    from agenteval.schema import EvalConfig

    return EvalConfig()


def _broken_registry() -> Registry:
    registry = Registry()

    def broken(metric, actual, expected, scenario):  # type: ignore[no-untyped-def]
        raise RuntimeError("judge unreachable")

    def empty(metric, actual, expected, scenario):  # type: ignore[no-untyped-def]
        return CriterionResult(None, [])

    register_function("broken", broken, registry=registry)
    register_function("empty", empty, registry=registry)
    register_function("ok", lambda *a: 1.0, registry=registry)
    return registry


def test_failed_criterion_is_recorded_and_fails_the_case() -> None:
    registry = _broken_registry()
    metrics = [registry.configure(n, 0.5) for n in ("ok", "broken", "empty")]
    result = asyncio.run(score_case(_run([inv()], [inv()]), metrics))
    assert result.final_eval_status == EvalStatus.FAILED
    assert [m.eval_status for m in result.overall_eval_metric_results] == [
        EvalStatus.PASSED, EvalStatus.NOT_EVALUATED, EvalStatus.NOT_EVALUATED]
    messages = {e.metric_name: e.message for e in result.metric_errors}
    assert messages["broken"].startswith("RuntimeError: judge unreachable (at ")  # where it was raised
    assert messages["broken"].endswith("test_scoring.py:" + messages["broken"].rsplit(":", 1)[1])
    assert messages["empty"] == "the criterion produced no score" and len(messages) == 2


def test_a_case_without_turns_says_so_where_its_criteria_give_no_score() -> None:
    result = asyncio.run(score_case(_run([], []), resolve_metrics(default_registry_config())))
    assert result.final_eval_status == EvalStatus.FAILED
    gating = [m for m in result.overall_eval_metric_results if m.eval_status == EvalStatus.NOT_EVALUATED]
    assert gating and {e.metric_name for e in result.metric_errors} == {m.metric_name for m in gating}
    assert {e.message for e in result.metric_errors} == {"the case has no turns: its conversation is empty"}


def test_not_evaluated_can_be_ignored_by_policy() -> None:
    registry = _broken_registry()
    metrics = [registry.configure(n, 0.5) for n in ("ok", "broken")]
    result = asyncio.run(score_case(_run([inv()], [inv()]), metrics, policy="ignore"))
    assert result.final_eval_status == EvalStatus.PASSED
    assert result.metric_errors  # still recorded


def test_inference_error_fails_case_without_metrics() -> None:
    run = _run([], [inv()])
    run.error_message = "ValueError: agent exploded"
    result = asyncio.run(score_case(run, resolve_metrics(default_registry_config())))
    assert result.final_eval_status == EvalStatus.FAILED
    assert result.error_message == "ValueError: agent exploded"


def test_context_reaches_criteria() -> None:
    seen: list[EvalContext] = []
    registry = Registry()

    def spy(metric, actual, expected, scenario):  # type: ignore[no-untyped-def]
        seen.append(EvalContext(actual=actual, expected=expected))
        return 1.0

    register_function("spy", spy, registry=registry)
    asyncio.run(score_case(_run([inv("a")], [inv("e")]), [registry.configure("spy", 1.0)]))
    assert seen[0].actual[0].user_content.text() == "a"
    assert seen[0].expected is not None and seen[0].expected[0].user_content.text() == "e"


def test_a_recorded_runs_result_is_what_validation_makes() -> None:
    # `score_case` makes a recorded run's result without validation: the same fields in the
    # same order as the validated model, so the same document bytes.
    from agenteval.schema import EvalCaseResult, Invocation

    def events(usage: dict[str, int] | None) -> Invocation:
        return Invocation.model_validate({
            "user_content": {"role": "user", "parts": [{"text": "hi"}]}, "duration": 2.5,
            "model_duration": 1.0, "intermediate_data": {"invocation_events": [
                {"author": "a", "content": {"role": "model", "parts": [
                    {"function_call": {"name": "g", "args": {"x": [1, 2]}}}]},
                 "usage_metadata": usage}]}})

    metrics = resolve_metrics(default_registry_config())
    actual = [inv(calls=[call("f", a=1)]), events({"prompt_token_count": 3})]
    expected = [inv(calls=[call("f", a=2)]), events(None)]
    result = asyncio.run(score_case(_run(actual, expected), metrics))
    again = EvalCaseResult.model_validate(result.model_dump())
    assert result.model_dump_json(indent=2) == again.model_dump_json(indent=2)
    assert result == again
    assert result.reasons and result.final_eval_status == EvalStatus.FAILED


def test_each_list_of_metrics_is_scored_with_its_own_thresholds() -> None:
    # The same metric configured again at another threshold (a kept criterion or anything read
    # of the metrics once must not carry a threshold from one list to the next).
    from agenteval.criteria import default_registry

    run = _run([inv(response="a b c d")], [inv(response="a b c e")])  # ROUGE-1 F 0.75
    for threshold, status in ((0.8, EvalStatus.FAILED), (0.7, EvalStatus.PASSED),
                              (0.8, EvalStatus.FAILED)):
        metrics = [default_registry().configure("response_match_score", threshold)]
        result = asyncio.run(score_case(run, metrics))
        assert result.overall_eval_metric_results[0].threshold == threshold
        assert result.overall_eval_metric_results[0].eval_status == status
        assert result.final_eval_status == status


def test_metric_results_without_details_are_shared_by_cases_that_score_alike() -> None:
    # A detail-less result (a trajectory's 1.0, a count of calls) is made once and shared: the
    # same values, the same document bytes, fewer models a case.
    from agenteval.runner import scoring
    from agenteval.schema import EvalCaseResult, EvalMetricResult

    metrics = resolve_metrics(default_registry_config())
    run = _run([inv(calls=[call("f", a=1)])], [inv(calls=[call("f", a=1)])])
    first, second = (asyncio.run(score_case(run, metrics)) for _ in range(2))
    shared = [a is b for a, b in zip(first.overall_eval_metric_results,
                                      second.overall_eval_metric_results, strict=True)]
    assert shared[0] and first.model_dump_json(indent=2) == second.model_dump_json(indent=2)
    assert first == EvalCaseResult.model_validate(first.model_dump())
    # Not shared: a result with details, a negative zero or an int score (written otherwise),
    # another metric's wire values.
    wire = metrics[0].wire_dict
    details = scoring._NO_DETAILS.model_copy()
    assert scoring._metric_result(wire, EvalStatus.PASSED, 1.0, details) is not \
        scoring._metric_result(wire, EvalStatus.PASSED, 1.0, details)
    for score in (-0.0, 1):
        made = scoring._metric_result(wire, EvalStatus.PASSED, score, None)  # type: ignore[arg-type]
        assert made is not scoring._metric_result(wire, EvalStatus.PASSED, score, None)  # type: ignore[arg-type]
        assert repr(made.score) == repr(score)
    other = {**wire, "threshold": 0.5}
    assert scoring._metric_result(other, EvalStatus.PASSED, 1.0, None).threshold == 0.5
    assert isinstance(scoring._metric_result(wire, EvalStatus.PASSED, None, None), EvalMetricResult)



def test_a_criterion_that_waits_is_built_once_a_case_and_awaited() -> None:
    # Criteria that do not wait are called without a coroutine; one that waits is built once
    # (not again to be awaited), and what it raises is its result's error, as for the others.
    from agenteval.criteria import Criterion, register_criterion

    registry = Registry()
    built: list[int] = []

    @register_criterion("waits", registry=registry)
    class Waits(Criterion):
        """Scores 1 after a wait."""

        is_async = True

        def __init__(self, *args: object) -> None:
            super().__init__(*args)  # type: ignore[arg-type]
            built.append(1)

        async def ascore(self, ctx: EvalContext) -> CriterionResult:
            await asyncio.sleep(0)
            if ctx.actual[0].user_content.text() == "boom":
                raise RuntimeError("judge unreachable")
            return CriterionResult(1.0, [])

    metrics = [registry.configure("waits", 0.5)]
    before = len(built)  # (configuring may build it once, to check it)
    result = asyncio.run(score_case(_run([inv("a")], [inv("e")]), metrics))
    assert len(built) == before + 1 and result.final_eval_status == EvalStatus.PASSED
    failed = asyncio.run(score_case(_run([inv("boom")], [inv("e")]), metrics))
    assert len(built) == before + 2 and failed.final_eval_status == EvalStatus.FAILED
    assert "judge unreachable" in failed.metric_errors[0].message


def test_an_informational_metrics_reasons_are_never_made() -> None:
    # Not stored, so not read: a reason that would raise is never called.
    from agenteval.criteria import InvocationScore
    from agenteval.criteria.efficiency import ToolCallCount

    def never() -> str:
        raise AssertionError("an informational reason was made")

    class Counting(ToolCallCount):
        reusable = True

        def score(self, ctx: EvalContext) -> CriterionResult:
            return CriterionResult(1.0, [InvocationScore(1.0, reason=never)], reason=never)

    metric = resolve_metrics(default_registry_config())[-1]
    assert metric.spec.informational
    from dataclasses import replace

    spec = replace(metric.spec, name="counting", factory=Counting)
    result = asyncio.run(score_case(_run([inv("a")], [inv("e")]), [replace(metric, spec=spec)]))
    assert [m.eval_status for m in result.overall_eval_metric_results] == [EvalStatus.INFORMATIONAL]
    assert result.reasons == [] and result.final_eval_status == EvalStatus.NOT_EVALUATED


def test_what_a_criterion_says_with_a_lone_surrogate_is_written_as_a_document_can_hold_it() -> None:
    # A plugin criterion's reason, error or rubric rationale holding a lone surrogate failed the
    # writing of the whole result document (UTF-8 cannot hold one): each is written with U+FFFD,
    # and the case's warnings say so.
    from agenteval.criteria import Criterion, InvocationScore, register_criterion
    from agenteval.schema import EvalMetricResultDetails, RubricScore

    registry = Registry()

    @register_criterion("odd", registry=registry)
    class Odd(Criterion):
        """Says odd things."""

        def score(self, ctx: EvalContext) -> CriterionResult:
            details = EvalMetricResultDetails(rubric_scores=[RubricScore(rubric_id="r\ud800",
                                                                         rationale="why \udc00")])
            return CriterionResult(0.0, [InvocationScore(0.0, details=details, error="err \ud801",
                                                         reason="inv \ud802")], reason="all \ud803")

    def raises(metric, actual, expected, scenario):  # type: ignore[no-untyped-def]
        raise ValueError("bad \ud804")

    register_function("raises", raises, registry=registry)
    metrics = [registry.configure("odd", 0.5), registry.configure("raises", 0.5)]
    result = asyncio.run(score_case(_run([inv("a")], [inv("e")]), metrics))
    written = result.model_dump_json()  # raised before
    assert "\\ud8" not in written and "\\udc" not in written
    assert {r.reason for r in result.reasons} == {"all \ufffd", "inv \ufffd"}
    messages = [e.message for e in result.metric_errors]
    assert "err \ufffd" in messages and any(m.startswith("ValueError: bad \ufffd") for m in messages)
    (rubric,) = result.eval_metric_result_per_invocation[0].eval_metric_results[0].details.rubric_scores
    assert (rubric.rubric_id, rubric.rationale) == ("r\ufffd", "why \ufffd")
    assert len(result.warnings) == 6 and all("unpaired surrogate" in w for w in result.warnings)

