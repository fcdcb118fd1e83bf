"""`runner.run` and `runner.rescore`: one Run with its header, shared by every document, and
progress as typed events."""

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agenteval.agents import Agent
from agenteval.datasets.files import write_model
from agenteval.models import ScriptedModel
from agenteval.runner import EvalJob, ScoreJob, Selection, Services, load_actual, rescore, run
from agenteval.schema import (
    Concurrency,
    EvalConfig,
    EvalSetResult,
    EvalStatus,
    Run,
)
from agenteval.schema.progress import CaseFinished, CaseStarted, JudgeCallDone, RunFinished, RunStarted
from tests.helpers import call, eval_set, inv


def echo(text: str) -> dict[str, Any]:
    return {"response": f"echo {text}", "tool_calls": [{"name": "echo", "args": {"t": text}, "response": 1}]}


def _sets() -> list[Selection]:
    a = eval_set("team/a", {"one": [inv("x", calls=[call("echo", t="x")])],
                            "two": [inv("y", calls=[call("echo", t="nope")])]})
    b = eval_set("b", {"three": [inv("z", calls=[call("echo", t="z")])]})
    return [Selection(None, a), Selection(None, b, ["three"])]


def _verdict(label: str) -> str:
    return json.dumps({"rationale": f"says {label}", "verdict": label})


def test_run_returns_one_header_shared_by_every_document() -> None:
    events: list[object] = []
    config = EvalConfig(criteria={"tool_trajectory_avg_score": 1.0})
    job = EvalJob(config=config, concurrency=Concurrency(cases=2), command="api", agent=echo,
                  selections=_sets(), num_runs=2, app_name="echo_app", agent_path="pkg.echo")
    done = asyncio.run(run(job, Services.create({}, job.concurrency), events.append))
    assert isinstance(done, Run) and [r.eval_set_id for r in done.results] == ["team/a", "b"]
    assert all(r.run is done.spec for r in done.results)
    spec = done.spec
    assert spec.command == "api" and spec.num_runs == 2 and spec.concurrency.cases == 2
    assert [(e.eval_set_id, e.cases, e.case_ids) for e in spec.eval_sets] == [
        ("team/a", 2, None), ("b", 1, ["three"])]
    assert spec.agent is not None and (spec.agent.name, spec.agent.path, spec.agent.kind) == (
        "echo_app", "pkg.echo", "callable")
    assert spec.models.agent is None and spec.models.judge == []
    assert spec.config["criteria"] == {"tool_trajectory_avg_score": 1.0}
    assert spec.ended is not None and spec.ended >= spec.started and spec.duration_seconds is not None
    t = spec.totals
    assert (t.cases, t.case_runs, t.passed, t.failed, t.agent_errors) == (3, 6, 2, 1, 0)
    assert spec.agenteval_version
    # events: the total first, each case run started and finished, the end last
    assert events[0] == RunStarted(spec.run_id, 6) and isinstance(events[-1], RunFinished)
    assert sum(isinstance(e, CaseStarted) for e in events) == 6
    finished = [e for e in events if isinstance(e, CaseFinished)]
    assert sorted((e.eval_id, e.run_index, e.status) for e in finished) == [
        ("one", 0, EvalStatus.PASSED), ("one", 1, EvalStatus.PASSED),
        ("three", 0, EvalStatus.PASSED), ("three", 1, EvalStatus.PASSED),
        ("two", 0, EvalStatus.FAILED), ("two", 1, EvalStatus.FAILED)]
    assert events[-1] == RunFinished(spec.run_id, 2, 1, 0, spec.duration_seconds)


def test_the_header_round_trips_and_adk_reads_the_document(tmp_path: Path) -> None:
    job = EvalJob(agent=echo, selections=_sets()[:1], command="eval")
    done = asyncio.run(run(job, Services.create({})))
    path = tmp_path / "r.json"
    write_model(path, done.results[0], exclude_none=False)
    again = load_actual(path)
    assert isinstance(again, EvalSetResult) and again.run == done.spec
    adk = pytest.importorskip("google.adk.evaluation.eval_result")
    read = adk.EvalSetResult.model_validate_json(path.read_text())  # the header is ignored
    assert read.eval_set_id == "team/a" and len(read.eval_case_results) == 2


def test_a_judged_run_names_its_judge_and_counts_its_calls() -> None:
    judge = ScriptedModel(lambda req: _verdict("valid" if "echo x" in req.messages[-1].content
                                               else "invalid"))
    config = EvalConfig(criteria={"final_response_match_v2": {
        "threshold": 0.5, "judge_model_options": {"judge_model": "my-judge", "num_samples": 1}}})
    events: list[object] = []
    job = EvalJob(config=config, agent=echo, selections=_sets()[:1])
    done = asyncio.run(run(job, Services.create({}, models={"my-judge": judge}), events.append))
    assert done.spec.models.judge == ["my-judge"]
    assert done.spec.concurrency.model_calls == {"my-judge": 4}
    calls = [e for e in events if isinstance(e, JudgeCallDone)]
    assert len(calls) == 2 and all(e.model == "my-judge" and e.model_calls == 1 for e in calls)
    assert done.spec.totals.judge_calls == 2 == len(judge.requests)
    assert [c.final_eval_status for c in done.results[0].eval_case_results] == [
        EvalStatus.PASSED, EvalStatus.FAILED]


def test_a_builtin_agent_records_its_model() -> None:
    model = ScriptedModel(lambda req: "hello")
    job = EvalJob(agent=Agent("greeter", "my-model"), selections=_sets()[1:])
    done = asyncio.run(run(job, Services.create({}, models={"my-model": model})))
    assert done.spec.models.agent == "scripted"  # the model's own name
    assert done.spec.agent is not None and done.spec.agent.kind == "builtin"


def _repeated(tmp_path: Path, gating: str) -> Run:
    """A result document with three runs of one case (pass, fail, pass) re-scored under `gating`."""
    ok = {"x": [inv("x", calls=[call("echo", t="x")])]}
    expected = eval_set("s", ok)
    runs = EvalJob(agent=echo, selections=[Selection(None, expected)], num_runs=3)
    recorded = asyncio.run(run(runs, Services.create({}))).results[0]
    middle = recorded.eval_case_results[1].eval_metric_result_per_invocation[0].actual_invocation
    middle.intermediate_data = inv("x", calls=[call("echo", t="wrong")]).intermediate_data
    config = EvalConfig(criteria={"tool_trajectory_avg_score": 1.0}, repeat_gating=gating)  # type: ignore[arg-type]
    job = ScoreJob(config=config, command="score", expected=Selection(tmp_path / "s.json", expected),
                   actual=recorded, actual_source="r.json", concurrency=Concurrency(cases=3))
    return asyncio.run(rescore(job, Services.create({}, job.concurrency)))


@pytest.mark.parametrize(("gating", "status"), [("all_runs", EvalStatus.FAILED),
                                                ("any_run", EvalStatus.PASSED),
                                                ("mean", EvalStatus.FAILED)])
def test_rescore_honours_repeat_gating(tmp_path: Path, gating: str, status: EvalStatus) -> None:
    done = _repeated(tmp_path, gating)
    (result,) = done.results
    assert result.gating == gating and done.spec.gating == gating
    assert [s.final_eval_status for s in result.summary] == [status]
    assert done.spec.num_runs == 3 and done.spec.command == "score"
    assert done.spec.actual_file == "r.json" and done.spec.concurrency.cases == 3


def test_run_needs_an_agent() -> None:
    with pytest.raises(Exception, match="agent is required"):
        asyncio.run(run(EvalJob(selections=_sets()), Services.create({})))


def test_rescoring_a_result_document_keeps_each_runs_warnings(tmp_path: Path) -> None:
    # What the run said of itself (a conversation the simulator's turn limit ended, a value that
    # lost information) was dropped by `score --actual result.json`: the new document said nothing.
    ok = {"x": [inv("x", calls=[call("echo", t="x")])]}
    expected = eval_set("s", ok)
    recorded = asyncio.run(run(EvalJob(agent=echo, selections=[Selection(None, expected)]),
                               Services.create({}))).results[0]
    said = ["the conversation reached the user simulator's turn limit"]
    recorded.eval_case_results[0].warnings = list(said)
    job = ScoreJob(config=EvalConfig(criteria={"tool_trajectory_avg_score": 1.0}), command="score",
                   expected=Selection(tmp_path / "s.json", expected), actual=recorded, actual_source="r.json")
    (result,) = asyncio.run(rescore(job, Services.create({}))).results
    assert result.eval_case_results[0].warnings == said
