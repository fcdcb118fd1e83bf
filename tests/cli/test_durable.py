"""Durable runs: a killed `agenteval eval` is listed as interrupted and `--resume` finishes it,
running only what is missing; `--retry_errors`; `--case_timeout`."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.store.journal import Journal
from tests.helpers import call, eval_set, inv

AGENT = '''
import os, signal, time
from pathlib import Path

HERE = Path(__file__).parent

def root_agent(text, state):
    with open(HERE / "calls.log", "a") as log:
        log.write(text + "\\n")
    if text == "case 6" and (HERE / "kill").exists():
        os.kill(os.getpid(), signal.SIGKILL)  # as if the machine went away mid-run
    if text == "case 3" and (HERE / "fail").exists():
        raise RuntimeError("flaky backend")
    if text == "case 2" and (HERE / "hang").exists():
        time.sleep(30)
    return {"response": "answer to " + text, "tool_calls": [{"name": "lookup", "args": {"q": text}}]}
'''


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    agent = tmp_path / "dur_agent"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    s = eval_set("dur", {f"c{i}": [inv(f"case {i}", f"answer to case {i}", [call("lookup", q=f"case {i}")])]
                         for i in range(10)})
    path = agent / "dur.evalset.json"
    path.write_text(s.model_dump_json(exclude_none=True))
    return agent, path


def _eval(agent: Path, path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agenteval", "eval", str(agent), str(path),
                           "--parallelism", "1", *extra], capture_output=True, text=True, timeout=120)


def _calls(agent: Path) -> list[str]:
    log = agent / "calls.log"
    return log.read_text().split("\n")[:-1] if log.exists() else []


def _scores(doc: dict) -> list[tuple[str, int, list[float]]]:  # type: ignore[type-arg]
    return [(c["eval_id"], c["final_eval_status"], [m["score"] for m in c["overall_eval_metric_results"]
                                                     if m["metric_name"] in ("tool_trajectory_avg_score",
                                                                             "response_match_score")])
            for c in doc["eval_case_results"]]


def test_a_killed_run_is_listed_and_resumed_without_redoing_finished_cases(project: tuple[Path, Path],
                                                                           tmp_path: Path) -> None:
    agent, path = project
    (agent / "kill").touch()
    killed = _eval(agent, path, "-o", str(tmp_path / "never.json"))
    assert killed.returncode == -9 and not (tmp_path / "never.json").exists()
    assert _calls(agent) == [f"case {i}" for i in range(7)]
    (run,) = Journal(agent).runs()
    assert (run.status, run.done, run.total) == ("interrupted", 6, 10)
    listing = CliRunner().invoke(cli, ["runs", "--root", str(agent)], env={"COLUMNS": "200"})
    assert "Unfinished runs" in listing.output and run.run_id in listing.output and "6/10" in listing.output
    shown = CliRunner().invoke(cli, ["runs", "--root", str(agent), "show", run.run_id],
                               env={"COLUMNS": "200"})
    assert "interrupted, 6 of 10 case runs finished" in shown.output and "--resume" in shown.output

    (agent / "kill").unlink()
    (agent / "calls.log").unlink()
    out = tmp_path / "resumed.json"
    resumed = _eval(agent, path, "--resume", run.run_id[:12], "-o", str(out))
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert _calls(agent) == [f"case {i}" for i in range(6, 10)]  # no finished case redone
    doc = json.loads(out.read_text())
    assert doc["run"]["run_id"] == run.run_id
    (agent / "calls.log").unlink()
    whole = tmp_path / "whole.json"
    assert _eval(agent, path, "-o", str(whole), "--no_history").returncode == 0
    assert _scores(doc) == _scores(json.loads(whole.read_text()))  # as if never interrupted
    assert Journal(agent).get(run.run_id).status == "finished"


def test_resume_refuses_a_changed_eval_set(project: tuple[Path, Path]) -> None:
    agent, path = project
    (agent / "kill").touch()
    _eval(agent, path)
    (run,) = Journal(agent).runs()
    (agent / "kill").unlink()
    s = json.loads(path.read_text())
    s["eval_cases"] = s["eval_cases"][:5]
    path.write_text(json.dumps(s))
    refused = _eval(agent, path, "--resume", run.run_id)
    assert refused.returncode == 2 and "eval sets, selected cases, config or number of runs changed" in \
        refused.stderr


def test_retry_errors_runs_again_only_what_failed(project: tuple[Path, Path], tmp_path: Path) -> None:
    agent, path = project
    (agent / "fail").touch()
    first = _eval(agent, path)
    assert first.returncode == 1
    (run,) = Journal(agent).runs()
    assert run.errors == 1
    (agent / "fail").unlink()
    (agent / "calls.log").unlink()
    out = tmp_path / "retried.json"
    again = _eval(agent, path, "--retry_errors", run.run_id, "-o", str(out))
    assert again.returncode == 0, again.stdout
    assert _calls(agent) == ["case 3"]
    assert all(c["final_eval_status"] == 1 for c in json.loads(out.read_text())["eval_case_results"])


def test_a_hung_case_times_out_and_the_run_goes_on(project: tuple[Path, Path], tmp_path: Path) -> None:
    agent, path = project
    (agent / "hang").touch()
    out = tmp_path / "r.json"
    started = time.monotonic()
    r = _eval(agent, path, "--case_timeout", "0.5", "-o", str(out), "--no_history")
    assert time.monotonic() - started < 25  # not the 30 s the agent sleeps
    assert r.returncode == 1
    cases = {c["eval_id"]: c for c in json.loads(out.read_text())["eval_case_results"]}
    assert "TimeoutError: the case took longer than 0.5 s" in cases["c2"]["error_message"]
    assert sum(c["final_eval_status"] == 1 for c in cases.values()) == 9


def test_what_a_kill_leaves_behind_is_tidied(project: tuple[Path, Path]) -> None:
    agent, path = project
    assert _eval(agent, path).returncode == 0
    history = agent / ".agenteval" / "eval_history"
    (doc,) = history.glob("*.json")
    orphan = history / "orphan_run.evalset_result.json"  # written, then killed before recording
    old_id = json.loads(doc.read_text())["eval_set_result_id"]
    orphan.write_text(doc.read_text().replace(old_id, "orphan_run"))
    dead = history / ".x.evalset_result.json.999999.abc123.tmp"  # a writer killed mid-write
    dead.write_text("half a document")
    live = history / f".y.evalset_result.json.{os.getpid()}.abc123.tmp"  # one being written now
    live.write_text("being written")
    assert _eval(agent, path).returncode == 0
    assert not dead.exists() and live.exists()
    listing = CliRunner().invoke(cli, ["runs", "--root", str(agent)], env={"COLUMNS": "200"})
    assert "orphan_run" in listing.output


def test_two_processes_share_one_store(project: tuple[Path, Path]) -> None:
    agent, path = project
    procs = [subprocess.Popen([sys.executable, "-m", "agenteval", "eval", str(agent), str(path)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert len(Journal(agent).runs()) == 2 and all(r.status == "finished" for r in Journal(agent).runs())
    listing = CliRunner().invoke(cli, ["runs", "--root", str(agent)], env={"COLUMNS": "200"})
    assert listing.output.count("dur_agent_dur_") == 2
