"""A run's `mock_tools` settings: the argument matching they take from the trajectory criteria,
the request laid over the config, and the plan that carries them to worker processes."""

from __future__ import annotations

import pickle
from typing import Any

from agenteval.criteria import default_registry
from agenteval.runner import EvalJob, Selection, Services, prepare
from agenteval.runner.mocking import CriterionArgs, call_equality, tool_mocking
from agenteval.runner.request import RunRequest, request_config
from agenteval.schema import EvalConfig, FunctionCall
from tests.helpers import eval_set, inv


def _metrics(criteria: dict[str, Any]) -> list[Any]:
    return default_registry().resolve(EvalConfig.model_validate({"criteria": criteria}))


def _call(**args: Any) -> FunctionCall:
    return FunctionCall(name="search", args=args)


def test_the_trajectory_criterions_matching_decides_equal_calls() -> None:
    assert call_equality(_metrics({"response_match_score": 0.8})) == CriterionArgs()
    loose = call_equality(_metrics({
        "tool_trajectory_precision": {"threshold": 1.0, "ignore_args": True},
        "tool_trajectory_avg_score": {"threshold": 1.0,
                                      "args_match": {"search": {"q": "text"}}}}))
    assert loose(_call(q=" Paris  "), _call(q="paris"))  # tool_trajectory_avg_score's, first
    assert not loose(_call(q="Rome"), _call(q="paris"))
    names_only = call_equality(_metrics({"tool_trajectory_precision": {"threshold": 1.0,
                                                                      "ignore_args": True}}))
    assert names_only(_call(q="Rome"), _call(q="paris"))
    exact = CriterionArgs()
    assert exact(_call(q=1), _call(q=1.0)) and not exact(_call(q="1"), _call(q=1))
    assert pickle.loads(pickle.dumps(loose))(_call(q="PARIS"), _call(q="paris"))


def test_settings_from_the_config_and_the_request() -> None:
    metrics = _metrics({"tool_trajectory_avg_score": 1.0})
    assert tool_mocking(EvalConfig(), metrics) is None
    assert tool_mocking(EvalConfig(mock_tools={"search": "live"}), metrics) is None  # nothing served
    mock = tool_mocking(EvalConfig(mock_tools={"search": "expected"}, mock_tools_strict=True), metrics)
    assert mock is not None and mock.strict and mock.mode("search") == "expected" and mock.mode("x") == "live"
    config, _ = request_config(RunRequest(mock_tools="live", mock_tools_strict=False), None)
    assert (config.mock_tools, config.mock_tools_strict) == ("live", False)


def test_the_plan_carries_the_settings_picklable() -> None:
    job = EvalJob(config=EvalConfig(mock_tools="expected", mock_tools_strict=True),
                  agent=lambda text: "hi",
                  selections=[Selection(None, eval_set("s", {"a": [inv("hi", "hi")]}))])
    plan = prepare(job, Services.create({}))
    assert plan.mock_tools is not None and plan.mock_tools.mode("anything") == "expected"
    copy = pickle.loads(pickle.dumps(plan))
    assert copy.mock_tools == plan.mock_tools
    assert plan.describe()["mock_tools"] == {"modes": {"*": "expected"}, "strict": True}
