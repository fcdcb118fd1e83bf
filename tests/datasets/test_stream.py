"""Reading a document's case list one item at a time, with the loader's errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from agenteval.datasets import split, stream
from agenteval.datasets.scan import scan_file
from agenteval.datasets.split import item_spans
from agenteval.datasets.stream import (
    BYTE_SHAPES,
    CaseStream,
    has_exponents,
    raw_items,
    read_head,
    read_item,
)
from agenteval.errors import DataError, from_validation_error
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


def test_json_only_the_stream_parser_refuses_is_one_line(tmp_path: Path) -> None:
    # (Python's parser takes a 400-digit integer; the streaming one's error had an excerpt and a caret.)
    path = tmp_path / "big.json"
    case = eval_set("s", {"a": [inv()]}).eval_cases[0].model_dump(exclude_none=True)
    big = {**case, "creation_timestamp": 10 ** 400}
    path.write_text(json.dumps({"eval_set_id": "s", "eval_cases": [big]}))
    with pytest.raises(DataError) as e:
        list(CaseStream(path, "eval_cases", EvalCase, 100))
    # It is no malformed JSON: the integer is named where it is.
    assert str(e.value) == f"{path}: eval_cases[0].creation_timestamp: an integer beyond 64 bits, which " \
        "the streaming reader cannot take; write it as a string or a float"


def test_head_keys_before_the_list_and_wanted_ones_after_it(tmp_path: Path) -> None:
    before = _write(tmp_path / "a.json", {"eval_set_id": "s", "name": "n", "meta": {"x": [1]},
                                          "eval_cases": [{}], "creation_timestamp": 3.0})
    assert read_head(before, "eval_cases") == {"eval_set_id": "s", "name": "n", "meta": {"x": [1]}}
    after = _write(tmp_path / "b.json", {"eval_cases": [{}], "eval_set_id": "late"})
    assert read_head(after, "eval_cases", ("eval_set_id",)) == {"eval_set_id": "late"}
    not_object = _write(tmp_path / "c.json", [1, 2])
    with pytest.raises(DataError, match="expected a JSON object"):
        read_head(not_object, "eval_cases")


@pytest.mark.parametrize("indent", [2, None])
def test_wanted_keys_after_a_long_list_are_read_from_its_tail(tmp_path: Path, indent: int | None) -> None:
    """An indented list is stepped over by its lines and only the rest parsed; a list laid out
    otherwise is parsed through. Either way: the top-level keys after it, not the same-named
    keys inside its items, and a key that is not there is left out."""
    data = {"eval_cases": [{"gating": "inner", "run": {"x": i}} for i in range(300)],
            "summary": [{"gating": "no"}], "gating": "all_runs", "run": {"run_id": "r"}}
    path = tmp_path / "d.json"
    path.write_text(json.dumps(data, indent=indent))
    assert read_head(path, "eval_cases", ("gating", "run", "absent")) == {
        "gating": "all_runs", "run": {"run_id": "r"}}


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


def _reference(path: Path) -> tuple[list[tuple[int, EvalCase]], str | None]:
    """The items as ijson parses them, validated from the values (how `CaseStream` read every
    file before it validated an indented file's items from their bytes), and the error that
    ended the reading, if any."""
    got: list[tuple[int, EvalCase]] = []
    try:
        scan_file(path, 100)
        for i, data in enumerate(raw_items(path, "eval_cases")):
            try:
                got.append((i, EvalCase.model_validate(data)))
            except ValidationError as e:
                raise from_validation_error(path, e, f"eval_cases[{i}]") from None
    except DataError as e:
        return got, str(e)
    return got, None


def _streamed(path: Path) -> tuple[list[tuple[int, EvalCase]], str | None]:
    got: list[tuple[int, EvalCase]] = []
    try:
        for item in CaseStream(path, "eval_cases", EvalCase, 100):
            got.append(item)
    except DataError as e:
        return got, str(e)
    return got, None


def _read_as_the_stream_does(path: Path, index: int) -> EvalCase | None:
    """Item `index` as the stream reads it (`_reference`); None where it refuses the file there."""
    got, _ = _reference(path)
    return got[index][1] if index < len(got) else None


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
    raw = path.read_bytes()[a:b]
    assert read_item(EvalCase, raw) == _read_as_the_stream_does(path, 2)
    # (and so with the bytes' shape made by the caller, as a `score` worker makes it)
    assert read_item(EvalCase, raw, raw.translate(BYTE_SHAPES)) == read_item(EvalCase, raw)
    shape = raw.translate(BYTE_SHAPES)
    assert has_exponents(raw, shape) is has_exponents(raw)
    assert read_item(EvalCase, raw, shape, has_exponents(raw, shape)) == read_item(EvalCase, raw)
    # The stream reads an indented file's items from their bytes: the same items, the same error.
    assert _streamed(path) == _reference(path)


# Each of `read_item`'s checks decides an item of its own: with it dropped, pydantic's parser
# takes that item where the stream (ijson) refuses it.
@pytest.mark.parametrize(("value", "dropped"), [
    (b"NaN", ("_BARE_CONSTANT", re.compile(rb"(?!)"))),
    (b"[1, -Infinity]", ("_BARE_CONSTANT", re.compile(rb"(?!)"))),
    (b"123456789012345678901234567890", ("_LONG_INTEGER", b"#")),
    (b"-18446744073709551616", ("_LONG_INTEGER", b"#")),
    (b"1e400", ("has_exponents", lambda *args: False)),
    (b"[2, -1.5E+400]", ("_EXPONENTS", ())),
    (b'{"k": -1e+999}', ("_EXPONENTS", ())),
])
def test_each_check_of_an_items_bytes_decides_an_item(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      value: bytes, dropped: tuple[str, object]) -> None:
    path = _indented(tmp_path / "s.json")
    path.write_bytes(path.read_bytes().replace(b'"MARK"', value))
    spans = item_spans(path, "eval_cases")
    assert spans is not None
    a, b = spans[2]
    raw = path.read_bytes()[a:b]
    assert _read_as_the_stream_does(path, 2) is None  # (ijson refuses the file there)
    assert read_item(EvalCase, raw) is None
    shape = raw.translate(BYTE_SHAPES)
    assert read_item(EvalCase, raw, shape, has_exponents(raw, shape)) is None
    monkeypatch.setattr(stream, *dropped)
    assert read_item(EvalCase, raw) is not None


def test_an_indented_files_items_are_validated_from_their_bytes(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = _indented(tmp_path / "s.json")
    want = _reference(path)
    assert len(want[0]) == 5 and want[1] is None

    def refused(*args: object) -> None:
        raise AssertionError("parsed by ijson item by item")

    monkeypatch.setattr(stream, "raw_items", refused)
    assert _streamed(path) == want
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(json.loads(path.read_bytes())))
    with pytest.raises(AssertionError, match="parsed by ijson"):
        _streamed(compact)  # not laid out a line per item's start and end: read as before


def test_items_straddling_the_reading_window(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(split, "_BLOCK", 64)  # every item straddles blocks
    path = _indented(tmp_path / "s.json")
    got = _streamed(path)
    assert got == _reference(path) and len(got[0]) == 5 and got[1] is None


@pytest.mark.parametrize(("edit", "error"), [
    # The layout stops matching after two items (one written on a line of its own).
    ((b'},\n  {\n   "eval_id": "c2"', b'}, {\n   "eval_id": "c2"'), None),
    ((b'"eval_id": "c3"', b'"eval_id": 3'), "eval_cases[3].eval_id"),
    ((b'0.0\n}', b'[1, }\n}'), "malformed JSON"),  # after the list
    ((b'0.0\n}', b'0.0\n} x'), "malformed JSON"),
    ((b'{\n "eval_set_id": "s"', b'{\n "eval_set_id": "s",,'), "malformed JSON"),  # before it
])
def test_what_the_items_bytes_do_not_show_is_read_as_before(tmp_path: Path, edit: tuple[bytes, bytes],
                                                            error: str | None) -> None:
    path = _indented(tmp_path / "s.json", indent=1)
    data = path.read_bytes()
    assert edit[0] in data
    path.write_bytes(data.replace(*edit))
    got, want = _streamed(path), _reference(path)
    assert got == want
    assert (error is None and want[1] is None) or (error is not None and error in str(want[1]))


def test_a_second_list_of_the_key_after_the_first(tmp_path: Path) -> None:
    path = _indented(tmp_path / "s.json")
    data = path.read_bytes()
    extra = b'{"eval_id": "late", "conversation": []}'
    assert data.count(b"\n  ],") == 1
    path.write_bytes(data.replace(b"\n  ],", b'\n  ],\n  "eval_cases": [' + extra + b"],"))
    got = _streamed(path)
    assert got == _reference(path)
    assert [c.eval_id for _, c in got[0]] == ["c0", "c1", "c2", "c3", "c4", "late"]


def test_an_item_with_bytes_after_it_is_refused() -> None:
    # NaN sends the item through ijson, which would stop at the first value and take it.
    raw = eval_set("s", {"a": [inv()]}).eval_cases[0].model_dump_json().encode()
    raw = raw.replace(b'"eval_id":"a"', b'"eval_id":"a","x":NaN')
    assert read_item(EvalCase, raw) is None  # an unknown key: refused whole
    fine = eval_set("s", {"a": [inv()]}).eval_cases[0].model_dump_json().encode()
    assert read_item(EvalCase, fine) is not None
    assert read_item(EvalCase, fine + b', {"eval_id": "b", "x": NaN}') is None


@pytest.mark.parametrize("number", ["1e5", "-2.5E+300", "0e0", "1E-7", "12.5e16", "1e400"])
@pytest.mark.parametrize("layout", ['{"a": N}', '{"a":N}', "[N]", "[1, N]", "[N, 2]", '{"a": [\n  N\n ]}',
                                    '{"a": {"b": N}}', "N", ' N ', '{"a":\tN\r\n}', '[[],N,{}]'])
def test_has_exponents_finds_every_number_written_with_one(number: str, layout: str) -> None:
    raw = layout.replace("N", number).encode()
    json.loads(raw)  # (valid JSON)
    assert has_exponents(raw)
    assert not has_exponents(layout.replace("N", number.lower().split("e")[0]).encode())


def test_has_exponents_is_false_for_ids_and_words() -> None:
    raw = (b'{"id": "adk-52e599", "x": "52e599", "t": "up 1e3 times", "w": "every one e", '
           b'"f": false, "t2": true, "n": [1, -2.5, 0.125], "u": "\xc3\xa9e1", "v": "v1e5/x 2e3",'
           b' "s": " 1e5 ", "k": "1e5:", "h": "10E9999-52e5"}')
    assert not has_exponents(raw)
    assert not has_exponents(raw, raw.translate(BYTE_SHAPES))
    assert has_exponents(b'{"t": "seen: 1e3, twice"}')  # text laid out as a number: taken for one


@pytest.mark.parametrize("text", [b'"up 1e3 times"', b'"v1e5/x"', b'" 1e5 "', b'"x:1e5, y"', b'"[2E+3 "'])
def test_has_exponents_looks_at_a_run_that_ends_as_a_number_only(monkeypatch: pytest.MonkeyPatch,
                                                                  text: bytes) -> None:
    # A run that ends as a number's exponent does (at a space or punctuation) is looked at in
    # Python, as a value in the JSON text; an id's run ending at a letter or quote is not.
    raw = b'{"id": "adk-52e599", "t": ' + text + b'}'
    looked: list[tuple[int, int]] = []

    def a_value(raw: bytes, start: int, end: int) -> bool:
        looked.append((start, end))
        return stream_a_value(raw, start, end)

    stream_a_value = stream.a_value
    monkeypatch.setattr(stream, "a_value", a_value)
    assert has_exponents(raw) is (text == b'"x:1e5, y"')  # (laid out as a value: taken for one)
    assert len(looked) == (text != b'"v1e5/x"')  # (`v1e5` touches a letter: not a number)


def test_has_exponents_agrees_with_the_numbers_written() -> None:
    # Random documents whose strings hold no punctuation (where a string could look like a
    # number between delimiters): True exactly when a float was written with an exponent.
    import random

    rng = random.Random(23)
    letters = "abcdeE0123456789 -+.\u00e9"

    def value(depth: int) -> object:
        kind = rng.randrange(6 if depth < 4 else 3)
        if kind == 0:
            return rng.choice([rng.uniform(-1e3, 1e3), 10.0 ** rng.randint(-30, 30), rng.random() * 1e-6,
                               float(rng.randint(-10**6, 10**6))])
        if kind == 1:
            return rng.choice([rng.randint(-10**20, 10**20), True, False, None])
        if kind == 2:
            return "".join(rng.choice(letters) for _ in range(rng.randrange(12)))
        if kind in (3, 4):
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {"".join(rng.choice(letters) for _ in range(3)): value(depth + 1)
                for _ in range(rng.randrange(4))}

    def exponent(v: object) -> bool:
        if isinstance(v, float):
            return "e" in repr(v)
        if isinstance(v, list):
            return any(exponent(x) for x in v)
        if isinstance(v, dict):
            return any(exponent(x) for x in v.values())
        return False

    seen = set()
    for _ in range(2000):
        v = value(0)
        indent = rng.choice([None, 1, 2])
        raw = json.dumps(v, indent=indent, ensure_ascii=rng.random() < 0.5).encode()
        assert has_exponents(raw) is exponent(v), raw
        seen.add(exponent(v))
    assert seen == {True, False}


def test_an_ids_exponent_like_digits_are_not_looked_at_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # `52e599` in an id has the shape of a number with a 3-digit exponent: where the text holds
    # no number written with an exponent, the digit-by-digit check of such runs is not made.
    raw = eval_set("s", {"a": [inv()]}).eval_cases[0].model_dump_json().encode()
    raw = raw.replace(b'"eval_id":"a"', b'"eval_id":"adk-52e599-10e9999"')
    want = read_item(EvalCase, raw)
    assert want is not None and want.eval_id == "adk-52e599-10e9999"

    def looked(*args: object) -> bool:
        raise AssertionError("looked at digit by digit")

    monkeypatch.setattr(stream, "_alone", looked)
    assert read_item(EvalCase, raw) == want
    with pytest.raises(AssertionError, match="digit by digit"):  # a number with one is looked at
        read_item(EvalCase, raw.replace(b'"eval_id":', b'"x":1e999,"eval_id":'))
