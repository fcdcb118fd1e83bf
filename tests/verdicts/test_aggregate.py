import pytest

from agenteval.schema import EvalCaseResult, EvalMetricResult, EvalSetResult, EvalStatus
from agenteval.verdicts.aggregate import pass_at_k, pass_pow_k, summarise


def _case(eval_id: str, run: int, score: float | None, threshold: float = 0.5,
          error: str | None = None) -> EvalCaseResult:
    status = (EvalStatus.NOT_EVALUATED if score is None
              else EvalStatus.PASSED if score >= threshold else EvalStatus.FAILED)
    return EvalCaseResult(eval_id=eval_id, run_index=run, final_eval_status=status, session_id="s",
                          error_message=error, eval_metric_result_per_invocation=[],
                          overall_eval_metric_results=[EvalMetricResult(
                              metric_name="m", threshold=threshold, score=score, eval_status=status)])


def _summary(scores: list[float | None], gating: str = "mean", ignore: bool = False):  # type: ignore[no-untyped-def]
    result = EvalSetResult(eval_set_result_id="r", eval_set_id="s",
                           eval_case_results=[_case("c", i, s) for i, s in enumerate(scores)])
    return summarise(result, gating, ignore).summary[0]


def test_statistics_over_runs() -> None:
    s = _summary([1.0, 0.0, 1.0, 1.0])
    m = s.metrics[0]
    assert (m.runs, m.passed_runs, m.mean) == (4, 3, 0.75)
    assert m.std == pytest.approx(0.5)
    assert m.ci_low == pytest.approx(0.75 - 3.182 * 0.5 / 2)
    assert m.pass_at_k == 1.0 and m.pass_pow_k == 0.0
    assert s.final_eval_status == EvalStatus.PASSED  # mean 0.75 ≥ 0.5


@pytest.mark.parametrize(("gating", "scores", "status"), [
    ("mean", [1.0, 0.0, 0.0], EvalStatus.FAILED),
    ("all_runs", [1.0, 1.0, 0.0], EvalStatus.FAILED),
    ("all_runs", [1.0, 1.0, 0.6], EvalStatus.PASSED),
    ("any_run", [0.0, 0.0, 0.9], EvalStatus.PASSED),
    ("mean", [1.0, None, 1.0], EvalStatus.FAILED),  # a missing score is not averaged away
])
def test_gating_rules(gating: str, scores: list[float | None], status: EvalStatus) -> None:
    assert _summary(scores, gating).final_eval_status == status


def test_not_evaluated_can_be_ignored() -> None:
    assert _summary([1.0, None, 1.0], ignore=True).final_eval_status == EvalStatus.PASSED


def test_pass_at_k_estimators() -> None:
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 4) == 1.0
    assert pass_pow_k(5, 4, 2) == pytest.approx(6 / 10)
    assert pass_pow_k(3, 3, 3) == 1.0


def test_inference_error_fails_the_case_under_mean() -> None:
    result = EvalSetResult(eval_set_result_id="r", eval_set_id="s", eval_case_results=[
        _case("c", 0, 1.0), _case("c", 1, None, error="boom")])
    assert summarise(result).summary[0].final_eval_status == EvalStatus.FAILED
