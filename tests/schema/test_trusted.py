import pytest

from agenteval.schema import (
    DurationDetails,
    EvalMetricResult,
    EvalMetricResultDetails,
    EvalStatus,
    SessionFile,
)
from agenteval.schema.base import maker, trusted


def test_same_object_and_bytes_as_model_construct() -> None:
    values = {"metric_name": "m", "threshold": 0.5, "criterion": {"threshold": 0.5},
              "custom_function_path": None, "score": 0.25, "eval_status": EvalStatus.FAILED,
              "details": EvalMetricResultDetails()}
    built, constructed = trusted(EvalMetricResult, dict(values)), EvalMetricResult.model_construct(**values)
    assert built == constructed
    assert built.model_dump_json(indent=2) == constructed.model_dump_json(indent=2)
    assert built.model_fields_set == constructed.model_fields_set


def test_fields_are_put_in_declaration_order() -> None:
    built = trusted(DurationDetails, {"framework_seconds": 0.5, "tool_seconds": None,
                                      "model_seconds": 1.0, "total_seconds": 2.0})
    assert list(built.model_dump()) == list(DurationDetails.model_fields)
    assert built == DurationDetails(total_seconds=2.0, model_seconds=1.0, framework_seconds=0.5)


@pytest.mark.parametrize("values", [
    {"total_seconds": 1.0},
    {"total_seconds": 1.0, "model_seconds": None, "tool_seconds": None, "framework_seconds": None,
     "other": 1.0},
])
def test_every_field_and_no_other_is_required(values: dict[str, object]) -> None:
    with pytest.raises(TypeError, match="DurationDetails"):
        trusted(DurationDetails, values)


def test_models_keeping_extra_keys_are_refused() -> None:
    with pytest.raises(TypeError, match="extras"):
        trusted(SessionFile, dict.fromkeys(SessionFile.model_fields))


def test_maker_makes_what_trusted_makes_without_the_key_check() -> None:
    values = {"metric_name": "m", "threshold": None, "criterion": None,
              "custom_function_path": None, "score": 1.5, "eval_status": EvalStatus.INFORMATIONAL,
              "details": EvalMetricResultDetails(duration_details=DurationDetails(total_seconds=1.0))}
    made, built = maker(EvalMetricResult)(dict(values)), trusted(EvalMetricResult, dict(values))
    assert made == built
    assert made.model_dump_json(indent=2) == built.model_dump_json(indent=2)
    assert made.model_fields_set == built.model_fields_set
    assert made.model_fields_set is not maker(EvalMetricResult)(dict(values)).model_fields_set


def test_maker_refuses_models_keeping_extra_keys() -> None:
    with pytest.raises(TypeError, match="extras"):
        maker(SessionFile)
