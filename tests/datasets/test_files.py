import gc
from pathlib import Path

import pytest

from agenteval.datasets import load_eval_set, validate_eval_set_json, write_model
from agenteval.datasets.files import gc_paused
from agenteval.schema import EvalSetResult
from tests.helpers import call, eval_set, inv
from tests.result_builders import case, judge, result


def _one_piece(model: object, exclude_none: bool) -> bytes:
    serializer = type(model).__pydantic_serializer__  # type: ignore[attr-defined]
    return bytes(serializer.to_json(model, indent=2, exclude_none=exclude_none)) + b"\n"


@pytest.mark.parametrize("exclude_none", [False, True])
def test_result_written_in_pieces_has_the_bytes_of_one_piece(tmp_path: Path, exclude_none: bool) -> None:
    doc = result([case("a", {"m": 1.0}), case("b", {"m": 0.2, "n": None}, judge_records=[
        judge("n", None, 'line one\nline "two"')])])
    doc.metadata = {"eval_case_results": [], "note": '\n  "summary": []'}  # look-alikes of the cut points
    out = tmp_path / "r.json"
    write_model(out, doc, exclude_none=exclude_none)
    assert out.read_bytes() == _one_piece(doc, exclude_none)
    assert EvalSetResult.model_validate_json(out.read_bytes()) == doc


def test_empty_lists_and_eval_sets(tmp_path: Path) -> None:
    empty = EvalSetResult(eval_set_result_id="r", eval_set_id="s")
    write_model(tmp_path / "e.json", empty)
    assert (tmp_path / "e.json").read_bytes() == _one_piece(empty, True)
    s = eval_set("s", {"a": [inv("roll", "4", [call("roll_die", sides=6)])], "b": [inv()]})
    write_model(tmp_path / "s.json", s)
    assert (tmp_path / "s.json").read_bytes() == _one_piece(s, True)
    text = (tmp_path / "s.json").read_bytes()
    assert load_eval_set(tmp_path / "s.json") == s == validate_eval_set_json(text)


@pytest.mark.parametrize("enabled", [True, False])
def test_gc_paused_restores_the_previous_state(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        with gc_paused():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
        with pytest.raises(RuntimeError), gc_paused():
            raise RuntimeError
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
