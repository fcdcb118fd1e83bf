"""`write_as_read`: an eval set read from a user's file is written back with the keys it was read
with (explicit nulls too, whose defaults are not always null), fields left out staying out, and
what was set since written; a set built in code loads back as the same set."""

from __future__ import annotations

import json
from pathlib import Path

from agenteval.datasets import load_eval_set, write_as_read, write_model
from agenteval.schema import EvalCase, EvalSet, Invocation

TURN = {"invocation_id": "i", "user_content": {"role": "user", "parts": [{"text": "hi"}]},
        "final_response": None, "duration": None}
FILE = {"eval_set_id": "s", "name": None, "eval_cases": [
    {"eval_id": "a", "conversation": [TURN], "final_session_state": None, "rubrics": None,
     "session_input": {"app_name": "x", "user_id": "u", "session_id": None}, "extra_key": None},
    {"eval_id": "b", "conversation": [TURN]}]}


def test_a_read_set_is_written_with_the_keys_and_nulls_it_had(tmp_path: Path) -> None:
    path = tmp_path / "s.evalset.json"
    path.write_text(json.dumps(FILE))
    eval_set = load_eval_set(path)
    write_as_read(path, eval_set)
    assert json.loads(path.read_text()) == FILE
    assert load_eval_set(path).eval_cases[0].final_session_state is None
    # write_model would have dropped the null, and the reader then takes the default
    write_model(path, eval_set)
    assert load_eval_set(path).eval_cases[0].final_session_state == {}


def test_what_is_set_after_reading_is_written(tmp_path: Path) -> None:
    path = tmp_path / "s.evalset.json"
    path.write_text(json.dumps(FILE))
    eval_set = load_eval_set(path)
    eval_set.eval_cases[1].final_session_state = None
    eval_set.eval_cases[0].rubrics = []
    eval_set.eval_cases.append(EvalCase(eval_id="c", conversation=[Invocation.model_validate(TURN)]))
    write_as_read(path, eval_set)
    cases = json.loads(path.read_text())["eval_cases"]
    assert cases[0] == {**FILE["eval_cases"][0], "rubrics": []}
    assert cases[1] == {**FILE["eval_cases"][1], "final_session_state": None}
    assert cases[2] == {"eval_id": "c", "conversation": [TURN]}
    assert load_eval_set(path) == eval_set


def test_streamed_cases_give_the_bytes_of_one_dump(tmp_path: Path) -> None:
    # A set of cases is written a case at a time; the document is the one a single dump makes.
    path = tmp_path / "s.evalset.json"
    path.write_text(json.dumps(FILE))
    eval_set = load_eval_set(path)
    write_as_read(path, eval_set)
    whole = eval_set.__pydantic_serializer__.to_json(eval_set, indent=2, exclude_unset=True) + b"\n"
    assert path.read_bytes() == whole
    empty = EvalSet(eval_set_id="e", eval_cases=[])
    write_as_read(path, empty)
    assert json.loads(path.read_text()) == {"eval_set_id": "e", "eval_cases": []}
