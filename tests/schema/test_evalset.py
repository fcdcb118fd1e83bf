"""Eval sets and cases: an empty id is refused (ADK accepts it; ids key the history and the web)."""

from typing import Any

import pytest
from pydantic import ValidationError

from agenteval.errors import from_validation_error
from agenteval.schema import EvalSet

_TURN = {"user_content": {"parts": [{"text": "hi"}]}}


@pytest.mark.parametrize(("data", "where"), [
    ({"eval_set_id": "", "eval_cases": []}, "eval_set_id"),
    ({"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": [_TURN]},
                                         {"eval_id": "", "conversation": [_TURN]}]},
     "eval_cases[1].eval_id"),
])
def test_an_empty_id_is_refused_naming_the_field(data: dict[str, Any], where: str) -> None:
    for validate in (EvalSet.model_validate, lambda d: EvalSet.model_validate_json(str(d).replace("'", '"'))):
        with pytest.raises(ValidationError) as e:
            validate(data)
        assert str(from_validation_error("s.evalset.json", e.value)) == (
            f"s.evalset.json: {where}: must not be empty")


def test_a_one_character_id_is_kept() -> None:
    s = EvalSet.model_validate({"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": []}]})
    assert (s.eval_set_id, s.eval_cases[0].eval_id) == ("s", "a")


_R1 = {"rubric_id": "r1", "rubric_content": {"text_property": "is polite"}}


@pytest.mark.parametrize(("case", "where"), [
    ({"eval_id": "a", "conversation": [_TURN], "rubrics": [_R1, {**_R1, "type": "TOOL_USE_QUALITY"}]},
     "eval_cases[0].rubrics"),
    ({"eval_id": "a", "conversation": [_TURN, {**_TURN, "rubrics": [_R1, _R1]}]},
     "eval_cases[0].conversation[1].rubrics"),
])
def test_rubrics_sharing_an_id_are_refused_naming_both(case: dict[str, Any], where: str) -> None:
    # each verdict is keyed by its rubric's id: the second would be lost (scoring refused it,
    # every judged run of the case NOT_EVALUATED)
    with pytest.raises(ValidationError) as e:
        EvalSet.model_validate({"eval_set_id": "s", "eval_cases": [case]})
    assert str(from_validation_error("s.evalset.json", e.value)) == (
        f"s.evalset.json: {where}: duplicate rubric_id 'r1' (rubrics[0] and rubrics[1])")
