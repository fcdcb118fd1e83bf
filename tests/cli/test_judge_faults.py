"""A judge server that fails: each failure is kept in its case with its cause and a judge record,
the run goes on, and a dead endpoint is given up on instead of being waited for again and again.

The judge is a real HTTP server on 127.0.0.1 (`tests/fake_server.py`) scripted to fail."""

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from tests.fake_server import FakeServer, Step
from tests.helpers import eval_set, inv

HTML_502 = b"<html><head><title>502 Bad Gateway</title></head><body><h1>nginx</h1></body></html>"


def _score(tmp_path: Path, judge_url: str, *extra: str, cases: int = 1) -> tuple[int, dict[str, Any], str]:
    ids = {f"c{i}": [inv("capital of France?", "Paris")] for i in range(cases)}
    expected = tmp_path / "e.evalset.json"
    expected.write_text(eval_set("s", ids).model_dump_json(exclude_none=True))
    config = tmp_path / "cfg.json"
    config.write_text(json.dumps({"criteria": {"final_response_match_v2": {
        "threshold": 0.5, "judge_model_options": {"judge_model": f"openai-compat:m@{judge_url}",
                                                  "num_samples": 1}}}}))
    out = tmp_path / "out.json"
    r = CliRunner().invoke(cli, ["score", str(expected), "--actual", str(expected), "--config_file_path",
                                 str(config), "-o", str(out), "--no_cache", *extra],
                           env={"COLUMNS": "200"})
    assert out.is_file(), r.output
    return r.exit_code, json.loads(out.read_text()), r.output


@pytest.mark.parametrize(("step", "cause"), [
    (Step(500, {"error": {"message": "internal error"}}), "HTTP 500 from {url}/chat/completions: "
                                                          "internal error (after 2 attempts)"),
    (Step(429, {"error": {"message": "slow down"}}), "HTTP 429 from {url}/chat/completions: slow down"),
    (Step(401, {"error": {"message": "invalid api key"}}), "HTTP 401 from {url}/chat/completions: "
                                                           "invalid api key"),
    (Step(502, HTML_502, {"content-type": "text/html"}), "HTTP 502 from {url}/chat/completions: "
                                                         "502 Bad Gateway"),
    (Step(200, b"hello, not json", {"content-type": "text/plain"}), "is not JSON: 'hello, not json'"),
    (Step(200, {"choices": []}), "has no choices"),
    (Step(200, {"error": {"message": "model not loaded"}}), "answered HTTP 200 with an error: "
                                                            "model not loaded"),
    (Step(drop=True), "the connection to {url}/chat/completions was dropped"),
    (Step(delay=1.5), "no reply from {url}/chat/completions within 0.3 s"),
], ids=["500", "429", "401", "502-html", "not-json", "no-choices", "error-200", "dropped", "hang"])
def test_a_judge_failure_is_kept_with_its_cause(server: FakeServer, tmp_path: Path, step: Step,
                                                cause: str) -> None:
    server.steps = [step]
    code, doc, output = _score(tmp_path, server.base_url, "--judge_timeout", "0.3", "--judge_attempts", "2")
    assert code == 1, output
    want = cause.format(url=server.base_url)
    (case,) = doc["eval_case_results"]
    (error,) = case["metric_errors"]
    assert error["metric_name"] == "final_response_match_v2"
    assert want in error["message"] and f"judge openai-compat:m@{server.base_url}" in error["message"]
    assert "TaskGroup" not in error["message"] and "ExceptionGroup" not in error["message"]
    (record,) = case["judge_records"]  # the attempt is on record: its question and what went wrong
    assert want in record["error"] and "Paris" in record["prompt"] and record["verdict"] is None
    assert "TaskGroup" not in output


def test_a_refused_connection_is_named(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    code, doc, _ = _score(tmp_path, url, "--judge_attempts", "1")
    assert code == 1
    assert f"cannot connect to {url}/chat/completions" in doc["eval_case_results"][0]["metric_errors"][0][
        "message"]


def test_a_dead_judge_is_given_up_on_after_three_failures(server: FakeServer, tmp_path: Path) -> None:
    server.steps = [Step(500, {"error": {"message": "down"}})]
    code, doc, _ = _score(tmp_path, server.base_url, "--judge_attempts", "1", "--parallelism", "1", cases=6)
    assert code == 1 and len(server.received) == 3  # three calls, then no more waiting on it
    messages = [c["metric_errors"][0]["message"] for c in doc["eval_case_results"]]
    assert all("HTTP 500" in m for m in messages[:3])
    assert all("not asked: the last 3 calls to" in m and "HTTP 500" in m for m in messages[3:])
    assert doc["run"]["endpoints"] == {f"openai-compat:m@{server.base_url}": {
        "timeout": 60.0, "attempts": 1, "give_up_after": 3, "requests_per_minute": None,
        "tokens_per_minute": None, "deterministic": False}}


def test_judge_settings_are_validated(tmp_path: Path) -> None:
    for flag, value in (("--judge_timeout", "0"), ("--judge_attempts", "0"), ("--judge_timeout", "x")):
        r = CliRunner().invoke(cli, ["score", "e.json", "--actual", "a.json", flag, value])
        assert r.exit_code == 2 and flag in r.output


def test_endpoint_settings_in_the_config(server: FakeServer, tmp_path: Path) -> None:
    server.steps = [Step(delay=1.5)]
    url = f"openai-compat:m@{server.base_url}"
    expected = tmp_path / "e.evalset.json"
    expected.write_text(eval_set("s", {"c": [inv("capital of France?", "Paris")]}).model_dump_json(
        exclude_none=True))
    config = tmp_path / "cfg.json"
    config.write_text(json.dumps({
        "criteria": {"final_response_match_v2": {"threshold": 0.5, "judge_model_options": {
            "judge_model": url, "num_samples": 1}}},
        "endpoints": {url: {"timeout": 0.2, "attempts": 1, "max_concurrency": 2}}}))
    out = tmp_path / "out.json"
    r = CliRunner().invoke(cli, ["score", str(expected), "--actual", str(expected), "--config_file_path",
                                 str(config), "-o", str(out), "--no_cache"])
    assert r.exit_code == 1, r.output
    doc = json.loads(out.read_text())
    assert "within 0.2 s" in doc["eval_case_results"][0]["metric_errors"][0]["message"]
    assert doc["run"]["endpoints"][url] == {"timeout": 0.2, "attempts": 1, "give_up_after": 3,
                                            "requests_per_minute": None, "tokens_per_minute": None,
                                            "deterministic": False}
    assert doc["run"]["concurrency"]["model_calls"] == {url: 2}


@pytest.mark.parametrize(("endpoints", "message"), [
    ({"bogus:x": {"timeout": 1}}, "cfg.json: endpoints.bogus:x: unknown model 'bogus:x'"),
    ({"local": {"timeout": "1"}}, "cfg.json: endpoints.local.timeout: Input should be a valid number"),
    ({"local": {"attempts": 0}}, "cfg.json: endpoints.local.attempts: Input should be greater than or equal"),
    ({"local": {"retries": 2}}, "cfg.json: endpoints.local.retries: unknown key"),
])
def test_bad_endpoint_settings_name_the_file_and_key(tmp_path: Path, endpoints: dict[str, Any],
                                                     message: str) -> None:
    expected = tmp_path / "e.evalset.json"
    expected.write_text(eval_set("s", {"c": [inv("q", "a")]}).model_dump_json(exclude_none=True))
    config = tmp_path / "cfg.json"
    config.write_text(json.dumps({"criteria": {"response_match_score": 0.5}, "endpoints": endpoints}))
    r = CliRunner().invoke(cli, ["score", str(expected), "--actual", str(expected), "--config_file_path",
                                 str(config), "-o", str(tmp_path / "o.json")])
    assert r.exit_code == 2, r.output
    assert message.replace("cfg.json", str(config)) in r.output
    assert not (tmp_path / "o.json").exists()
