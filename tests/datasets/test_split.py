"""`datasets.split`: the spans of a top-level list's items in an indented file, or None."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from agenteval.datasets import split
from agenteval.datasets.split import item_spans

_ITEMS = [{"eval_id": "a", "conversation": [{"x": "}\\n  }", "y": [1, {"z": None}]}]},
          {"eval_id": "b", "nested": {"eval_cases": [{"no": 1}]}, "s": "\"quoted\" { ["},
          {"eval_id": "c"}]


def _check(path: Path, items: list[object]) -> None:
    data = path.read_bytes()
    spans = item_spans(path, "eval_cases")
    assert spans is not None
    assert [json.loads(data[a:b]) for a, b in spans] == items


@pytest.mark.parametrize("indent", [1, 2, 4, "\t"])
def test_each_item_of_an_indented_file(tmp_path: Path, indent: int | str) -> None:
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"eval_set_id": "s", "eval_cases": _ITEMS, "after": [1]}, indent=indent))
    if indent == "\t":  # items open on a line indented with a tab: not what the finder reads
        assert item_spans(path, "eval_cases") is None
    else:
        _check(path, _ITEMS)


def test_files_larger_than_a_block_and_a_byte_order_mark(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(split, "_BLOCK", 64)  # every item straddles blocks
    items = [{"eval_id": f"c{i}", "text": "w" * (i * 7)} for i in range(50)]
    path = tmp_path / "set.json"
    path.write_bytes(codecs.BOM_UTF8 + json.dumps({"eval_cases": items}, indent=2).encode())
    _check(path, items)


@pytest.mark.parametrize("text", [
    json.dumps({"eval_cases": _ITEMS}),  # compact
    json.dumps({"head": {"eval_cases": [{"a": 1}]}, "eval_cases": _ITEMS}, indent=2),  # nested first
    json.dumps({"eval_cases": []}, indent=2),
    json.dumps({"eval_cases": [1, 2]}, indent=2),
    json.dumps({"eval_cases": {"a": {}}}, indent=2),
    json.dumps({"other": 1}, indent=2),
    '{"s": "\\"eval_cases\\": [", "x": 1}',
    '{\n  "eval_cases": [\n    {\n      "a": 1\n    }\n',  # cut short
    '{\n  "eval_cases": [\n    {\n      "a": 1\n    } x\n  ]\n}',
])
def test_anything_else_is_none(tmp_path: Path, text: str) -> None:
    path = tmp_path / "set.json"
    path.write_text(text)
    assert item_spans(path, "eval_cases") is None


def test_items_at_other_indents_and_line_ends(tmp_path: Path) -> None:
    # Each item's end is looked for at its own indent (the next item's start found by one match
    # or step by step); CRLF line ends; an indent of 255 spaces, the most a line's start is
    # looked for before an item's `{`.
    items: list[object] = [{"eval_id": "a", "x": {"y": [1]}}, {"eval_id": "b"}, {"eval_id": "c", "z": {}},
                           {"eval_id": "d"}]
    body = [json.dumps(item, indent=1).replace("\n", "\n" + " " * n) for item, n in
            zip(items, (2, 4, 255, 1), strict=True)]
    text = ('{\n "eval_cases": [\n  ' + body[0] + ",\n    " + body[1] + " ,\r\n" + " " * 255 + body[2]
            + ",\n\n " + body[3] + "\n ]\n}")
    path = tmp_path / "set.json"
    path.write_text(text)
    _check(path, items)
    path.write_text(text.replace("\n", "\r\n"))
    _check(path, items)
    for not_laid_out in (text.replace(" " * 255, " " * 256), text.replace(",\n\n ", ", ")):
        path.write_text(not_laid_out)
        assert item_spans(path, "eval_cases") is None
