"""Status fields: written as ADK's integers, read back as `EvalStatus`, kept as enums in Python dumps
(a regression test of the wire format; the web API's schema keeps the enum: tests/web/test_contract.py)."""

from __future__ import annotations

import json

from agenteval.schema import CaseSummary, EvalCaseResult, EvalMetricResult, EvalStatus
from agenteval.schema.result import MetricSummary
from agenteval.store.placing import placed_model_json


def _result() -> EvalCaseResult:
    metrics = [EvalMetricResult(metric_name=f"m{s.value}", eval_status=s) for s in EvalStatus]
    return EvalCaseResult(final_eval_status=EvalStatus.NOT_EVALUATED, overall_eval_metric_results=metrics,
                          eval_metric_result_per_invocation=[], session_id="s")


def test_statuses_are_written_as_integers_and_read_back_as_statuses() -> None:
    result = _result()
    data = json.loads(result.model_dump_json())
    assert data["final_eval_status"] == 3
    assert [m["eval_status"] for m in data["overall_eval_metric_results"]] == [1, 2, 3, 4]
    assert result.model_dump(mode="json")["final_eval_status"] == 3
    assert json.loads(placed_model_json(result))["final_eval_status"] == 3
    back = EvalCaseResult.model_validate_json(result.model_dump_json())
    assert back == result and back.final_eval_status is EvalStatus.NOT_EVALUATED
    dumped = result.model_dump()  # Python dumps keep the enum
    assert dumped["final_eval_status"] is EvalStatus.NOT_EVALUATED
    assert dumped["overall_eval_metric_results"][0]["eval_status"] is EvalStatus.PASSED
    summary = CaseSummary(eval_id="e", runs=1, final_eval_status=EvalStatus.FAILED, metrics=[
        MetricSummary(metric_name="m", runs=1, scored_runs=1, passed_runs=0,
                      eval_status=EvalStatus.INFORMATIONAL)])
    assert json.loads(summary.model_dump_json()) | {"metrics": None} == {
        "eval_id": "e", "runs": 1, "final_eval_status": 2, "metrics": None}
    assert json.loads(summary.model_dump_json())["metrics"][0]["eval_status"] == 4
