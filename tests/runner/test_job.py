from agenteval.criteria import default_registry
from agenteval.runner.job import weak_judges, with_judge_model

_RUBRIC = {"threshold": 0.5, "rubrics": [
    {"rubric_id": "r", "rubric_content": {"text_property": "The reply is polite."}}]}


def _metrics(judge: str | None = None):  # type: ignore[no-untyped-def]
    registry = default_registry()
    metrics = [registry.configure("rubric_based_final_response_quality_v1", _RUBRIC),
               registry.configure("rubric_based_tool_use_quality_v1", _RUBRIC),
               registry.configure("final_response_match_v2", 0.5),
               registry.configure("tool_trajectory_avg_score", 1.0)]
    return with_judge_model(metrics, judge)


def test_rubric_criteria_on_the_embedded_judge_are_flagged() -> None:
    assert weak_judges(_metrics()) == ["rubric_based_final_response_quality_v1",
                                              "rubric_based_tool_use_quality_v1"]
    assert weak_judges(_metrics("local:qwen2.5-coder-1.5b")) == weak_judges(_metrics())


def test_a_larger_judge_is_not_flagged() -> None:
    assert weak_judges(_metrics("ollama:qwen2.5:14b")) == []
