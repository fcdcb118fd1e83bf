"""What the Ray executor refuses, before anything runs: Ray missing (how to install it), an agent
that exists only as an object, an unknown executor, a cluster address nothing answers at."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.errors import AgentEvalError
from agenteval.runner import EvalJob, Selection, Services, run
from tests.helpers import eval_set, inv
from tests.runner.executors.test_ray_executor import _project


def test_an_agent_object_without_a_path_runs_only_locally(tmp_path: Path) -> None:
    job = EvalJob(agent=lambda text: "hi", selections=[Selection(None, eval_set("s", {"a": [inv("x")]}))],
                  executor="ray")
    with pytest.raises(AgentEvalError, match=r"the Ray executor \(on every worker\) loads the agent"):
        asyncio.run(run(job, Services.create({})))
    job.executor, job.ray_address = "local", "auto"
    with pytest.raises(AgentEvalError, match=r"Ray address \(auto\) is for the Ray executor: add --executor"):
        asyncio.run(run(job, Services.create({})))
    job.executor, job.ray_address = "spark", None
    with pytest.raises(AgentEvalError, match="unknown executor 'spark'; choose one of local, ray"):
        asyncio.run(run(job, Services.create({})))


def test_without_ray_the_flag_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, path = _project(tmp_path)
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray: ImportError
    r = CliRunner().invoke(cli, ["eval", str(agent), str(path), "--executor", "ray", "--no_history"])
    assert r.exit_code == 2
    assert "pip install 'agenteval[ray]'" in r.output
    assert not (agent / "calls.log").exists()


def test_a_cluster_address_nothing_answers_at_is_refused_at_once(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'agenteval[ray]')")
    agent, path = _project(tmp_path)
    r = CliRunner().invoke(cli, ["eval", str(agent), str(path), "--executor", "ray", "--ray_address",
                                 "127.0.0.1:1", "--no_history"])
    assert r.exit_code == 2
    assert "error: cannot use the Ray cluster at 127.0.0.1:1: " in r.output
    assert not (agent / "calls.log").exists()


@pytest.mark.parametrize(("flags", "message"), [
    (["--ray_address", "auto"], "is for the Ray executor"),
    (["--executor", "ray", "--isolation", "process"], "not with --executor ray"),
])
def test_an_executor_refusal_comes_first_and_alone(tmp_path: Path, flags: list[str], message: str) -> None:
    """The refusal is the command's only output: no "Using criteria" line before it."""
    agent, path = _project(tmp_path)
    r = CliRunner().invoke(cli, ["eval", str(agent), str(path), "--no_history", *flags])
    assert r.exit_code == 2 and message in r.output, r.output
    assert "Using criteria" not in r.output


def test_a_local_cluster_that_does_not_start_is_refused_with_rays_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # On a busy machine Ray raises a bare Exception: it went out as an internal error's traceback.
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'agenteval[ray]')")

    def init(**kwargs: object) -> None:
        raise Exception("The current node timed out during startup. This could happen because ...\nmore")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    agent, path = _project(tmp_path)
    r = CliRunner().invoke(cli, ["eval", str(agent), str(path), "--executor", "ray", "--no_history"])
    assert r.exit_code == 2, r.output
    assert "error: cannot use a local Ray cluster: The current node timed out during startup." in r.output
    assert "Traceback" not in r.output and "more" not in r.output
    assert not (agent / "calls.log").exists()

