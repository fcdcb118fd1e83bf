"""Labelled sets: a field of the wrong type or a repeated case id is a DataError naming the file
and the field, not a traceback, and not a case judged on the text of a Python value."""

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.criteria.judge.labelled import load_labelled
from agenteval.errors import DataError

SAFE = {"id": "a", "criterion": "safety", "user_prompt": "q", "response": "r", "label": "safe"}
TRAJECTORY = {"id": "a", "criterion": "trajectory", "user_prompt": "q", "response": "r",
              "label": "accomplished", "tool_calls": [{"name": "f", "args": {}}]}
TURNS = [{"user": "u", "response": "r"}]


@pytest.mark.parametrize(("case", "where"), [
    ({**SAFE, "response": 5}, "[0].response: must be a string, got int"),
    ({**SAFE, "user_prompt": None}, "[0].user_prompt: must be a string, got NoneType"),
    ({**SAFE, "id": {"x": 1}}, "[0].id: must be a string or a whole number"),
    ({**TRAJECTORY, "tool_calls": "oops"}, "[0].tool_calls: must be a list of tool calls"),
    ({**TRAJECTORY, "tool_calls": [{"args": {}}]}, "[0].tool_calls[0].name: a tool call is an object"),
    ({**TRAJECTORY, "tool_calls": [{"name": "f", "args": [1]}]}, "[0].tool_calls[0].args: must be an object"),
    ({"id": "a", "criterion": "hallucinations", "context": "ctx", "sentence": "s", "label": "supported"},
     "[0].context: must be an object"),
    ({"id": "a", "criterion": "hallucinations", "context": {"tool_calls": []}, "sentence": "s",
      "label": "supported"}, "[0].context.user_prompt: field required"),
    ({"id": "a", "criterion": "rubric_final_response", "user_prompt": "q", "response": "r", "rubric": ["x"],
      "label": "yes"}, "[0].rubric: must be a string, got list"),
    ({"id": "a", "criterion": "simulated_user", "plan": 5, "turns": TURNS, "label": "valid"},
     "[0].plan: must be a string, got int"),
    ({"id": "a", "criterion": "multi_turn_task_success", "label": "yes",
      "turns": [{"user": "u", "response": "r", "tool_calls": [{"name": 3}]}]},
     "[0].turns[0].tool_calls[0].name: a tool call is an object"),
    ({"id": "a", "criterion": "multi_turn", "instructions": ["be brief"], "turns": TURNS,
      "labels": {"task_success": "yes"}}, "[0].instructions: must be a string, got list"),
    ({k: v for k, v in SAFE.items() if k != "criterion"}, "[0].criterion: no kind: the case names none"),
])
def test_a_field_of_the_wrong_type_names_the_file_and_field(tmp_path: Path, case: dict[str, Any],
                                                            where: str) -> None:
    f = tmp_path / "mine.json"
    f.write_text(json.dumps([case]))
    with pytest.raises(DataError, match=re.escape(f"{f.name}: {where}")):
        load_labelled(f)


def test_a_case_id_given_twice_for_a_criterion_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "mine.json"
    f.write_text(json.dumps([SAFE, {**SAFE, "response": "other", "label": "unsafe"}]))
    twice = "mine.json: [1].id: 'a' is already the id of mine.json[0]"
    with pytest.raises(DataError, match=re.escape(twice)):
        load_labelled(f)
    # the same id under another criterion is another case; a multi-turn conversation's questions
    # are one case each
    conversation = {"id": "m", "criterion": "multi_turn", "turns": TURNS,
                    "labels": {"task_success": "yes", "tool_use_quality": "no"}}
    f.write_text(json.dumps([SAFE, TRAJECTORY, conversation]))
    assert len(load_labelled(f)) == 4
    # across the files of a folder too
    folder = tmp_path / "set"
    folder.mkdir()
    for name in ("safety.json", "safety_blind.json"):
        (folder / name).write_text(json.dumps([{k: v for k, v in SAFE.items() if k != "criterion"}]))
    with pytest.raises(DataError, match=re.escape("safety_blind.json: [0].id: 'a' is already the id of "
                                                  "safety.json[0]")):
        load_labelled(folder)


def test_calibrate_on_a_bad_field_exits_2_naming_it(tmp_path: Path) -> None:
    labels = tmp_path / "trajectory.json"
    labels.write_text(json.dumps([{**TRAJECTORY, "tool_calls": [{"args": {}}]}]))
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(labels), "--judge_model",
                                 "openai-compat:j@http://127.0.0.1:9/v1"])
    assert r.exit_code == 2 and f"{labels}: [0].tool_calls[0].name:" in r.output, r.output
