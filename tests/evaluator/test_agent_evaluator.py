import asyncio
import json
import sys
from pathlib import Path

import pytest

from agenteval import AgentEvaluator, EvaluationFailed
from agenteval.errors import DataError
from tests.fake_server import FakeServer, Step
from tests.helpers import call, eval_set, inv

AGENT = '''
def root_agent(text, state):
    return {"response": "ok", "tool_calls": [{"name": "f", "args": {"q": text}}]}
'''


@pytest.fixture
def agent_pkg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    pkg = tmp_path / "evalpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from . import agent\n")
    (pkg / "agent.py").write_text(AGENT)
    tests = pkg / "evals" / "nested"
    tests.mkdir(parents=True)
    (tests / "good.test.json").write_text(
        '[{"query": "a", "expected_tool_use": [{"tool_name": "f", "tool_input": {"q": "a"}}], '
        '"reference": "ok"}]')
    (tests / "test_config.json").write_text('{"criteria": {"tool_trajectory_avg_score": 1.0}}')
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    yield "evalpkg"
    sys.modules.pop("evalpkg", None)
    sys.modules.pop("evalpkg.agent", None)


def test_evaluate_directory_passes_and_records_history(agent_pkg: str, tmp_path: Path) -> None:
    results = asyncio.run(AgentEvaluator.evaluate(agent_pkg, tmp_path / "evalpkg" / "evals",
                                                  print_detailed_results=False))
    assert len(results) == 1 and len(results[0].eval_case_results) == 2  # num_runs=2 by default
    assert list((tmp_path / ".agenteval" / "eval_history").glob("*.json"))
    from agenteval.store import RunStore

    header = RunStore(tmp_path).header("latest")
    assert header is not None and header.command == "AgentEvaluator" and header.num_runs == 2
    assert header.agent is not None and (header.agent.path, header.agent.kind) == ("evalpkg", "callable")
    assert results[0].run == header


def test_failures_are_listed_in_one_error(agent_pkg: str) -> None:
    s = eval_set("s", {"c1": [inv("a", calls=[call("f", q="zzz")])], "c2": [inv("b", calls=[call("g")])]})
    with pytest.raises(EvaluationFailed) as err:
        asyncio.run(AgentEvaluator.evaluate_eval_set(
            agent_pkg, s, criteria={"tool_trajectory_avg_score": 1.0}, num_runs=1,
            print_detailed_results=False))
    message = str(err.value)
    assert "s/c1: tool_trajectory_avg_score expected >= 1.0, got 0" in message
    assert "s/c2: tool_trajectory_avg_score" in message
    assert isinstance(err.value, AssertionError)


def test_a_package_that_does_not_import_its_agent_says_how(agent_pkg: str, tmp_path: Path) -> None:
    (tmp_path / "evalpkg" / "__init__.py").write_text("")
    s = eval_set("s", {"c1": [inv("a")]})
    with pytest.raises(DataError, match=r"has no root_agent \(nor agent.root_agent\); its agent.py is not "
                       r"imported: add `from \. import agent` to its __init__.py"):
        asyncio.run(AgentEvaluator.evaluate_eval_set(agent_pkg, s, num_runs=1, print_detailed_results=False))


def test_empty_directory_is_an_error(tmp_path: Path, agent_pkg: str) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match=r"no \*.test.json"):
        asyncio.run(AgentEvaluator.evaluate(agent_pkg, tmp_path / "empty"))


def test_the_configs_endpoint_settings_are_in_force(agent_pkg: str, tmp_path: Path,
                                                    server: FakeServer) -> None:
    # A judge that never answers gives up after the config's timeout × attempts, and the run
    # header records those settings as they were applied.
    server.steps = [Step(delay=30)]
    url = f"openai-compat:m@{server.base_url}"
    (tmp_path / "evalpkg" / "evals" / "nested" / "test_config.json").write_text(json.dumps({
        "criteria": {"final_response_match_v2": {"threshold": 0.5, "judge_model_options": {
            "judge_model": url, "num_samples": 1}}},
        "endpoints": {url: {"timeout": 0.3, "attempts": 2}}}))
    with pytest.raises(EvaluationFailed) as failed:
        asyncio.run(AgentEvaluator.evaluate(agent_pkg, tmp_path / "evalpkg" / "evals", num_runs=1,
                                            print_detailed_results=False))
    assert "within 0.3 s" in str(failed.value)
    assert len(server.received) == 2  # one case, one sample, attempts: 2
    header = failed.value.results[0].run
    assert header is not None and header.endpoints[url].timeout == 0.3
    assert header.endpoints[url].attempts == 2


def test_a_failure_line_gives_adks_pooled_score_where_it_differs_from_the_runs_mean() -> None:
    # Runs of 1 and 3 invocations scoring 0 and 1, 1, 1: the runs' mean (which the verdict
    # holds to the threshold) is 0.5; ADK's AgentEvaluator pools the 4 invocations: 0.75.
    from agenteval.evaluator import failure_lines
    from tests.result_builders import case, result

    first, second = case("c", {"m": 0.0}), case("c", {"m": 1.0}, run_index=1)
    second.eval_metric_result_per_invocation *= 3
    doc = result([first, second], gating="all_runs")
    (line,) = failure_lines([doc])
    assert line == ("s/c: m expected >= 0.5, got 0.5 (mean of 2 runs); pooled over the runs' "
                    "invocations, as ADK reports it: 0.75")
    same = result([case("d", {"m": 0.0}), case("d", {"m": 0.5}, run_index=1)])
    assert failure_lines([same]) == ["s/d: m expected >= 0.5, got 0.25 (mean of 2 runs)"]
