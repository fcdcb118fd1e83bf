"""Re-scoring a result document a run at a time (`runner.result_stream`, through
`runner.streamed.rescore_files`): the document `rescore` writes from the loaded one."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from agenteval.errors import DataError
from agenteval.runner import ScoreJob, Services
from agenteval.runner.streamed import RunsApart, rescore_files
from agenteval.schema import EvalConfig
from tests.runner.test_streamed import _VOLATILE, _in_memory, _sets

CONFIG = EvalConfig(criteria={"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8})


def _result_doc(tmp_path: Path, runs: int = 2, n: int = 12) -> tuple[Path, Path]:
    """A result document of `runs` runs per case (each case's runs together, as `eval` writes
    them; the second run with another answer), from scoring the corpus of `test_streamed`."""
    exp, act = _sets(tmp_path, n=n)
    first = tmp_path / "first.json"
    asyncio.run(rescore_files(ScoreJob(config=CONFIG), exp, act, Services.create({}), first))
    doc = json.loads(first.read_text())
    cases = []
    for got in doc["eval_case_results"]:
        for r in range(runs):
            again = copy.deepcopy(got)
            again["run_index"] = r
            if r:
                inv = again["eval_metric_result_per_invocation"][0]["actual_invocation"]
                inv["final_response"]["parts"][0]["text"] = "something else"
            cases.append(again)
    doc["eval_case_results"] = cases
    path = tmp_path / "recorded.json"
    path.write_text(json.dumps(doc))
    return exp, path


def _same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert {k: v for k, v in a.items() if k not in _VOLATILE} == \
        {k: v for k, v in b.items() if k not in _VOLATILE}
    assert a["run"]["totals"] == b["run"]["totals"]
    assert a["run"]["num_runs"] == b["run"]["num_runs"] and a["run"]["eval_sets"] == b["run"]["eval_sets"]


def test_a_result_document_rescored_run_by_run_is_the_in_memory_one(tmp_path: Path) -> None:
    exp, recorded = _result_doc(tmp_path)
    job = ScoreJob(config=CONFIG, command="score")
    out = tmp_path / "streamed.json"
    done = asyncio.run(rescore_files(job, exp, recorded, Services.create({}), out))
    streamed = json.loads(out.read_text())
    _same(streamed, _in_memory(tmp_path, job, exp, recorded, Services.create({})))
    assert streamed["run"]["num_runs"] == 2 and len(streamed["summary"]) == 12
    assert [s.runs for s in done.summaries] == [2] * 12


def test_a_subset_in_another_order_is_paired_too(tmp_path: Path) -> None:
    exp, recorded = _result_doc(tmp_path, runs=1)
    doc = json.loads(recorded.read_text())
    doc["eval_case_results"] = [doc["eval_case_results"][i] for i in (7, 2, 9)]  # a selection
    recorded.write_text(json.dumps(doc))
    job = ScoreJob(config=CONFIG, command="score")
    out = tmp_path / "streamed.json"
    asyncio.run(rescore_files(job, exp, recorded, Services.create({}), out))
    streamed = json.loads(out.read_text())
    assert [c["eval_id"] for c in streamed["eval_case_results"]] == ["c7", "c2", "c9"]
    _same(streamed, _in_memory(tmp_path, job, exp, recorded, Services.create({})))


def test_runs_of_a_case_apart_are_left_to_the_in_memory_path(tmp_path: Path) -> None:
    exp, recorded = _result_doc(tmp_path)
    doc = json.loads(recorded.read_text())
    cases = doc["eval_case_results"]
    doc["eval_case_results"] = cases[0::2] + cases[1::2]  # every first run, then every second
    recorded.write_text(json.dumps(doc))
    out = tmp_path / "streamed.json"
    with pytest.raises(RunsApart):
        asyncio.run(rescore_files(ScoreJob(config=CONFIG), exp, recorded, Services.create({}), out))
    assert not out.exists()


@pytest.mark.parametrize(("change", "message"), [
    (lambda cases: cases[3].update(eval_id="stranger"),
     r"eval_case_results\[3\].eval_id: 'stranger' is not in the expected eval set"),
    (lambda cases: cases[3].update(run_index=0),
     r"eval_case_results\[3\]: duplicate run 0 of eval_id 'c1' \(also eval_case_results\[2\]\)"),
    (lambda cases: cases[5]["eval_metric_result_per_invocation"].pop(),
     r"eval_case_results\[5\].eval_metric_result_per_invocation: 0 invocations, but the "
     r"expected case 'c2' has 1"),
])
def test_what_runs_from_result_refuses_is_refused(tmp_path: Path, change: Any, message: str) -> None:
    exp, recorded = _result_doc(tmp_path)
    doc = json.loads(recorded.read_text())
    change(doc["eval_case_results"])
    recorded.write_text(json.dumps(doc))
    out = tmp_path / "streamed.json"
    with pytest.raises(DataError, match=message):
        asyncio.run(rescore_files(ScoreJob(config=CONFIG), exp, recorded, Services.create({}), out))
    assert not out.exists()


def test_the_cli_rescores_a_document_with_runs_apart_in_memory(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from agenteval.cli.main import cli

    exp, recorded = _result_doc(tmp_path)
    doc = json.loads(recorded.read_text())
    cases = doc["eval_case_results"]
    streamed_out, apart_out = tmp_path / "a.json", tmp_path / "b.json"
    r = CliRunner().invoke(cli, ["score", str(exp), "--actual", str(recorded), "-o", str(streamed_out)])
    assert r.exit_code == 1, r.output  # some cases fail
    doc["eval_case_results"] = cases[0::2] + cases[1::2]
    recorded.write_text(json.dumps(doc))
    r = CliRunner().invoke(cli, ["score", str(exp), "--actual", str(recorded), "-o", str(apart_out)])
    assert r.exit_code == 1, r.output
    assert r.output.count("Using criteria from") == 1  # said once, though the first try gave up
    a, b = json.loads(streamed_out.read_text()), json.loads(apart_out.read_text())
    assert a["summary"] == b["summary"] and a["run"]["totals"] == b["run"]["totals"]
