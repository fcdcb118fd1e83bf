import asyncio
import json
import sys
from pathlib import Path

import pytest

from agenteval.criteria import (
    CriterionResult,
    EvalContext,
    InvocationScore,
    Registry,
    default_registry,
    register_function,
    resolve_metrics,
)
from agenteval.datasets import load_eval_config
from agenteval.errors import DataError
from tests.helpers import inv

MODULE = '''
def shortness(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
    limit = eval_metric.criterion["max_words"]
    words = [len((i.final_response.text() if i.final_response else "").split()) for i in actual_invocations]
    return sum(1.0 for w in words if w <= limit) / len(words)
'''


def test_config_custom_metric_runs_with_its_extra_keys(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_metrics.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({
        "criteria": {"shortness": {"threshold": 0.5, "max_words": 2}},
        "custom_metrics": {"shortness": {"code_config": {"name": "my_metrics.shortness"}}},
    }))
    (metric,) = resolve_metrics(load_eval_config(cfg), cfg, include_informational=False)
    ctx = EvalContext(actual=[inv(response="a b"), inv(response="a b c")])
    result = asyncio.run(metric.build().ascore(ctx))
    assert result.score == 0.5
    assert "shortness" not in default_registry().names()  # registered on a fork only
    sys.modules.pop("my_metrics", None)


def test_unimportable_custom_metric_names_the_key(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"criteria": {"m": 1.0},
                               "custom_metrics": {"m": {"code_config": {"name": "nowhere.fn"}}}}))
    with pytest.raises(DataError) as err:
        resolve_metrics(load_eval_config(cfg), cfg)
    assert err.value.path == "custom_metrics.m.code_config.name"


def test_python_api_registration() -> None:
    registry = Registry()

    def always_half(metric, actual, expected, scenario):  # type: ignore[no-untyped-def]
        return CriterionResult(0.5, [InvocationScore(0.5) for _ in actual])

    register_function("half", always_half, registry=registry)
    metric = registry.configure("half", 0.4)
    assert asyncio.run(metric.build().ascore(EvalContext(actual=[inv()]))).score == 0.5
