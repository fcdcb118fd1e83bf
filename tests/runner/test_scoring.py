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


def test_results_without_details_are_shared_by_status_and_score_and_written_as_made() -> None:
    from agenteval.criteria import Criterion, InvocationScore
    from agenteval.criteria.spec import spec_for_class
    from agenteval.runner.scoring import _metric_result

    scores = [1.0, 1.0, -0.0, 0.0, 0.0, 2, 2, float("nan"), None]

    class Per(Criterion):
        """Scores every invocation as `scores` says."""

        def score(self, ctx: EvalContext) -> CriterionResult:
            return CriterionResult(1.0, [InvocationScore(s) for s in scores])

    registry = Registry()
    registry.register(spec_for_class("per", Per))
    metric = registry.configure("per", 0.5)

    def per_invocation():  # type: ignore[no-untyped-def]
        run = _run([inv() for _ in scores], [inv() for _ in scores])
        result = asyncio.run(score_case(run, [metric]))
        return [r.eval_metric_results[0] for r in result.eval_metric_result_per_invocation]

    got = per_invocation()
    assert got[0] is got[1] and got[3] is got[4]  # one object per (status, score) ...
    assert per_invocation()[0] is got[0]  # ... and across cases
    assert got[2] is not got[3] and got[5] is not got[6]  # -0.0 is not 0.0; an int is not shared
    for made, score in zip(got, scores, strict=True):  # each written as one made for it alone
        alone = _metric_result(metric.wire_dict, made.eval_status, score, None)
        assert made.model_dump_json() == alone.model_dump_json()
    assert '"score":-0.0' in got[2].model_dump_json() and '"score":0.0' in got[3].model_dump_json()
