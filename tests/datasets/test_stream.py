"""Reading a document's case list one item at a time, with the loader's errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval.datasets.stream import CaseStream, read_head
from agenteval.errors import DataError
from agenteval.schema import EvalCase
from tests.helpers import eval_set, inv


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_cases_come_one_at_a_time_validated(tmp_path: Path) -> None:
    es = eval_set("s", {"a": [inv("hi")], "b": [inv("yo"), inv("bye")]})
    path = tmp_path / "s.evalset.json"
    path.write_bytes(b"\xef\xbb\xbf" + es.model_dump_json().encode())  # a byte-order mark too
    got = list(CaseStream(path, "eval_cases", EvalCase, 100))
    assert [(i, c.eval_id) for i, c in got] == [(0, "a"), (1, "b")]
    assert [c for _, c in got] == es.eval_cases


def test_an_invalid_case_is_named_by_its_path(tmp_path: Path) -> None:
    data = json.loads(eval_set("s", {"a": [inv()], "b": [inv()]}).model_dump_json())
    data["eval_cases"][1]["conversation"][0]["user_content"] = 5
    path = _write(tmp_path / "s.json", data)
    stream = iter(CaseStream(path, "eval_cases", EvalCase, 100))
    assert next(stream)[1].eval_id == "a"  # what comes before the mistake is read
    with pytest.raises(DataError) as e:
        next(stream)
    assert str(e.value).startswith(f"{path}: eval_cases[1].conversation[0].user_content")


def test_malformed_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    case = eval_set("s", {"a": [inv()]}).eval_cases[0].model_dump_json()
    path.write_text('{"eval_set_id": "s",\n "eval_cases": [' + case + ",, ]}")
    with pytest.raises(DataError, match=r"bad.json: line 2 column \d+: malformed JSON"):
        list(CaseStream(path, "eval_cases", EvalCase, 100))


def test_head_keys_before_the_list_and_wanted_ones_after_it(tmp_path: Path) -> None:
    before = _write(tmp_path / "a.json", {"eval_set_id": "s", "name": "n", "meta": {"x": [1]},
                                          "eval_cases": [{}], "creation_timestamp": 3.0})
    assert read_head(before, "eval_cases") == {"eval_set_id": "s", "name": "n", "meta": {"x": [1]}}
    after = _write(tmp_path / "b.json", {"eval_cases": [{}], "eval_set_id": "late"})
    assert read_head(after, "eval_cases", ("eval_set_id",)) == {"eval_set_id": "late"}
    not_object = _write(tmp_path / "c.json", [1, 2])
    with pytest.raises(DataError, match="expected a JSON object"):
        read_head(not_object, "eval_cases")


@pytest.mark.parametrize(("value", "message"), [
    ([], "eval_cases: the list is empty: there is no eval case"),
    ("x", "eval_cases: must be a list of eval cases, not a string"),
    ({}, "eval_cases: must be a list of eval cases, not an object"),
    (None, "eval_cases: must be a list of eval cases, not null"),
    (3, "eval_cases: must be a list of eval cases, not a number"),
])
def test_the_list_must_be_a_non_empty_array(tmp_path: Path, value: object, message: str) -> None:
    # A stream of nothing would score as a run where everything passed.
    path = _write(tmp_path / "a.json", {"eval_set_id": "s", "eval_cases": value})
    with pytest.raises(DataError, match=message):
        read_head(path, "eval_cases", what="eval case")
    missing = _write(tmp_path / "b.json", {"eval_set_id": "s"})
    with pytest.raises(DataError, match="eval_cases: field required"):
        read_head(missing, "eval_cases", what="eval case")
