"""The Ray executor on a real local Ray cluster (2 CPUs, so 2 workers): the same scores as the
local executor, judges included (their verdicts in the driver's cache); a worker killed mid-run
costs nothing but time, one killed again and again fails its case run alone; calls in flight to
one endpoint stay within its limit across workers; a killed driver is resumed; the CLI, the
Python API and the pytest plugin all reach it."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agenteval import AgentEvaluator
from agenteval.agents import load_root_agent
from agenteval.cli.main import cli
from agenteval.runner import EvalJob, Selection, Services, run
from agenteval.runner.executors.ray_executor import RERUN_WARNING, RETRIES
from agenteval.schema import Concurrency, EvalConfig, EvalSet, Run
from agenteval.schema.progress import CaseFinished, CaseStarted, JudgeCallDone
from agenteval.store import RunStore
from agenteval.store.journal import Journal
from tests.fake_server import FakeServer, Step, chat
from tests.helpers import call, eval_set, inv
from tests.runner.executors.test_progress_events import progress_by_case

AGENT = '''
import os, signal, threading, time
from pathlib import Path

HERE = Path(__file__).parent

def kill_once():
    """The first call of case 3 anywhere kills its worker process. The claim is atomic (a link
    fails when the name exists: two calls at once, on two workers, do not both kill theirs), and
    another call in the dying process never returns (it dies with it)."""
    pid = str(os.getpid())
    mine = HERE / f"killed.{pid}.{threading.get_ident()}"
    mine.write_text(pid)
    try:
        os.link(mine, HERE / "killed")
    except FileExistsError:
        if (HERE / "killed").read_text() != pid:
            return  # another process was killed: this call goes on
    else:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)

def root_agent(text):
    with open(HERE / "calls.log", "a") as log:
        log.write(f"{text} {os.getpid()}\\n")
    if text == "case 3" and (HERE / "kill").exists():
        kill_once()
    if text == "case 3" and (HERE / "always_kill").exists():
        os.kill(os.getpid(), signal.SIGKILL)  # ... every time
    parity = "even" if int(text.split()[-1]) % 2 == 0 else "odd"
    return {"response": f"answer to {text}, {parity}",
            "tool_calls": [{"name": "lookup", "args": {"q": text}}]}
'''

CASES = 8
pytest_plugins = ["pytester"]


def _project(tmp_path: Path) -> tuple[Path, Path]:
    agent = tmp_path / "ray_agent"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    s = eval_set("rayset", {f"c{i}": [inv(f"case {i}", f"answer to case {i}, even",
                                          [call("lookup", q=f"case {i}" if i != 5 else "other")])]
                            for i in range(CASES)})
    path = agent / "rayset.evalset.json"
    path.write_text(s.model_dump_json(exclude_none=True))
    return agent, path


def _judge_says(text: str) -> str:
    verdict = "invalid" if ", odd" in text else "valid"
    return json.dumps({"rationale": f"it is {verdict}", "verdict": verdict})


def _scores(done: Run) -> list[tuple[str, int, int, list[tuple[str, float | None]]]]:
    """Every case run's status and scores, but the seconds it took."""
    return [(c.eval_id, c.run_index, int(c.final_eval_status),
             [(m.metric_name, m.score) for m in c.overall_eval_metric_results
              if m.metric_name != "invocation_duration_v1"])
            for r in done.results for c in r.eval_case_results]


def test_ray_scores_what_the_local_executor_scores(ray_cluster: Any, tmp_path: Path,
                                                   server: FakeServer) -> None:
    server.respond = chat(_judge_says)  # the judge
    agent, path = _project(tmp_path)
    s = EvalSet.model_validate_json(path.read_text())
    config = EvalConfig(criteria={
        "tool_trajectory_avg_score": 1.0, "response_match_score": 0.5,
        "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {
            "judge_model": f"openai-compat:judge@{server.base_url}", "num_samples": 1}}})
    runs = {}
    plan = (("local", None), ("ray", None), ("ray cached", tmp_path), ("ray again", tmp_path))
    for executor, store in plan:
        events: list[object] = []
        job = EvalJob(config=config, concurrency=Concurrency(cases=4), agent=load_root_agent(agent),
                      agent_path=str(agent), selections=[Selection(path, s)], num_runs=2,
                      executor=executor.split()[0])
        services = Services.create({}, job.concurrency, store_root=store)  # the verdict cache there
        runs[executor] = (asyncio.run(run(job, services, events.append)), events)
    (local, local_events), (remote, remote_events) = runs["local"], runs["ray"]
    assert _scores(remote) == _scores(local)
    assert not [c.warnings for c in remote.results[0].eval_case_results if c.warnings]  # none died
    statuses = [c.final_eval_status for c in remote.results[0].summary]
    assert sum(s == 1 for s in statuses) == 4  # the even ones pass; the judge fails the odd ones
    assert remote.spec.totals == local.spec.totals.model_copy(
        update={"agent_seconds": remote.spec.totals.agent_seconds})
    assert remote.spec.totals.judge_calls == 2 * CASES == local.spec.totals.judge_calls
    # the workers' verdicts went to the driver's cache (two runs of a case may both miss it):
    # asked again, the judge is not called
    assert 0 < runs["ray cached"][0].spec.totals.judge_calls <= 2 * CASES
    again = runs["ray again"][0]
    assert _scores(again) == _scores(local) and again.spec.totals.judge_calls == 0
    assert all(r.cached for c in again.results[0].eval_case_results for r in c.judge_records)
    for events in (local_events, remote_events):
        assert sum(isinstance(e, CaseStarted) for e in events) == 2 * CASES
        assert sum(isinstance(e, CaseFinished) for e in events) == 2 * CASES
        assert sum(isinstance(e, JudgeCallDone) for e in events) == 2 * CASES
    # the same progress as the local executor's, each case run's before its end: its turn, then
    # its judge call planned and answered (1 of 1), from the workers through the driver's inbox
    assert progress_by_case(remote_events) == progress_by_case(local_events) == {
        (f"c{i}", r): [("turn", 1, 1), ("planned", 1), ("judge", 1, 1), ("finished",)]
        for i in range(CASES) for r in (0, 1)}
    # both workers took units
    pids = {line.split()[-1] for line in (agent / "calls.log").read_text().splitlines()[2 * CASES:4 * CASES]}
    assert len(pids) == 2
    case = remote.results[0].eval_case_results[0]
    assert case.trace is not None and case.judge_records and case.judge_records[0].verdict == "valid"


def test_a_worker_killed_mid_run_has_its_case_runs_run_again_and_each_kept_once(
        ray_cluster: Any, tmp_path: Path) -> None:
    agent, path = _project(tmp_path)
    (agent / "kill").touch()
    out = tmp_path / "out.json"
    r = CliRunner().invoke(cli, ["eval", str(agent), str(path), "--executor", "ray", "--parallelism", "4",
                                 "--num_runs", "2", "--output", str(out)])
    assert r.exit_code == 1, r.output  # c1, c3, c5, c7 fail on their merits
    assert (agent / "killed").exists()
    doc = json.loads(out.read_text())
    got = sorted((c["eval_id"], c["run_index"]) for c in doc["eval_case_results"])
    assert got == sorted((f"c{i}", k) for i in range(CASES) for k in range(2))
    assert not [c for c in doc["eval_case_results"] if c.get("error_message")]
    calls = [line.rsplit(" ", 1) for line in (agent / "calls.log").read_text().splitlines()]
    killed = (agent / "killed").read_text()  # the one process killed
    dead = [text for text, pid in calls if pid == killed]
    # Case 3 ran to its end twice, in processes that lived; the killed one called it once (the
    # call that killed it) or twice (case 3's other run was in flight there too: Ray runs a dead
    # worker's unfinished case runs again, however far they got).
    assert Counter(text for text, pid in calls if pid != killed)["case 3"] == 2
    assert dead.count("case 3") in (1, 2)
    # Every call's result was kept but those cut short by the kill: the case runs the killed
    # worker held (case 3's among them; at most 2, its share of the 4 in flight), run again.
    cut = len(calls) - 2 * CASES
    assert dead.count("case 3") <= cut <= 2, calls
    # Each case run the killed worker held says so (it said nothing: a result as clean as any,
    # though its agent was called twice); case 3's run that killed it among them.
    warned = [(c["eval_id"], c["run_index"]) for c in doc["eval_case_results"]
              if RERUN_WARNING in c.get("warnings", [])]
    assert any(eval_id == "c3" for eval_id, _ in warned) and cut <= len(warned) <= 4, warned
    assert Journal(agent).runs() == []  # finished and recorded: the journal keeps only unfinished runs
    (recorded,) = RunStore(agent).list_runs()
    assert recorded.run_group == doc["run"]["run_id"]


def test_a_case_run_that_keeps_killing_its_worker_fails_with_the_reason_and_the_run_goes_on(
        ray_cluster: Any, tmp_path: Path) -> None:
    agent, path = _project(tmp_path)
    (agent / "always_kill").touch()
    out = tmp_path / "out.json"
    r = CliRunner().invoke(cli, ["eval", str(agent), str(path), "--executor", "ray", "--parallelism", "2",
                                 "--output", str(out), "--no_history"])
    assert r.exit_code == 1, r.output
    cases = {c["eval_id"]: c for c in json.loads(out.read_text())["eval_case_results"]}
    assert sorted(cases) == sorted(f"c{i}" for i in range(CASES))
    assert cases["c3"]["error_message"].startswith("WorkerDied: the Ray worker running this case run died, "
                                                   f"and Ray gave up after running it again up to {RETRIES}")
    assert [k for k, c in cases.items() if c.get("error_message")] == ["c3"]
    calls = (agent / "calls.log").read_text().splitlines()
    assert len([c for c in calls if c.startswith("case 3 ")]) == RETRIES + 1


AGENT_ON_STUB = '''
from agenteval.agents import Agent

root_agent = Agent(name="stubbed", model="openai-compat:stub@{url}", instruction="Answer.")
'''


def test_calls_to_one_endpoint_stay_within_its_limit_across_workers(
        ray_cluster: Any, tmp_path: Path, server: FakeServer) -> None:
    answer = chat(lambda text: "an answer", delay=0.2)

    def respond(body: dict[str, Any]) -> Step:
        # Hold each call until 3 are in flight at once (or 30 s pass), so that a loaded machine,
        # slow to start the second worker, still shows the limit reached and never passed.
        deadline = time.monotonic() + 30
        while server.peak < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        return answer(body)

    server.respond = respond
    agent = tmp_path / "stub_agent"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT_ON_STUB.format(url=server.base_url))
    s = eval_set("stubset", {f"c{i}": [inv("hello", "an answer")] for i in range(8)})
    job = EvalJob(config=EvalConfig(criteria={"response_match_score": 0.5}),
                  concurrency=Concurrency(cases=8, model_calls={f"openai-compat:stub@{server.base_url}": 3}),
                  agent=load_root_agent(agent), agent_path=str(agent), selections=[Selection(None, s)],
                  executor="ray")
    done = asyncio.run(run(job, Services.for_job(job, {})))
    assert done.spec.totals.passed == 8 and len(server.received) == 8
    assert server.peak == 3  # 8 cases in flight on 2 workers, 3 calls at a time between them
    assert done.spec.concurrency.model_calls[f"openai-compat:stub@{server.base_url}"] == 3


DRIVER_KILLER = '''
import os, signal, time
from pathlib import Path

from agenteval.store.journal import Journal

HERE = Path(__file__).parent

def committed():
    """Case runs the driver's journal has committed (its other process's writes, read back)."""
    runs = Journal(HERE).runs()
    return runs[0].done if runs else 0

def root_agent(text):
    with open(HERE / "calls.log", "a") as log:
        log.write(text + "\\n")
    if text == "case 6" and not (HERE / "killed").exists():
        (HERE / "killed").touch()
        # The six case runs finished before this one are committed within FLUSH_SECONDS: wait
        # until they are (not for a fixed time, which a loaded machine can outlast), then kill.
        # A kill must not lose them. The bound is only there so a journal that never commits
        # fails the test (its `done == 6`) instead of hanging it.
        deadline = time.monotonic() + 60
        while committed() < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(int((HERE / "driver.pid").read_text()), signal.SIGKILL)  # the driver dies, once
    return {"response": "answer to " + text, "tool_calls": [{"name": "lookup", "args": {"q": text}}]}
'''


def test_a_killed_driver_is_resumed_without_redoing_finished_case_runs(ray_cluster: Any,
                                                                       tmp_path: Path) -> None:
    agent = tmp_path / "driver_agent"
    agent.mkdir()
    (agent / "agent.py").write_text(DRIVER_KILLER)
    s = eval_set("drv", {f"c{i}": [inv(f"case {i}", f"answer to case {i}", [call("lookup", q=f"case {i}")])]
                         for i in range(10)})
    path = agent / "drv.evalset.json"
    path.write_text(s.model_dump_json(exclude_none=True))
    address = ray_cluster.get_runtime_context().gcs_address  # drivers join the session's cluster
    argv = [sys.executable, "-m", "agenteval", "eval", str(agent), str(path), "--executor", "ray",
            "--ray_address", address, "--parallelism", "1"]
    driver = subprocess.Popen([*argv, "-o", str(tmp_path / "never.json")], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    (agent / "driver.pid").write_text(str(driver.pid))
    driver.communicate(timeout=120)
    assert driver.returncode == -signal.SIGKILL and not (tmp_path / "never.json").exists()
    (interrupted,) = Journal(agent).runs()
    assert interrupted.status == "interrupted" and interrupted.done == 6 and interrupted.total == 10
    before = len((agent / "calls.log").read_text().splitlines())

    out = tmp_path / "out.json"
    resumed = subprocess.run([*argv, "--resume", interrupted.run_id, "-o", str(out)], capture_output=True,
                             text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    again = (agent / "calls.log").read_text().splitlines()[before:]
    assert sorted(again) == ["case 6", "case 7", "case 8", "case 9"]  # no finished case run redone
    doc = json.loads(out.read_text())
    assert doc["run"]["run_id"] == interrupted.run_id
    assert sorted(c["eval_id"] for c in doc["eval_case_results"]) == sorted(f"c{i}" for i in range(10))
    assert Journal(agent).runs() == [] and len(RunStore(agent).documents(interrupted.run_id)) == 1


def _package(root: Path, name: str) -> Path:
    """A package `name` under `root` whose `agent` module holds the test agent."""
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("from . import agent as agent\n")
    (package / "agent.py").write_text(AGENT)
    return package


def test_agent_evaluator_runs_on_ray(ray_cluster: Any, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    package = _package(tmp_path, "ray_eval_agent")
    monkeypatch.syspath_prepend(str(tmp_path))
    s = eval_set("api", {f"c{i}": [inv(f"case {i}", f"answer to case {i}, even",
                                       [call("lookup", q=f"case {i}")])] for i in (0, 2)})
    result = asyncio.run(AgentEvaluator.evaluate_eval_set(
        "ray_eval_agent", s, criteria={"tool_trajectory_avg_score": 1.0}, num_runs=1,
        print_detailed_results=False, store_root=None, executor="ray"))
    assert [c.final_eval_status for c in result.eval_case_results] == [1, 1]
    assert result.run is not None and result.run.agent is not None and result.run.agent.path == str(package)
    assert len((package / "calls.log").read_text().splitlines()) == 2


def test_the_pytest_plugin_runs_on_ray(ray_cluster: Any, pytester: pytest.Pytester) -> None:
    package = _package(pytester.path, "plugin_agent")
    s = eval_set("pset", {"good": [inv("case 0", "answer to case 0, even", [call("lookup", q="case 0")])],
                          "bad": [inv("case 1", "answer to case 1, odd", [call("other")])]})
    (package / "pset.evalset.json").write_text(s.model_dump_json(exclude_none=True))
    (package / "test_config.json").write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0}}))
    result = pytester.runpytest("--agenteval", "--agenteval-executor", "ray")
    result.assert_outcomes(passed=1, failed=1)
    assert len((package / "calls.log").read_text().splitlines()) == 2


LOGGING_AGENT = '''
import logging, os
from pathlib import Path

def root_agent(text):
    (Path(__file__).parent / "pid").write_text(str(os.getpid()))
    try:
        raise ValueError("boom")
    except ValueError:  # google-adk logs a failing turn so, with its traceback, before raising it on
        logging.getLogger("google_adk.runners").exception("Error in turn")
    return {"response": "done"}
'''


def test_ray_workers_log_a_failing_adk_turn_as_the_driver_does(ray_cluster: Any, tmp_path: Path) -> None:
    # a worker's standard error is its log file (Ray forwards it to the driver's output): one line
    # for the turn, not google-adk's traceback, as the local and process executors write it
    agent = tmp_path / "logging_agent"
    agent.mkdir()
    (agent / "agent.py").write_text(LOGGING_AGENT)
    s = eval_set("logset", {"c0": [inv("hello", "done")]})
    job = EvalJob(config=EvalConfig(criteria={"response_match_score": 0.5}), concurrency=Concurrency(cases=1),
                  agent=load_root_agent(agent), agent_path=str(agent),
                  selections=[Selection(agent / "logset.evalset.json", s)], num_runs=1, executor="ray")
    asyncio.run(run(job, Services.create({}, job.concurrency, store_root=None), lambda _: None))
    pid = (agent / "pid").read_text()
    logs = Path(ray_cluster._private.worker._global_node.get_logs_dir_path())
    written = "".join(p.read_text() for p in logs.glob(f"worker-*-{pid}.err"))
    assert "Error in turn: ValueError: boom" in written
    assert "Traceback" not in written
