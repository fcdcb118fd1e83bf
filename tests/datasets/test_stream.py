"""Reading a document's case list one item at a time, with the loader's errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval.datasets.split import item_spans
from agenteval.datasets.stream import CaseStream, read_head, read_item
from agenteval.errors import DataError
from agenteval.schema import EvalCase
from tests.helpers import call, eval_set, inv


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


def _indented(path: Path, indent: int = 2) -> Path:
    es = eval_set("s", {f"c{i}": [inv(f"q{i}", "a: b", [call("t", x="MARK" if i == 2 else i)])]
                        for i in range(5)})
    path.write_text(json.dumps(json.loads(es.model_dump_json()), indent=indent, ensure_ascii=False),
                    encoding="utf-8")
    return path


def _read_as_the_stream_does(path: Path, index: int) -> EvalCase | None:
    """Item `index` as `CaseStream` reads it; None where it refuses the file there."""
    try:
        for i, case in CaseStream(path, "eval_cases", EvalCase, 100):
            if i == index:
                return case
    except DataError:
        return None
    raise AssertionError("no such item")


# Byte-level edits of the value "MARK" in an indented set's third case: read from the case's
# bytes alone, it must be what the stream makes of it (or refused where the stream refuses).
@pytest.mark.parametrize("edit", [
    (b'"MARK"', b"NaN"), (b'"MARK"', b"-Infinity"), (b'"MARK"', b'"x: NaN, [Infinity"'),
    (b'"MARK"', b'"tab\there"'), (b'"MARK"', b'"\xff\xfe"'), (b'"MARK"', b'"\\ud83d\\ude00 \\u0000"'),
    (b'"MARK"', b"123456789012345678901234567890"), (b'"MARK"', b"-9223372036854775808"),
    (b'"MARK"', b"9223372036854775807"), (b'"MARK"', b"1e400"), (b'"MARK"', b"-1.5E+400"),
    (b'"MARK"', b"2.5e-320"), (b'"MARK"', b'"52e599 1234567890123456789012"'), (b'"MARK"', b"-0"),
    (b'"MARK"', b"1.5e-7"), (b'"MARK"', b"01"), (b'"MARK"', b"1."), (b'"MARK"', b".5"), (b'"MARK"', b"+1"),
    (b'"MARK"', b"'x'"), (b'"MARK"', b"1 // c"), (b'"MARK"', b"[1,]"), (b'"MARK"', b'{"a": 1, "a": 2}'),
    (b'"MARK"', b"true, \"x\": 2"), (b'"MARK"', b'"\\x41"'), (b'"MARK"', b"tru"),
    (b'"x": "MARK"', b'"x": 1, "x": 2'), (b'"eval_id": "c2"', b'"eval_id": 5'),
    (b'"eval_id": "c2"', b'"eval_id": "c2", "eval_id": "c9"'), (b'"eval_id": "c2"', b'"evalId": "c2"'),
    (b'"eval_id": "c2"', b'"eval_id": "c2", "bogus": 1'),
])
def test_an_item_read_from_its_bytes_is_read_as_the_stream_reads_it(tmp_path: Path,
                                                                    edit: tuple[bytes, bytes]) -> None:
    path = _indented(tmp_path / "s.json")
    path.write_bytes(path.read_bytes().replace(*edit))
    spans = item_spans(path, "eval_cases")
    assert spans is not None
    a, b = spans[2]
    assert read_item(EvalCase, path.read_bytes()[a:b]) == _read_as_the_stream_does(path, 2)
