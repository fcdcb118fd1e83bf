"""Eval sets read from their files a case at a time as a run pulls them (`StreamedCases`): the
same checks, fingerprint and documents as a set loaded whole, with only the cases in flight in
memory."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from agenteval.agents import CallableAdapter
from agenteval.criteria import resolve_metrics
from agenteval.datasets import load_eval_set
from agenteval.errors import DataError, unwrap
from agenteval.runner import EvalSetRequest, run_evaluation
from agenteval.runner.selection import Selection, SetRecord, StreamedCases, add_tool_args, file_sha256, select
from agenteval.schema import EvalConfig

METRICS = resolve_metrics(EvalConfig(criteria={"tool_trajectory_avg_score": 1.0}))


def _case(i: int) -> dict[str, Any]:
    return {"eval_id": f"c{i}", "conversation": [
        {"invocation_id": f"i{i}", "user_content": {"role": "user", "parts": [{"text": f"q{i}"}]},
         "final_response": {"role": "model", "parts": [{"text": f"a{i}"}]},
         "intermediate_data": {"tool_uses": [{"name": "look", "args": {"k": i}}]}}]}


def _write(path: Path, cases: list[dict[str, Any]], **head: Any) -> Path:
    path.write_text(json.dumps({"eval_set_id": "s", "name": "n é", **head, "eval_cases": cases},
                               ensure_ascii=False))
    return path


def test_a_streamed_set_has_the_digest_ids_and_tool_args_of_the_set_loaded_whole(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.evalset.json", [_case(i) for i in range(5)], description="d")
    shell, streamed = StreamedCases.read(path)
    whole = load_eval_set(path)
    assert streamed.digest == hashlib.sha256(whole.model_dump_json().encode()).hexdigest()
    assert streamed.ids == [c.eval_id for c in whole.eval_cases] and streamed.count == 5
    args: dict[str, set[str]] = {}
    for c in whole.eval_cases:
        add_tool_args(c, args)
    assert streamed.tool_args == args == {"look": {"k"}} and not streamed.scenario
    assert shell.eval_cases == [] and shell.eval_set_id == "s" and shell.description == "d"
    assert list(streamed) == whole.eval_cases  # read again, the same cases
    (sel,) = select([str(path)], stream=True)
    assert sel.streamed is not None and sel.digest() == Selection(path, whole).digest()
    assert sel.whole() == whole and sel.case_count() == 5


def test_fields_after_the_cases_are_read_as_loading_reads_them(tmp_path: Path) -> None:
    """ADK writes creation_timestamp after eval_cases: the shell keeps it, so the digest a
    streamed run journals is the one a resume that loads the set whole computes."""
    path = tmp_path / "s.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "s", "eval_cases": [_case(0), _case(1)],
                                "creation_timestamp": 1758846869.17}))
    shell, streamed = StreamedCases.read(path)
    whole = load_eval_set(path)
    assert shell.creation_timestamp == 1758846869.17
    assert streamed.digest == Selection(path, whole).digest()


def test_select_stream_refuses_what_loading_refuses_naming_file_and_field(tmp_path: Path) -> None:
    bad = [_case(0), _case(1)]
    bad[1]["conversation"] = "no"
    with pytest.raises(DataError) as e:
        select([str(_write(tmp_path / "bad.json", bad))], stream=True)
    assert str(tmp_path / "bad.json") in str(e.value) and "eval_cases[1].conversation" in str(e.value)
    with pytest.raises(DataError) as e:
        select([str(_write(tmp_path / "dup.json", [_case(0), _case(0)]))], stream=True)
    assert "eval_cases[1].eval_id" in str(e.value) and "duplicate eval_id 'c0'" in str(e.value)
    with pytest.raises(DataError) as e:
        select([str(_write(tmp_path / "empty.json", []))], stream=True)
    assert "eval_cases" in str(e.value)
    (tmp_path / "id.json").write_text(json.dumps({"eval_set_id": 3, "eval_cases": [_case(0)]}))
    with pytest.raises(DataError) as e:
        select([str(tmp_path / "id.json")], stream=True)
    assert "eval_set_id" in str(e.value)
    # a selection of cases, or a legacy list, is loaded whole as before
    path = _write(tmp_path / "s.json", [_case(i) for i in range(3)])
    (sel,) = select([f"{path}:c2,c0"], stream=True)
    assert sel.streamed is None and sel.case_ids == ["c2", "c0"]


def test_a_run_reads_the_cases_as_it_runs_them_and_writes_the_same_document(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.evalset.json", [_case(i) for i in range(60)])
    (sel,) = select([str(path)], stream=True)
    assert sel.streamed is not None
    read = [0]
    ahead: list[int] = []
    real = sel.streamed

    class Counting(StreamedCases):
        def __iter__(self):  # type: ignore[no-untyped-def]
            for case in StreamedCases.__iter__(self):
                read[0] += 1
                yield case

    counting = Counting(real.path, real.count, real.ids, real.tool_args, real.scenario, real.digest)
    answered = [0]

    def agent(text: str) -> dict[str, Any]:
        ahead.append(read[0] - answered[0])  # cases read but not yet answered, as this one runs
        answered[0] += 1
        return {"response": "a" + text[1:], "tool_calls": [{"name": "look", "args": {"k": int(text[1:])}}]}

    streamed_req = EvalSetRequest(sel.eval_set, METRICS, streamed=counting)
    (lazy,) = asyncio.run(run_evaluation(CallableAdapter(agent), [streamed_req], num_runs=2, parallelism=3))
    assert max(ahead) <= 3 + 1  # the cases in flight, not the set
    answered[0] = 0
    whole_req = EvalSetRequest(load_eval_set(path), METRICS)
    (whole,) = asyncio.run(run_evaluation(CallableAdapter(agent), [whole_req], num_runs=2, parallelism=3))

    def plain(doc: Any) -> Any:  # what does not depend on time
        return ([(r.eval_id, r.run_index, r.final_eval_status,
                  [(m.metric_name, m.score) for m in r.overall_eval_metric_results
                   if m.metric_name == "tool_trajectory_avg_score"]) for r in doc.eval_case_results],
                [(c.eval_id, c.final_eval_status, c.runs) for c in doc.summary])

    assert [(r.eval_id, r.run_index) for r in lazy.eval_case_results] == \
        [(f"c{i}", r) for i in range(60) for r in range(2)]
    assert all(r.final_eval_status == 1 for r in lazy.eval_case_results)
    assert plain(lazy) == plain(whole)


def test_a_set_changed_while_it_runs_is_a_data_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.evalset.json", [_case(i) for i in range(4)])
    (sel,) = select([str(path)], stream=True)
    _write(path, [_case(i) for i in range(3)])
    req = EvalSetRequest(sel.eval_set, METRICS, streamed=sel.streamed)
    with pytest.raises(BaseException) as e:  # raised in the executor's task group (the CLI unwraps it)
        asyncio.run(run_evaluation(CallableAdapter(lambda text: "x"), [req], parallelism=2))
    error = unwrap(e.value)
    assert isinstance(error, DataError) and "changed while it ran" in str(error)


def test_a_file_whose_bytes_a_record_names_is_not_checked_again(tmp_path: Path) -> None:
    """A resumed run trusts what it journaled of the file's very bytes (`SetRecord`): no case
    is validated before the run, and the run validates only the cases it does not keep."""
    path = _write(tmp_path / "s.evalset.json", [_case(i) for i in range(5)], description="d")
    shell, checked = StreamedCases.read(path)
    record = checked.record
    assert checked.validated == 5 and record is not None and record.sha256 == file_sha256(path)
    assert SetRecord.from_json(json.loads(json.dumps(record.to_json()))) == record
    assert SetRecord.from_json({**record.to_json(), "version": "0"}) is None
    assert SetRecord.from_json({**record.to_json(), "count": "5"}) is None
    trusted_shell, trusted = StreamedCases.read(path, {record.sha256: record})
    assert trusted.trusted and trusted.validated == 0 and trusted_shell == shell
    assert (trusted.digest, trusted.count, trusted.tool_args, trusted.scenario) == \
        (checked.digest, checked.count, checked.tool_args, checked.scenario)
    cases = list(trusted.cases({"c0", "c3"}))
    whole = load_eval_set(path).eval_cases
    assert trusted.validated == 3 and cases[0] == "c0" and cases[3] == "c3"  # kept: their ids only
    assert [cases[i] for i in (1, 2, 4)] == [whole[i] for i in (1, 2, 4)]
    (sel,) = select([str(path)], stream=True, trusted={record.sha256: record})
    assert sel.streamed is not None and sel.streamed.validated == 0 and sel.digest() == checked.digest


def test_a_changed_file_is_checked_whole_whatever_was_journaled(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.evalset.json", [_case(i) for i in range(5)])
    _, checked = StreamedCases.read(path)
    assert checked.record is not None
    bad = _case(0)
    bad["conversation"] = 7
    _write(path, [bad, *(_case(i) for i in range(1, 5))])
    with pytest.raises(DataError) as e:
        StreamedCases.read(path, {checked.record.sha256: checked.record})
    assert str(path) in str(e.value) and "eval_cases[0].conversation" in str(e.value)
    _write(path, [_case(i) for i in range(6)])
    _, again = StreamedCases.read(path, {checked.record.sha256: checked.record})
    assert not again.trusted and again.validated == 6 and again.digest != checked.digest


def test_a_run_does_not_validate_the_cases_a_resumed_run_kept(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.evalset.json", [_case(i) for i in range(4)])
    (sel,) = select([str(path)], stream=True)
    assert sel.streamed is not None
    (first,) = asyncio.run(run_evaluation(CallableAdapter(lambda text: "x"), [
        EvalSetRequest(sel.eval_set, METRICS, streamed=sel.streamed)], parallelism=1))
    kept = {("s", r.eval_id, r.run_index): r for r in first.eval_case_results if r.eval_id in ("c0", "c2")}
    sel.streamed.validated = 0
    (resumed,) = asyncio.run(run_evaluation(CallableAdapter(lambda text: "x"), [
        EvalSetRequest(sel.eval_set, METRICS, streamed=sel.streamed)], parallelism=1, finished=kept))
    assert sel.streamed.validated == 2
    assert [(r.eval_id, r.final_eval_status) for r in resumed.eval_case_results] == \
        [(r.eval_id, r.final_eval_status) for r in first.eval_case_results]
