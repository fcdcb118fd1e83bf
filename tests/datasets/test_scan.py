"""The nesting scan of files read as streams: the same answer in any chunking."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from agenteval.datasets import scan as scan_module
from agenteval.datasets.scan import DepthScan, scan_file
from agenteval.errors import DataError
from tests.datasets.test_nesting import _depth


def _nested(rng: random.Random, depth: int) -> Any:
    if depth == 0:  # strings full of what a scan must not count: brackets, quotes, backslashes
        return rng.choice(['a\\"]{', "x", 1, None, "\\\\", '\\\\"[', "\\", "é}"])
    if rng.random() < 0.5:
        return [_nested(rng, depth - 1)]
    return {"k[\\\\": _nested(rng, depth - 1), "z": '}}"['}


@pytest.mark.parametrize("spacing", [scan_module._BYTES_AN_ESCAPE, 1, sys.maxsize])
def test_depth_is_exact_in_one_chunk_and_bounded_across_chunks(spacing: int,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # Both ways of dropping escapes: a step per escape (spacing 1: always), bytes.replace
    # (sys.maxsize: wherever there is one), and the default's choice between them.
    monkeypatch.setattr(scan_module, "_BYTES_AN_ESCAPE", spacing)
    rng = random.Random(7)
    for _ in range(200):
        value = {"a": [_nested(rng, rng.randint(0, 40)) for _ in range(4)]}
        text = json.dumps(value, ensure_ascii=False).encode()
        true = _depth(value)
        for size in (1, 2, 3, 7, 64, len(text)):
            scan = DepthScan()
            for i in range(0, len(text), size):
                scan.feed(text[i:i + size], 100)
            assert scan.depth == 0
            assert true <= scan.deepest <= 2 * true + 1, (size, true, scan.deepest)
            if size == len(text):
                assert scan.deepest == true


@pytest.mark.parametrize(("text", "lone"), [
    (b'{"a": "\\ud83d\\ude00"}', False),  # a pair: an emoji, escaped
    (b'{"a": "\\ud800x"}', True),
    (b'{"a": "\\udc00"}', True),
    (b'{"a": "plain"}', False),
])
def test_lone_surrogate_escapes_are_noticed(text: bytes, lone: bool) -> None:
    scan = DepthScan()
    scan.feed(text, 100)
    assert scan.surrogates is lone
    for size in (1, 2, 5, 9):  # an escape split over chunks may count as lone, never be missed
        scan = DepthScan()
        for i in range(0, len(text), size):
            scan.feed(text[i:i + size], 100)
        assert scan.surrogates or not lone


def test_scan_file_names_the_place_of_a_bomb(tmp_path: Path) -> None:
    path = tmp_path / "bomb.json"
    path.write_bytes(b'{"eval_set_id": "s", "eval_cases": [{"state": ' + b"[" * 500 + b"]" * 500 + b"}]}")
    with pytest.raises(DataError) as e:
        scan_file(path, 100)
    assert str(path) in str(e.value) and "eval_cases[0].state" in str(e.value)
    assert "nested more than 100 levels" in str(e.value)


def test_scan_file_refuses_a_lone_surrogate_where_it_is(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(b'{"eval_set_id": "s\\ud800", "eval_cases": []}')
    with pytest.raises(DataError, match="eval_set_id: holds an unpaired UTF-16 surrogate"):
        scan_file(path, 100)


def test_scan_file_passes_what_is_fine_and_says_what_is_missing(tmp_path: Path) -> None:
    fine = tmp_path / "fine.json"
    fine.write_text(json.dumps({"a": [[{"b": "\\ud83d\\ude00 [[["}]]}))
    assert scan_file(fine, 100).deepest == 4
    with pytest.raises(DataError, match="file not found"):
        scan_file(tmp_path / "missing.json", 100)


def test_an_unchanged_file_that_passed_is_not_scanned_again(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"a": [[1]]}))
    read: list[bytes] = []
    chunks = scan_module.chunks
    monkeypatch.setattr(scan_module, "chunks", lambda f: (read.append(b) or b for b in chunks(f)))
    first = scan_file(path, 100)
    assert scan_file(path, 100) is first and len(read) == 1  # read once
    scan_file(path, 50)  # another limit: scanned
    assert len(read) == 2
    path.write_text("[" * 200 + "]" * 200)  # changed: scanned again, and refused
    with pytest.raises(DataError, match="nested more than 100 levels"):
        scan_file(path, 100)
    with pytest.raises(DataError, match="nested more than 100 levels"):
        scan_file(path, 100)  # a refusal is not remembered


def test_the_structure_from_the_callers_kept_bytes_is_the_same() -> None:
    # `DepthScan` hands `structure_of_few_escapes` the brackets, quotes and backslashes it has
    # already kept: the structure made from them is the one made from the text.
    from agenteval.datasets.nesting import NOT_STRUCTURE_OR_BACKSLASH, structure_of_few_escapes

    rng = random.Random(23)
    for _ in range(200):
        text = json.dumps({"a": [_nested(rng, rng.randint(0, 12)) for _ in range(3)]},
                          ensure_ascii=rng.random() < 0.5).encode()
        kept = text.translate(None, NOT_STRUCTURE_OR_BACKSLASH)
        assert structure_of_few_escapes(text, kept) == structure_of_few_escapes(text)
