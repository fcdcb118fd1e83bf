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


@pytest.mark.parametrize("gating", ["mean", "all_runs", "any_run"])
@pytest.mark.parametrize("ignore", [False, True])
def test_a_single_run_is_summarised_as_summarise_metric_summarises_it(gating: str, ignore: bool) -> None:
    # One run takes a shorter path (`_one_run`): every field must be what `summarise_metric`
    # computes, in the serialised document too (an int score's mean is a float there).
    from agenteval.schema import MetricReason
    from agenteval.verdicts.aggregate import summarise_case, summarise_metric

    statuses = (EvalStatus.PASSED, EvalStatus.FAILED, EvalStatus.NOT_EVALUATED, EvalStatus.INFORMATIONAL)
    for score in (None, 0, 0.0, 0.25, 0.5, 1, 1.0):
        for status in statuses:
            for threshold in (None, 0.5):
                for why in (None, "", "too low"):
                    metrics = [EvalMetricResult(metric_name=f"m{k}", threshold=threshold, score=score,
                                                eval_status=status) for k in range(2)]
                    run = EvalCaseResult(
                        eval_id="c", final_eval_status=status, session_id="s",
                        eval_metric_result_per_invocation=[], overall_eval_metric_results=metrics,
                        reasons=[] if why is None else [
                            MetricReason(metric_name="m0", invocation_index=None, reason=why),
                            MetricReason(metric_name="m1", invocation_index=0, reason="turn")])
                    got = summarise_case("c", [run], gating, ignore)
                    want = [summarise_metric([m], gating, ignore, [why if m.metric_name == "m0" else None])
                            for m in metrics]
                    assert [m.model_dump_json() for m in got.metrics] == [m.model_dump_json() for m in want]
                    assert got.metrics == want
                    # (made without validation: every field, in declaration order, as `trusted` makes them)
                    assert list(got.__dict__) == list(type(got).model_fields)
                    assert all(list(m.__dict__) == list(type(m).model_fields) for m in got.metrics)
                    assert got.model_fields_set == set(type(got).model_fields)


def test_a_criterion_twice_in_one_run_is_summarised_over_both() -> None:
    from agenteval.verdicts.aggregate import summarise_case

    run = _case("c", 0, 1.0)
    run.overall_eval_metric_results = run.overall_eval_metric_results * 2
    assert summarise_case("c", [run], "mean", False).metrics[0].runs == 2


@pytest.mark.parametrize("runs", [2, 5, 31, 32, 45, 100, 1000])
def test_the_confidence_interval_is_students_t_at_any_number_of_runs(runs: int) -> None:
    """Against SciPy: past 31 runs the interval used 1.96, 3% too narrow at 40 runs."""
    from scipy import stats

    scores = [float(i % 3 == 0) for i in range(runs)]
    m = _summary(scores).metrics[0]
    low, high = stats.t.interval(0.95, runs - 1, loc=stats.tmean(scores), scale=stats.sem(scores))
    assert (m.ci_low, m.ci_high) == pytest.approx((low, high), abs=5e-4)  # the table: 3 decimals
