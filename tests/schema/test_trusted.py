import pickle
from typing import Any

import pytest

from agenteval.schema import (
    DurationDetails,
    EvalMetricResult,
    EvalMetricResultDetails,
    EvalStatus,
    SessionInput,
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
        trusted(SessionInput, dict.fromkeys(SessionInput.model_fields))


def test_maker_makes_what_trusted_makes_without_the_key_check() -> None:
    values = {"metric_name": "m", "threshold": None, "criterion": None,
              "custom_function_path": None, "score": 1.5, "eval_status": EvalStatus.INFORMATIONAL,
              "details": EvalMetricResultDetails(duration_details=DurationDetails(total_seconds=1.0))}
    made, built = maker(EvalMetricResult)(dict(values)), trusted(EvalMetricResult, dict(values))
    assert made == built
    assert made.model_dump_json(indent=2) == built.model_dump_json(indent=2)
    assert made.model_fields_set == built.model_fields_set == set(EvalMetricResult.model_fields)


@pytest.mark.parametrize("make", [maker(DurationDetails),
                                  lambda values: trusted(DurationDetails, values)])
def test_what_pydantic_does_to_one_made_object_leaves_the_others_as_they_were(make: Any) -> None:
    # The fields-set every made object holds is one set (not copied per object): nothing pydantic
    # does through one object may change what another says was set.
    every = set(DurationDetails.model_fields)
    values = {"total_seconds": 1.0, "model_seconds": None, "tool_seconds": None,
              "framework_seconds": None}
    one, other = make(dict(values)), make(dict(values))
    one.model_seconds = 0.5
    copied = other.model_copy(update={"tool_seconds": 0.25})
    deep = other.model_copy(deep=True)
    deep.model_fields_set.discard("tool_seconds")  # a copy's set is its own
    thawed = pickle.loads(pickle.dumps(other))
    thawed.model_fields_set.clear()
    for made in (one, other, copied):
        assert made.model_fields_set == every
        assert made.model_dump(exclude_unset=True) == made.model_dump()
    assert other.model_dump() == values and make(dict(values)).model_fields_set == every
    assert deep.model_fields_set == every - {"tool_seconds"}
    assert copied.tool_seconds == 0.25 and one.model_seconds == 0.5


def test_maker_refuses_models_keeping_extra_keys() -> None:
    with pytest.raises(TypeError, match="extras"):
        maker(SessionInput)
