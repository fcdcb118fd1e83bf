"""`RunPlan`: a run resolved once (metrics, endpoints, timeout, simulator), checked once, frozen."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from agenteval.errors import DataError
from agenteval.runner import EvalJob, RunPlan, Selection, Services, prepare, run
from agenteval.runner import plan as plan_module
from agenteval.schema import EvalConfig
from tests.helpers import eval_set, inv


def _job(**config: Any) -> EvalJob:
    return EvalJob(config=EvalConfig.model_validate(config), agent=lambda text: "hi there",
                   selections=[Selection(None, eval_set("s", {"a": [inv("hi", "hi there")]}))],
                   case_timeout=7, num_runs=2)


def test_prepare_resolves_everything_once_into_a_frozen_picklable_plan() -> None:
    job = _job(criteria={"response_match_score": 0.5}, endpoints={"local": {"timeout": 3}},
               user_simulator_config={"model": "local"}, inner_tool_calls="exclude")
    plan = prepare(job, Services.create({}))
    assert [m.name for m in plan.metrics if not m.spec.informational] == ["response_match_score"]
    assert (plan.num_runs, plan.case_timeout, plan.inner_tool_calls) == (2, 7, "exclude")
    assert plan.simulator is not None and plan.simulator.model == "local"
    assert plan.endpoint_settings()["local"].timeout == 3
    plan.endpoint_settings()["local"] = plan.endpoint_settings()["local"].model_copy(update={"timeout": 1})
    assert plan.endpoint_settings()["local"].timeout == 3  # a step's copy never changes the plan
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.num_runs = 5  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(plan)).describe() == plan.describe()
    described = json.loads(json.dumps(plan.describe()))
    assert described["criteria"]["response_match_score"]["threshold"] == 0.5
    assert described["case_timeout"] == 7


def test_a_bad_judge_fails_in_prepare_naming_the_config_key() -> None:
    job = _job(criteria={"final_response_match_v2": {"threshold": 0.5,
                                                     "judge_model_options": {"judge_model": "nope:x"}}})
    job.config_source = "cfg.json"
    with pytest.raises(DataError, match=r"cfg.json: criteria.final_response_match_v2.judge_model_options"):
        prepare(job, Services.create({}))


def test_run_with_a_plan_checks_judges_once_and_obeys_the_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = plan_module.check_judges

    def counted(*args: Any) -> None:
        calls.append(1)
        real(*args)

    monkeypatch.setattr(plan_module, "check_judges", counted)
    job = _job(criteria={"response_match_score": 0.5})
    services = Services.create({})
    plan = prepare(job, services)
    # The plan, not the job, is what the run follows: one run per case, whatever the job says.
    result = asyncio.run(run(job, services, None, dataclasses.replace(plan, num_runs=1)))
    assert calls == [1]
    assert result.spec.num_runs == 1 and len(result.results[0].eval_case_results) == 1


def test_eval_checks_judges_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from agenteval.cli.main import cli

    calls: list[int] = []
    real = plan_module.check_judges

    def counted(*args: Any) -> None:
        calls.append(1)
        real(*args)

    monkeypatch.setattr(plan_module, "check_judges", counted)
    (tmp_path / "agent.py").write_text("def root_agent(text):\n    return 'hi there'\n")
    s = tmp_path / "s.evalset.json"
    s.write_text(json.dumps(eval_set("s", {"a": [inv("hi", "hi there")]}).model_dump(mode="json")))
    out = CliRunner().invoke(cli, ["eval", str(tmp_path / "agent.py"), str(s), "--no_history"])
    assert out.exit_code == 0, out.output
    assert calls == [1]


def test_run_plan_is_exported_as_a_type() -> None:
    assert isinstance(prepare(_job(), Services.create({})), RunPlan)
