"""Result documents written where the user asked: whole, or a case at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval.errors import AgentEvalError, DataError
from agenteval.store import write_outputs
from agenteval.store.output import DocumentWriter
from agenteval.verdicts import summarise
from tests.result_builders import case, result


def test_a_document_written_case_by_case_has_the_bytes_of_one_written_whole(tmp_path: Path) -> None:
    doc = summarise(result([case("a", {"m": 1.0}), case("b", {"m": 0.2}), case("c", {"m": None})]))
    whole = tmp_path / "whole.json"
    write_outputs([doc], whole)
    streamed = tmp_path / "streamed.json"
    writer = DocumentWriter([streamed], doc)  # its lists are left out
    for got, summary in zip(doc.eval_case_results, doc.summary, strict=True):
        writer.add(got)
        writer.add_summary(summary)
    assert not streamed.exists()  # nothing is in place before the end
    writer.commit(doc)
    assert streamed.read_bytes() == whole.read_bytes()


def test_an_aborted_document_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")
    doc = result([case("a", {"m": 1.0})])
    writer = DocumentWriter([target], doc)
    writer.add(doc.eval_case_results[0])
    writer.abort()
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_document_whose_id_changed_is_not_put_in_place(tmp_path: Path) -> None:
    doc = result([])
    writer = DocumentWriter([tmp_path / "out.json"], doc)
    with pytest.raises(AgentEvalError, match="id changed"):
        writer.commit(doc.model_copy(update={"eval_set_result_id": "other"}))
    assert list(tmp_path.iterdir()) == []


def test_a_target_that_cannot_be_replaced_is_a_data_error_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    writer = DocumentWriter([tmp_path / "dir"], result([]))  # `check_targets` refuses it up front
    with pytest.raises(DataError, match="cannot be written"):
        writer.commit(result([]))
    assert [p.name for p in tmp_path.iterdir()] == ["dir"] and not list((tmp_path / "dir").iterdir())
