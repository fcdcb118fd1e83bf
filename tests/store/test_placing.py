import math

from agenteval.schema import CaseSummary, EvalCaseResult, EvalStatus, MetricSummary
from agenteval.store.placing import placed_model_json


def _reindented(model: EvalCaseResult | CaseSummary) -> bytes:
    raw: bytes = model.__pydantic_serializer__.to_json(model, indent=2, exclude_none=False)
    return raw.replace(b"\n", b"\n    ")


def test_a_model_serialised_at_its_place_is_its_json_indented_again() -> None:
    result = EvalCaseResult.model_validate({
        "eval_set_id": "s", "eval_id": "c\n1 \u00e9\u2028", "final_eval_status": 2,
        "overall_eval_metric_results": [{
            "metric_name": "m", "threshold": 0.5, "score": math.inf, "eval_status": 2,
            "criterion": {"big": 2**70, "e": {}, "l": [], "f": [1e16, 1e-7, -0.0, math.nan],
                          "nested": [[{"a": None}]]}}],
        "eval_metric_result_per_invocation": [], "session_id": "", "warnings": [],
        "session_details": {}})
    summary = CaseSummary(eval_id="c", runs=1, final_eval_status=EvalStatus.FAILED, metrics=[
        MetricSummary(metric_name="m", runs=1, scored_runs=1, passed_runs=0, mean=0.25,
                      eval_status=EvalStatus.FAILED)])
    empty = CaseSummary(eval_id="", runs=0, final_eval_status=EvalStatus.NOT_EVALUATED)
    for model in (result, summary, empty):
        placed = placed_model_json(model)
        assert placed == _reindented(model)
        assert placed.startswith(b"{\n      \"") and placed.endswith(b"\n    }")


def test_a_subclass_is_serialised_as_its_own_class() -> None:
    class Tagged(CaseSummary):
        tag: str = "t"

    tagged = Tagged(eval_id="c", runs=1, final_eval_status=EvalStatus.PASSED)
    assert placed_model_json(tagged) == _reindented(tagged)
    assert b'"tag": "t"' in placed_model_json(tagged)
