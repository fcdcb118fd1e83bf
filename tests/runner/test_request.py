"""`RunRequest`: one model for what a run is asked to do, and the one rule for its config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval.errors import DataError
from agenteval.runner.request import RunRequest, request_config, to_job


def _set_with_config(tmp_path: Path) -> Path:
    s = tmp_path / "s.evalset.json"
    s.write_text('{"eval_set_id": "s", "eval_cases": []}')
    (tmp_path / "test_config.json").write_text(json.dumps({
        "criteria": {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"},
                     "response_match_score": 0.3},
        "endpoints": {"local": {"timeout": 5}}}))
    return s


def test_the_config_beside_the_set_then_the_request_over_it(tmp_path: Path) -> None:
    s = _set_with_config(tmp_path)
    config, source = request_config(RunRequest(eval_sets=[str(s)]), s)
    assert source == str(tmp_path / "test_config.json")
    assert config.criteria["response_match_score"] == 0.3
    # criteria replace the config's criteria only; the source says where they came from
    config, source = request_config(RunRequest(criteria={"response_match_score": 0.9}), s, "body")
    assert source == "body" and set(config.criteria) == {"response_match_score"}
    assert config.endpoints is not None and "local" in config.endpoints
    # num_samples alone keeps the file's criteria and source
    config, source = request_config(RunRequest(criteria={"final_response_match_v2": 0.5}, num_samples=3),
                                    s)
    assert config.criteria["final_response_match_v2"] == {
        "threshold": 0.5, "judge_model_options": {"num_samples": 3}}  # resolved by the registry later
    assert request_config(RunRequest(), None)[1] is None  # no file, nothing beside: the defaults


def test_bad_criteria_name_the_source_and_key(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"body: criteria.response_match_score"):
        request_config(RunRequest(criteria={"response_match_score": "high"}), None, "body")


def test_to_job_carries_every_field_and_checks_retry(tmp_path: Path) -> None:
    request = RunRequest(agent_path="a", eval_sets=["s.json"], num_runs=3, parallelism=2,
                         model_parallelism={"local": 1}, judge_model="local", escalate_judge_model="local",
                         judge_timeout=9, judge_attempts=2, case_timeout=4, isolation="process",
                         resume="latest", retry_errors=True, traces=False)
    config, source = request_config(request, None)
    job = to_job(request, config, source, command="api", app_name="a")
    assert (job.num_runs, job.concurrency.cases, job.concurrency.model_calls) == (3, 2, {"local": 1})
    assert (job.judge_timeout, job.judge_attempts, job.case_timeout, job.isolation) == (9, 2, 4, "process")
    assert (job.resume, job.retry_errors, job.traces, job.escalate_judge_model) == ("latest", True, False,
                                                                                    "local")
    with pytest.raises(DataError, match="retry_errors: needs resume"):
        to_job(RunRequest(retry_errors=True), config, source, command="api")


def test_a_request_is_data() -> None:
    request = RunRequest(agent_path="a", eval_sets=["s.json:x,y"], num_runs=2)
    assert RunRequest.model_validate_json(request.model_dump_json()) == request
    with pytest.raises(ValueError, match="extra"):
        RunRequest.model_validate({"eval_sets": [], "num_run": 2})
    schema = RunRequest.model_json_schema()
    assert schema["properties"]["case_timeout"]["description"]  # documented field by field


def test_metrics_are_resolved_once_per_config(monkeypatch: pytest.MonkeyPatch) -> None:
    import agenteval.runner.job as job_module

    calls: list[object] = []
    real = job_module.resolve_metrics

    def counting(*args: object) -> object:
        calls.append(args)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(job_module, "resolve_metrics", counting)
    job = to_job(RunRequest(), *request_config(RunRequest(), None), command="api")
    first = job.metrics()
    assert [m.name for m in job.metrics()] == [m.name for m in first] and len(calls) == 1
    job.config = job.config.model_copy(update={"criteria": {"response_match_score": 0.5}})
    assert [m.name for m in job.metrics() if not m.spec.informational] == ["response_match_score"]
    assert len(calls) == 2  # a new config is resolved again


def test_strict_tool_mocking_with_no_tool_mocked_is_refused_naming_where_it_was_set(tmp_path: Path) -> None:
    """Strict with every tool live refused nothing: the run looked hermetic and ran every tool."""
    with pytest.raises(DataError, match=r"^mock_tools_strict: .*no tool is answered from the eval set"):
        request_config(RunRequest(mock_tools_strict=True), None)
    with pytest.raises(DataError, match=r"^mock_tools_strict: "):
        request_config(RunRequest(mock_tools="live", mock_tools_strict=True), None)
    s = _set_with_config(tmp_path)
    config = tmp_path / "test_config.json"
    config.write_text(json.dumps({"mock_tools": {"*": "live"}, "mock_tools_strict": True}))
    with pytest.raises(DataError, match=rf"^{config}: mock_tools_strict: "):
        request_config(RunRequest(), s)
    # a tool in expected mode, from the file or the request, makes strict mean something
    assert request_config(RunRequest(mock_tools="expected"), s)[0].mock_tools_strict
    config.write_text(json.dumps({"mock_tools": {"get_time": "expected"}, "mock_tools_strict": True}))
    assert request_config(RunRequest(), s)[0].mock_tools_strict
    # the request's own modes, all live, over the config's strict: this run runs live
    assert request_config(RunRequest(mock_tools="live"), s)[0].mock_tools == "live"
    assert not request_config(RunRequest(mock_tools_strict=False), None)[0].mock_tools_strict
