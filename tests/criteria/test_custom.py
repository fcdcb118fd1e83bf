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
from agenteval.runner import CaseRun, score_case
from agenteval.schema import EvalCase, EvalCaseResult, EvalStatus
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


SCORES = '''
def five(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
    return 5


class Result:
    overall_score = 0.5
    overall_eval_status = 1
    per_invocation_results = [type("P", (), {"score": -1.0})()]


def per_invocation_out(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
    return Result()


def one(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
    return 1.0
'''


def _score_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fn: str,
                metric_info: dict[str, object] | None, threshold: float = 0.5) -> EvalCaseResult:
    (tmp_path / "scores_mod.py").write_text(SCORES)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "scores_mod", raising=False)
    cfg = tmp_path / "cfg.json"
    decl: dict[str, object] = {"code_config": {"name": f"scores_mod.{fn}"}}
    if metric_info is not None:
        decl["metric_info"] = metric_info
    cfg.write_text(json.dumps({"criteria": {"m": threshold}, "custom_metrics": {"m": decl}}))
    metrics = resolve_metrics(load_eval_config(cfg), cfg, include_informational=False)
    run = CaseRun(case=EvalCase(eval_id="c", conversation=[inv()]), actual=[inv()], eval_set_id="s")
    return asyncio.run(score_case(run, metrics))


@pytest.mark.parametrize(("fn", "metric_info", "message"), [
    ("five", None, "returned score 5.0, outside its declared interval [0.0, 1.0]"),
    ("five", {"metric_value_info": {"interval": {"min_value": 0, "max_value": 4}}},
     "score 5.0, outside its declared interval [0.0, 4.0]"),
    ("per_invocation_out", None, "invocation 1's score -1.0, outside"),
    ("one", {"metric_value_info": {"interval": {"open_at_max": True}}},
     "score 1.0, outside its declared interval [0.0, 1.0)"),
])
def test_a_score_outside_the_declared_interval_fails_the_case(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fn: str,
        metric_info: dict[str, object] | None, message: str) -> None:
    result = _score_with(tmp_path, monkeypatch, fn, metric_info)
    assert result.final_eval_status == EvalStatus.FAILED
    (error,) = result.metric_errors
    assert error.metric_name == "m" and message in error.message
    assert result.overall_eval_metric_results[0].score is None


def test_a_score_inside_a_wider_declared_interval_counts(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    info = {"metric_value_info": {"interval": {"min_value": 0, "max_value": 10}}}
    result = _score_with(tmp_path, monkeypatch, "five", info, threshold=4)
    assert result.final_eval_status == EvalStatus.PASSED and not result.metric_errors
    assert result.overall_eval_metric_results[0].score == 5.0


def test_register_function_declares_its_range() -> None:
    registry = Registry()
    register_function("tens", lambda *args: 50, registry=registry, max_value=10)
    result = asyncio.run(registry.configure("tens", 5).build().ascore(EvalContext(actual=[inv()])))
    assert result.score is None and result.error is not None and "[0.0, 10.0]" in result.error


def test_a_metric_name_utf8_cannot_hold_is_refused_and_a_description_made_writable() -> None:
    registry = Registry()
    with pytest.raises(ValueError, match="unpaired surrogate"):
        register_function("m\ud800", lambda *a: 1.0, registry=registry)
    register_function("m", lambda *a: 1.0, registry=registry, description="says \ud800")
    assert registry.get("m").description == "says \ufffd"  # type: ignore[union-attr]
