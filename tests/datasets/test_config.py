from pathlib import Path

import pytest

from agenteval.criteria import resolve_metrics
from agenteval.datasets import default_config_for, load_eval_config
from agenteval.errors import DataError
from agenteval.schema import MatchType, ToolTrajectoryCriterion
from tests.conftest import ADK


def _resolve(tmp_path: Path, text: str) -> list[str]:
    p = tmp_path / "cfg.json"
    p.write_text(text)
    return [m.name for m in resolve_metrics(load_eval_config(p), p)]


def test_test_config_beside_eval_set_is_found() -> None:
    config, found = default_config_for(ADK / "ecommerce_customer_service_agent" / "order_query.test.json")
    assert found is not None and config.criteria["tool_trajectory_avg_score"] == 0.7


def test_defaults_without_config(tmp_path: Path) -> None:
    config, found = default_config_for(tmp_path / "x.evalset.json")
    assert found is None
    assert config.criteria == {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}


def test_informational_metrics_are_always_added(tmp_path: Path) -> None:
    names = _resolve(tmp_path, '{"criteria": {"response_match_score": 0.5}}')
    assert names[0] == "response_match_score"
    assert {"tool_call_count_v1", "token_usage_v1", "invocation_duration_v1",
            "inference_call_count_v1"} <= set(names)


@pytest.mark.parametrize("value", ["in-order", "In Order", "IN_ORDER", 1])
def test_match_type_spellings(value: object) -> None:
    assert ToolTrajectoryCriterion.model_validate(
        {"threshold": 1, "match_type": value}).match_type == MatchType.IN_ORDER


@pytest.mark.parametrize(("text", "key", "message"), [
    ('{"criteria": {"tool_trajectory_avg_scor": 1}}', "criteria.tool_trajectory_avg_scor",
     "did you mean 'tool_trajectory_avg_score'"),
    ('{"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "match-typ": "EXACT"}}}',
     "criteria.tool_trajectory_avg_score.match-typ", "unknown key"),
    ('{"criteria": {"response_match_score": 1.5}}', "criteria.response_match_score", "outside"),
    ('{"criteria": {"tool_trajectory_avg_score": {"match_type": "EXACT"}}}',
     "criteria.tool_trajectory_avg_score.threshold", "field required"),
    ('{"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "match_type": "SOME"}}}',
     "criteria.tool_trajectory_avg_score.match_type", "EXACT"),
    ('{"criteria": {"token_usage_v1": 10}}', "criteria.token_usage_v1", "informational"),
    ('{"criterias": {}}', "criterias", "unknown key"),
])
def test_config_errors_name_file_and_key(tmp_path: Path, text: str, key: str, message: str) -> None:
    with pytest.raises(DataError) as err:
        _resolve(tmp_path, text)
    assert err.value.file == str(tmp_path / "cfg.json")
    assert err.value.path == key
    assert message in err.value.message


def test_missing_config_file_is_an_error() -> None:
    with pytest.raises(DataError, match="file not found"):
        load_eval_config("/nonexistent/test_config.json")
