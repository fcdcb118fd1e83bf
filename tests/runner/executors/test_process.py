"""Process isolation (`--isolation process`): a case run that holds the interpreter in one C call
is killed at its limit and recorded with the timeout error while the run goes on; workers are
reused from case to case and replaced after a kill; a worker that dies fails only its case."""

from __future__ import annotations

import asyncio
import json
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.errors import AgentEvalError
from agenteval.runner import EvalJob, Selection, Services, run
from agenteval.runner.executors.pick import executor_for
from agenteval.runner.executors.process import ProcessExecutor
from agenteval.runner.plan import prepare
from agenteval.schema import EvalConfig
from tests.helpers import eval_set, inv

AGENT = '''
import ctypes, multiprocessing, os, re
from pathlib import Path

HERE = Path(__file__).parent

def root_agent(text):
    with open(HERE / "pids.log", "a") as log:
        worker = multiprocessing.parent_process() is not None  # a spawned worker process
        log.write(f"{text} {os.getpid()} {worker}\\n")
    if text == "regex":
        # catastrophic backtracking: one C call that holds the GIL for a long time (~30 s here)
        re.match(r"(a+)+$", "a" * 30 + "b")
        (HERE / "regex_done").touch()  # never, when the worker is killed at the case's limit
    if text == "exit":
        os._exit(3)
    if text == "segv":
        ctypes.string_at(0)
    return "answer to " + text
'''


def _project(tmp_path: Path, cases: dict[str, list[str]]) -> tuple[Path, Path]:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    s = eval_set("iso", {eid: [inv(t, f"answer to {t}") for t in turns] for eid, turns in cases.items()})
    path = tmp_path / "iso.evalset.json"
    path.write_text(s.model_dump_json(exclude_none=True))
    return agent, path


def _eval(agent: Path, path: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """The run, and the CPU seconds it and its workers used (load does not stretch them as it
    does wall time: a killed worker's are counted once it is reaped)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([sys.executable, "-m", "agenteval", "eval", str(agent), str(path),
                        "--no_history", *extra], capture_output=True, text=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _cases(out: Path) -> dict[str, dict[str, Any]]:
    return {c["eval_id"]: c for c in json.loads(out.read_text())["eval_case_results"]}


def _pids(tmp_path: Path) -> dict[str, str]:
    """The process each turn ran in, by its text (every one a worker process)."""
    lines = [line.split() for line in (tmp_path / "pids.log").read_text().splitlines()]
    assert all(worker == "True" for _, _, worker in lines)
    return {text: pid for text, pid, _ in lines}


def test_a_case_holding_the_gil_is_killed_at_its_limit_and_the_run_goes_on(tmp_path: Path) -> None:
    agent, path = _project(tmp_path, {"a": ["a"], "b": ["b"], "stuck": ["hello", "regex"], "c": ["c"]})
    out = tmp_path / "out.json"
    r, cpu = _eval(agent, path, "--case_timeout", "2", "--isolation", "process", "--parallelism", "1",
                   "-o", str(out))
    assert not (tmp_path / "regex_done").exists()  # killed in the middle of the regex (~30 s alone)
    # ... and not long after its limit: a bound on a hung run, not a speed claim, in CPU seconds
    # (the regex alone takes ~30; start-up, five cases and two workers ~6 when unloaded): a
    # bound of 60 s of wall time failed on cores shared with other suites.
    assert cpu < 20, cpu
    assert r.returncode == 1, r.stderr
    cases = _cases(out)
    stuck = cases["stuck"]
    assert stuck["final_eval_status"] == 2
    assert stuck["error_message"] == ("TimeoutError: the case took longer than 2 s (case timeout); "
                                      "1 turn finished before are kept")
    assert len(stuck["eval_metric_result_per_invocation"]) == 1  # the turn streamed back before the kill
    assert [cases[e]["final_eval_status"] for e in "abc"] == [1, 1, 1]
    pids = _pids(tmp_path)
    assert pids["a"] == pids["b"] == pids["hello"] == pids["regex"]  # one worker, reused
    assert pids["c"] != pids["regex"]  # the killed worker was replaced
    # the worker's spans come back under the case span, judged/scored here
    spans = cases["a"]["trace"]["spans"]
    (case_span,) = [s for s in spans if s["parent_id"] is None]
    assert {s["name"] for s in spans if s["parent_id"] == case_span["span_id"]} == {"invocation 0", "scoring"}


def test_a_worker_that_dies_fails_only_its_case(tmp_path: Path) -> None:
    agent, path = _project(tmp_path, {"a": ["a"], "exits": ["hello", "exit"], "crashes": ["segv"],
                                      "b": ["b"]})
    out = tmp_path / "out.json"
    r, _ = _eval(agent, path, "--isolation", "process", "--parallelism", "2", "-o", str(out))
    assert r.returncode == 1, r.stderr
    cases = _cases(out)
    assert cases["exits"]["error_message"] == (
        "WorkerDied: the worker process running this case run (--isolation process) exited with code 3; "
        "1 turn finished before are kept")
    assert cases["crashes"]["error_message"].startswith(
        "WorkerDied: the worker process running this case run (--isolation process) was killed by "
        "signal SIGSEGV")
    assert [cases[e]["final_eval_status"] for e in ("a", "exits", "crashes", "b")] == [1, 2, 2, 1]


def test_the_config_asks_for_isolation_too(tmp_path: Path) -> None:
    agent, path = _project(tmp_path, {"a": ["a"]})
    config = tmp_path / "cfg.json"
    config.write_text(json.dumps({"criteria": {"response_match_score": 0.8}, "isolation": "process"}))
    out = tmp_path / "out.json"
    r, _ = _eval(agent, path, "--config_file_path", str(config), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert list(_pids(tmp_path)) == ["a"]  # run in a worker process
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"isolation": "thread"}))
    refused, _ = _eval(agent, path, "--config_file_path", str(bad))
    assert refused.returncode == 2 and "isolation" in refused.stderr + refused.stdout


def test_process_isolation_needs_the_agent_path_and_the_local_executor() -> None:
    selection = [Selection(None, eval_set("s", {"a": [inv("x")]}))]
    job = EvalJob(agent=lambda text: "hi", selections=selection, isolation="process")
    with pytest.raises(AgentEvalError, match=r"--isolation process \(a worker .*\) loads the agent"):
        asyncio.run(run(job, Services.create({})))
    services = Services.create({})
    judge = JudgeService(services.models.get)
    job = EvalJob(agent_path="agent.py", selections=selection, isolation="process", executor="ray")
    with pytest.raises(AgentEvalError, match="not with --executor ray"):
        executor_for(job, prepare(job, services), services, judge)
    job = EvalJob(agent_path="agent.py", selections=selection, config=EvalConfig(isolation="process"))
    assert isinstance(executor_for(job, prepare(job, services), services, judge), ProcessExecutor)
