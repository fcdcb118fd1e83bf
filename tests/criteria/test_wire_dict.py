"""A configured metric's wire form, as copied into every metric result of a run."""

from enum import Enum
from typing import Any

from agenteval.criteria import default_registry
from agenteval.criteria.spec import ConfiguredMetric
from agenteval.schema import BaseCriterion, EvalMetricResult, EvalStatus


def _enums(value: Any) -> list[Any]:
    if isinstance(value, Enum):
        return [value]
    if isinstance(value, dict):
        return [e for v in value.values() for e in _enums(v)]
    if isinstance(value, list):
        return [e for v in value for e in _enums(v)]
    return []


def test_the_wire_dict_holds_the_criterion_enums_as_their_values_and_writes_the_same_json() -> None:
    metric = default_registry().configure(
        "tool_trajectory_avg_score", {"threshold": 0.5, "match_type": "IN_ORDER",
                                      "ignore_tools": ["a"]})
    wire = metric.wire_dict
    dumped = metric.wire().model_dump()
    assert _enums(dumped)  # the dump holds the MatchType member ...
    assert not _enums(wire)  # ... the wire dict its value (pydantic-core writes it in C)
    assert wire["criterion"]["match_type"] == "IN_ORDER" and wire["criterion"]["ignore_tools"] == ["a"]
    assert wire.keys() == dumped.keys()

    def result(values: dict[str, Any]) -> bytes:
        return EvalMetricResult(**values, score=0.25, eval_status=EvalStatus.FAILED).model_dump_json(indent=2)

    assert result(wire) == result(dumped)


def test_an_informational_metric_keeps_no_criterion() -> None:
    spec = next(s for s in default_registry().informational() if s.name == "tool_call_count_v1")
    metric = ConfiguredMetric(spec, BaseCriterion(threshold=0.0))
    assert metric.wire_dict == {"metric_name": "tool_call_count_v1", "threshold": None,
                                "criterion": None, "custom_function_path": None}
