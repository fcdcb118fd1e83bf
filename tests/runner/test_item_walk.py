"""A trusted eval-set file's case list walked at C speed (`runner.item_walk`): the same items,
in the same order, with the same eval ids and bytes as ijson's reading, whatever the layout and
wherever blocks end; anything read otherwise is `Unread`, and a resumed run's cases then come
from ijson from that item on, unchanged."""

from __future__ import annotations

import codecs
import io
import json
import random
from pathlib import Path
from typing import Any

import ijson
import pytest

from agenteval.datasets import load_eval_set
from agenteval.runner import item_walk, selection
from agenteval.runner.item_walk import Unread, walk
from agenteval.runner.selection import StreamedCases


def _ijson_items(raw: bytes) -> list[Any]:
    return list(ijson.items(io.BytesIO(raw.removeprefix(codecs.BOM_UTF8)), "eval_cases.item", use_float=True))


def _document(rnd: random.Random) -> bytes:
    cases = [{"eval_id": rnd.choice([f"c{i}", f"é{i}", f"中{i}", f"q\\\"{i}", 5]),
              "x": [1, 2.5, {"y": 'z"\\'}], "pad": " " * rnd.randint(0, 40)}
             for i in range(rnd.randint(0, 12))]
    head = {"eval_set_id": "s", "a": "x" * rnd.randint(0, 60), "n": 10 ** rnd.randint(0, 17)}
    doc = {**head, "eval_cases": cases, "tail": 12345678} if rnd.random() < 0.5 else \
        {"eval_cases": cases, **head}
    text = json.dumps(doc, indent=rnd.choice([None, 1, 2]), ensure_ascii=rnd.choice([True, False]))
    return (codecs.BOM_UTF8 if rnd.random() < 0.3 else b"") + text.encode()


@pytest.mark.parametrize("block", [5, 37, 1 << 20])
def test_the_walk_gives_ijsons_items_ids_and_bytes_wherever_blocks_end(
        tmp_path: Path, block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(item_walk, "_BLOCK", block)
    path = tmp_path / "s.json"
    for seed in range(120):
        raw = _document(random.Random(seed))
        path.write_bytes(raw)
        expected = _ijson_items(raw)
        got = list(walk(path, "eval_cases"))
        assert len(got) == len(expected), seed
        for (eval_id, window, start, end), item in zip(got, expected, strict=True):
            item_bytes = window[start:end].encode("latin-1")
            assert list(ijson.items(item_bytes, "", use_float=True)) == [item]  # its very bytes
            own = item["eval_id"]
            assert eval_id == (own if isinstance(own, str) and own.isascii() else None)


@pytest.mark.parametrize("text", [
    '{"eval_cases": [1]}',  # an item that is not an object
    '{"eval_cases": [{}], "eval_cases": [{}]}',  # a second list (ijson gives its items too)
    '{"eval_cases": [{}]} x',
    '[{"eval_cases": []}]',
    '{"eval_cases": {}}',
    '{"other": 1}',
    '{"eval_cases": [{}],}',
    '{"eval_cases": [{},]}',
    '{"eval_cases": [{}] "x": 1}',
    '{"eval_cases": [{"eval_id": "a"}',  # cut short
])
def test_what_the_walk_does_not_read_as_ijson_does_is_unread(tmp_path: Path, text: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(text)
    with pytest.raises(Unread):
        list(walk(path, "eval_cases"))


def _case(eval_id: str) -> dict[str, Any]:
    return {"eval_id": eval_id, "conversation": [
        {"user_content": {"role": "user", "parts": [{"text": f"q {eval_id}"}]},
         "final_response": {"role": "model", "parts": [{"text": f"a {eval_id}"}]}}]}


def _trusted(path: Path) -> StreamedCases:
    _, checked = StreamedCases.read(path)
    assert checked.record is not None
    _, trusted = StreamedCases.read(path, {checked.record.sha256: checked.record})
    assert trusted.trusted
    return trusted


def test_a_trusted_files_kept_cases_are_found_without_ijson(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    ids = [f"c{i}" for i in range(6)] + ["é6"]
    path = tmp_path / "s.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "s", "eval_cases": [_case(i) for i in ids]}, indent=1,
                               ensure_ascii=False))
    whole = load_eval_set(path).eval_cases
    trusted = _trusted(path)

    def no_file_parse(*_: Any) -> Any:
        raise AssertionError("the file was parsed by ijson")

    monkeypatch.setattr(selection, "raw_items", no_file_parse)
    kept = {"c0", "c2", "c3", "é6"}  # (a non-ASCII id: found from the item's own bytes)
    got = list(trusted.cases(kept))
    assert got == [i if i in kept else c for i, c in zip(ids, whole, strict=True)]
    assert trusted.validated == 3


def test_a_file_the_walk_cannot_read_goes_on_with_ijson_from_that_item(tmp_path: Path) -> None:
    # Two case lists: ijson reads the second's items after the first's; the walk stops there.
    path = tmp_path / "s.evalset.json"
    first = json.dumps({"eval_set_id": "s", "eval_cases": [_case(f"c{i}") for i in range(3)]})
    second = json.dumps([_case(f"d{i}") for i in range(2)])
    path.write_text(first[:-1] + ', "eval_cases": ' + second + "}")
    trusted = _trusted(path)
    assert trusted.count == 5
    got = list(trusted.cases({"c1", "d0"}))
    assert [g if isinstance(g, str) else g.eval_id for g in got] == ["c0", "c1", "c2", "d0", "d1"]
    assert [type(g).__name__ for g in got] == ["EvalCase", "str", "EvalCase", "str", "EvalCase"]
