"""`runner.streamed`: scoring recorded runs from files, a case at a time, into the document the
in-memory path writes."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from agenteval.datasets import load_eval_set
from agenteval.errors import DataError
from agenteval.models import ScriptedModel
from agenteval.runner import ScoreJob, Selection, Services, load_actual, rescore
from agenteval.runner.streamed import rescore_files
from agenteval.schema import EvalConfig, EvalSet
from agenteval.store import write_outputs
from tests.helpers import call, eval_set, inv

_VOLATILE = ("eval_set_result_id", "eval_set_result_name", "creation_timestamp", "run")


def _sets(tmp_path: Path, n: int = 30, shuffle: bool = False) -> tuple[Path, Path]:
    rng = random.Random(3)
    expected = eval_set("s", {f"c{i}": [inv(f"q{i}", f"answer {i}", [call("t", x=i)])] * (1 + i % 2)
                              for i in range(n)})
    actual = eval_set("s", {f"c{i}": [inv(f"q{i}", f"answer {i if i % 3 else i + 1}",
                                          [call("t", x=i if i % 4 else -1)])] * (1 + i % 2)
                            for i in range(n)})
    if shuffle:
        rng.shuffle(actual.eval_cases)
    paths = tmp_path / "expected.evalset.json", tmp_path / "actual.evalset.json"
    for path, es in zip(paths, (expected, actual), strict=True):
        path.write_text(es.model_dump_json(), encoding="utf-8")
    return paths


def _in_memory(tmp_path: Path, job: ScoreJob, exp: Path, act: Path, services: Services) -> dict[str, Any]:
    job.expected, job.actual = Selection(exp, load_eval_set(exp)), load_actual(act)
    done = asyncio.run(rescore(job, services))
    out = tmp_path / "memory.json"
    write_outputs(done.results, out)
    return dict(json.loads(out.read_text()))


@pytest.mark.parametrize("shuffle", [False, True])
def test_the_streamed_document_is_the_in_memory_one(tmp_path: Path, shuffle: bool) -> None:
    exp, act = _sets(tmp_path, shuffle=shuffle)
    job = ScoreJob(config=EvalConfig(criteria={"tool_trajectory_avg_score": 1.0,
                                               "response_match_score": 0.8}), command="score")
    out = tmp_path / "streamed.json"
    done = asyncio.run(rescore_files(job, exp, act, Services.create({}), out, keep=5))
    streamed = json.loads(out.read_text())
    memory = _in_memory(tmp_path, job, exp, act, Services.create({}))
    assert {k: v for k, v in streamed.items() if k not in _VOLATILE} == \
        {k: v for k, v in memory.items() if k not in _VOLATILE}
    assert done.spec.totals.model_dump(mode="json") == memory["run"]["totals"]
    assert done.spec.eval_sets[0].cases == 30 and streamed["run"]["actual_file"] == str(act)
    assert len(done.first) == 5 and all(c.final_eval_status != 1 for c in done.not_passed)


def _verdict(label: str) -> str:
    return json.dumps({"verdict": label, "rationale": "r"})


def test_a_judged_run_is_checked_whole_before_the_first_judge_call(tmp_path: Path) -> None:
    exp, act = _sets(tmp_path, n=6)
    data = json.loads(act.read_text())
    data["eval_cases"][5]["eval_id"] = "stranger"
    act.write_text(json.dumps(data))
    judge = ScriptedModel(lambda req: _verdict("valid"))
    job = ScoreJob(config=EvalConfig(criteria={"final_response_match_v2": {
        "threshold": 0.5, "judge_model_options": {"judge_model": "j", "num_samples": 1}}}))
    out = tmp_path / "out.json"
    with pytest.raises(DataError, match=r"eval_cases\[5\].eval_id: 'stranger' is not in the expected"):
        asyncio.run(rescore_files(job, exp, act, Services.create({}, models={"j": judge}), out))
    assert judge.requests == [] and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["actual.evalset.json", "expected.evalset.json"]


def test_a_judged_run_scores_concurrently_in_case_order(tmp_path: Path) -> None:
    exp, act = _sets(tmp_path, n=12)
    judge = ScriptedModel(lambda req: _verdict("valid" if "answer 1" in req.messages[-1].content
                                               else "invalid"))
    job = ScoreJob(config=EvalConfig(criteria={"final_response_match_v2": {
        "threshold": 0.5, "judge_model_options": {"judge_model": "j", "num_samples": 1}}}))
    out = tmp_path / "out.json"
    done = asyncio.run(rescore_files(job, exp, act, Services.create({}, models={"j": judge}), out))
    doc = json.loads(out.read_text())
    assert [c["eval_id"] for c in doc["eval_case_results"]] == [f"c{i}" for i in range(12)]
    assert [s["eval_id"] for s in doc["summary"]] == [f"c{i}" for i in range(12)]
    assert done.spec.totals.judge_calls == len(judge.requests) == 18  # one per invocation
    memory = _in_memory(tmp_path, job, exp, act, Services.create({}, models={"j": judge}))
    assert doc["summary"] == memory["summary"] and 0 < done.spec.totals.passed < 12


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["eval_cases"].pop(2), "eval_cases: no case with eval_id 'c2'"),
    (lambda d: d["eval_cases"].append(dict(d["eval_cases"][0])),
     r"eval_cases\[30\].eval_id: duplicate eval_id 'c0' \(also eval_cases\[0\]\)"),
    (lambda d: d["eval_cases"][4]["conversation"].pop(), r"eval_cases\[4\].conversation: 0 invocations"),
])
def test_what_pair_runs_refuses_is_refused(tmp_path: Path, change: Any, message: str) -> None:
    exp, act = _sets(tmp_path)
    data = json.loads(act.read_text())
    change(data)
    act.write_text(json.dumps(data))
    out = tmp_path / "out.json"
    with pytest.raises(DataError, match=message):
        asyncio.run(rescore_files(ScoreJob(), exp, act, Services.create({}), out))
    assert not out.exists()  # a deterministic run refused part-way wrote nothing


def test_a_legacy_file_is_not_streamed(tmp_path: Path) -> None:
    legacy = tmp_path / "old.test.json"
    legacy.write_text(json.dumps([{"query": "hi", "expected_tool_use": [], "reference": "ok"}]))
    with pytest.raises(DataError, match="expected a JSON object"):
        asyncio.run(rescore_files(ScoreJob(), legacy, legacy, Services.create({})))
    assert isinstance(load_eval_set(legacy), EvalSet)  # the loader reads it


def _set_bytes(head: str = "", tail: str = "") -> bytes:
    data = eval_set("s", {"c": [inv("q", "a")]}).model_dump_json(indent=2)
    data = data.replace('{\n  "eval_set_id"', "{" + head + '\n  "eval_set_id"', 1)
    return (data[:-2] + tail + "\n}").encode()


def test_the_shell_is_read_from_the_head_alone_as_open_eval_set_reads_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agenteval.datasets import stream
    from agenteval.runner.streamed import eval_set_shell, open_eval_set

    path = tmp_path / "s.evalset.json"
    path.write_bytes(_set_bytes())
    scanned: list[Path] = []
    scan = stream.scan_file
    monkeypatch.setattr(stream, "scan_file", lambda p, limit: scanned.append(p) or scan(p, limit))
    assert eval_set_shell(path) == open_eval_set(path)[0]
    assert scanned == [path]  # open_eval_set's scan only


def _outcome(read: Any, path: Path) -> Any:
    try:
        return read(path)
    except DataError as e:
        return str(e)


@pytest.mark.parametrize(("head", "refused"), [
    # A nesting bomb before the cases: checked before it is parsed (ijson's builder would
    # take minutes on it), refused with the stream's error.
    ('"eval_set_id": "s", "name": ' + "[" * 10_000 + "]" * 10_000 + ",", True),
    ('"eval_set_id": "s", "name": "\\ud800",', False),  # taken as the stream takes it
], ids=["bomb before the cases", "lone surrogate before them"])
def test_a_head_is_taken_or_refused_as_open_eval_set_does(tmp_path: Path, head: str, refused: bool) -> None:
    from agenteval.runner.streamed import eval_set_shell, open_eval_set

    path = tmp_path / "s.evalset.json"
    path.write_bytes(_set_bytes(head))
    streamed = _outcome(lambda p: open_eval_set(p)[0], path)
    assert _outcome(eval_set_shell, path) == streamed
    assert isinstance(streamed, str) == refused
    if refused:
        assert "nested more than 100 levels deep" in streamed


def test_the_shell_is_read_without_what_comes_after_the_cases(tmp_path: Path) -> None:
    # (checked where the cases are read: the stream's scan, or a sharded run's workers and
    # `sharded.frame_ok`)
    from agenteval.runner.streamed import eval_set_shell, open_eval_set

    path = tmp_path / "s.evalset.json"
    path.write_bytes(_set_bytes(tail=',\n  "extra": ' + "[" * 150 + "]" * 150))
    assert eval_set_shell(path).eval_set_id == "s"
    with pytest.raises(DataError, match="nested more than 100 levels deep"):
        open_eval_set(path)


def test_an_id_after_the_cases_is_read_as_open_eval_set_reads_it(tmp_path: Path) -> None:
    from agenteval.runner.streamed import eval_set_shell, open_eval_set

    data = json.loads(_set_bytes())
    data = {k: data[k] for k in ("name", "eval_cases", "eval_set_id")}
    path = tmp_path / "s.evalset.json"
    path.write_text(json.dumps(data, indent=2))
    assert eval_set_shell(path) == open_eval_set(path)[0] and eval_set_shell(path).eval_set_id == "s"
