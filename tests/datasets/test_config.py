import json
from pathlib import Path

import pytest

from agenteval.criteria import resolve_metrics
from agenteval.datasets import default_config_for, load_eval_config
from agenteval.errors import DataError
from agenteval.schema import EvalConfig, MatchType, ToolTrajectoryCriterion
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


@pytest.mark.parametrize(("criterion", "key", "message"), [
    ('"response_match_score": "0.8"', "criteria.response_match_score",
     "expected a threshold (a number) or a criterion object, got the string '0.8'"),
    ('"response_match_score": true', "criteria.response_match_score", "got true"),
    ('"response_match_score": null', "criteria.response_match_score", "got null"),
    ('"response_match_score": {"threshold": "0.8"}', "criteria.response_match_score.threshold",
     "valid number"),
    ('"response_match_score": {"threshold": true}', "criteria.response_match_score.threshold",
     "valid number"),
    ('"tool_trajectory_avg_score": {"threshold": 1, "ignore_args": "no"}',
     "criteria.tool_trajectory_avg_score.ignore_args", "valid boolean"),
    ('"tool_trajectory_avg_score": {"threshold": 1, "ignore_args": 0}',
     "criteria.tool_trajectory_avg_score.ignore_args", "valid boolean"),
    ('"tool_trajectory_avg_score": {"threshold": 1, "match_type": true}',
     "criteria.tool_trajectory_avg_score.match_type", "EXACT"),
    ('"tool_trajectory_single_tool_use": {"threshold": 1, "tool_name": 5}',
     "criteria.tool_trajectory_single_tool_use.tool_name", "valid string"),
    ('"final_response_match_v2": {"threshold": 1, "judge_model_options": {"num_samples": "5"}}',
     "criteria.final_response_match_v2.judge_model_options.num_samples", "valid integer"),
    ('"final_response_match_v2": {"threshold": 1, "judge_model_options": {"num_samples": 5.0}}',
     "criteria.final_response_match_v2.judge_model_options.num_samples", "valid integer"),
    # ADK's generation config for the judge: accepted and ignored (the judge samples at its own
    # temperature); only thinking_config, which it has no use for, is accepted
    ('"final_response_match_v2": {"threshold": 1, "judge_model_options": {"judge_model_config": '
     '{"temperature": 0}}}', "criteria.final_response_match_v2.judge_model_options.judge_model_config",
     "temperature: not used by agenteval's judge, which samples at its own temperature"),
    ('"safety_v1": {"threshold": 1, "judgeModelOptions": {"judgeModelConfig": {"maxOutputTokens": 9}}}',
     "criteria.safety_v1.judge_model_options.judge_model_config", "maxOutputTokens: not used"),
    ('"hallucinations_v1": {"threshold": 1, "evaluate_intermediate_nl_responses": "yes"}',
     "criteria.hallucinations_v1.evaluate_intermediate_nl_responses", "valid boolean"),
    # every case failed on it, NOT_EVALUATED, instead
    ('"rubric_based_tool_use_quality_v1": {"threshold": 1, "rubrics": ['
     '{"rubric_id": "a", "rubric_content": {"text_property": "x"}}, '
     '{"rubric_id": "b", "rubric_content": {"text_property": "y"}}, '
     '{"rubric_id": "a", "rubric_content": {"text_property": "z"}}]}',
     "criteria.rubric_based_tool_use_quality_v1.rubrics",
     "duplicate rubric_id 'a' (rubrics[0] and rubrics[2])"),
])
def test_wrong_types_are_errors_not_coerced(tmp_path: Path, criterion: str, key: str,
                                            message: str) -> None:
    with pytest.raises(DataError) as err:
        _resolve(tmp_path, f'{{"criteria": {{{criterion}}}}}')
    assert (err.value.file, err.value.path) == (str(tmp_path / "cfg.json"), key)
    assert message in err.value.message


@pytest.mark.parametrize(("section", "key", "message"), [
    ('"user_simulator_config": {"temperature": "0.2"}', "user_simulator_config.temperature",
     "valid number"),
    ('"user_simulator_config": {"include_function_calls": "no"}',
     "user_simulator_config.include_function_calls", "valid boolean"),
    ('"user_simulator_config": {"maxAllowedInvocations": "3"}',
     "user_simulator_config.max_allowed_invocations", "valid integer"),
    ('"user_simulator_config": {"modle": "local"}', "user_simulator_config.modle", "unknown key"),
    # no turn at all: each scenario ended before its starting prompt, scored on nothing
    ('"user_simulator_config": {"max_allowed_invocations": 0}',
     "user_simulator_config.max_allowed_invocations",
     "must be at least 1 (the starting prompt is a turn), or -1 for no limit"),
    # ADK refuses these templates; the simulated user never read the agent's answers, or could
    # not end the conversation, or was sent `{{ persona.description }}` as written
    ('"user_simulator_config": {"custom_instructions": "{{ conversation_plan }} {{ stop_signal }}"}',
     "user_simulator_config.custom_instructions", "no {{ conversation_history }}"),
    ('"user_simulator_config": {"custom_instructions": "{{ conversation_plan }} {{ conversation_history }}"}',
     "user_simulator_config.custom_instructions", "no {{ stop_signal }}"),
    ('"user_simulator_config": {"custom_instructions": "{{ persona.description }} {{ conversation_plan }} '
     '{{ conversation_history }} {{ stop_signal }}"}',
     "user_simulator_config.custom_instructions", "{{ persona.description }} cannot be filled in"),
    # every generated turn held "" (or " "), so each conversation ended after its first turn
    ('"user_simulator_config": {"stop_signal": ""}', "user_simulator_config.stop_signal",
     "must not be blank"),
    ('"user_simulator_config": {"stop_signal": " "}', "user_simulator_config.stop_signal",
     "must not be blank"),
    # ADK's generation config: a key the simulator cannot use was accepted and ignored
    ('"user_simulator_config": {"model_configuration": {"top_p": 0.5}}',
     "user_simulator_config.model_configuration.top_p", "unknown key"),
    ('"user_simulator_config": {"modelConfiguration": {"temperature": "0.2"}}',
     "user_simulator_config.model_configuration.temperature", "valid number"),
    ('"user_simulator_config": {"model_configuration": {"maxOutputTokens": 0}}',
     "user_simulator_config.model_configuration.max_output_tokens", "greater than or equal to 1"),
    ('"user_simulator_config": {"temperature": 0.1, "model_configuration": {"temperature": 0.9}}',
     "user_simulator_config", "set the simulator's temperature once"),
    ('"not_evaluated": true', "not_evaluated", "'fail' or 'ignore'"),
    ('"custom_metrics": {"m": {"code_config": {"name": "a.b"}, "description": 1}}',
     "custom_metrics.m.description", "valid string"),
    # a union's value: the member its shape chose is named, down to the bad key
    ('"mock_tools": {"roll": "x"}', "mock_tools.roll", "'expected' or 'live'"),
    ('"mock_tools": "x"', "mock_tools", "'expected' or 'live'"),
    # ADK's, for Live API models: agenteval ignores it, but not a mistake in it
    ('"live_model_config": {"timeout_seconds": "60"}', "live_model_config.timeout_seconds",
     "valid integer"),
    ('"live_model_config": {"timeoutSeconds": 1.5}', "live_model_config.timeout_seconds",
     "valid integer"),
    ('"live_model_config": {"timeout": 60}', "live_model_config.timeout", "unknown key"),
])
def test_wrong_types_outside_criteria(tmp_path: Path, section: str, key: str, message: str) -> None:
    p = tmp_path / "cfg.json"
    p.write_text(f'{{"criteria": {{"response_match_score": 0.5}}, {section}}}')
    with pytest.raises(DataError) as err:
        load_eval_config(p)
    assert (err.value.file, err.value.path) == (str(p), key)
    assert message in err.value.message


@pytest.mark.parametrize(("text", "where"), [
    ('"criteria": {"response_match_score": 0.5}, ', "`criteria`"),
    ("", "`criteria` (absent from this file: the default criteria run)"),
])
def test_a_custom_metric_that_criteria_does_not_name_is_refused(tmp_path: Path, text: str,
                                                                 where: str) -> None:
    # It would never run: the run went green without it.
    p = tmp_path / "cfg.json"
    p.write_text(f'{{{text}"custom_metrics": {{"m": {{"code_config": {{"name": "a.b"}}}}}}}}')
    with pytest.raises(DataError) as err:
        load_eval_config(p)
    assert (err.value.file, err.value.path) == (str(p), "custom_metrics.m")
    assert err.value.message == (f"declared but not named in {where}, so it would never run; "
                                 'add "m": <threshold> to criteria, or remove it')


def test_integers_are_numbers_and_the_simulator_config_stays_a_dict(tmp_path: Path) -> None:
    p = tmp_path / "cfg.json"
    p.write_text('{"criteria": {"response_match_score": 1, "tool_trajectory_avg_score": '
                 '{"threshold": 0, "match_type": 1}}, "user_simulator_config": '
                 '{"maxAllowedInvocations": 3, "temperature": 1, "type": null}}')
    config = load_eval_config(p)
    assert config.criteria["response_match_score"] == 1.0
    metrics = {m.name: m for m in resolve_metrics(config, p)}
    criterion = metrics["tool_trajectory_avg_score"].criterion
    assert isinstance(criterion, ToolTrajectoryCriterion)
    assert (criterion.threshold, criterion.match_type) == (0.0, MatchType.IN_ORDER)
    # Only the keys written, by their snake_case names, as the simulator reads them.
    assert config.user_simulator_config == {"max_allowed_invocations": 3, "temperature": 1.0,
                                            "type": None}
    assert EvalConfig.model_validate_json(config.model_dump_json()) == config


@pytest.mark.parametrize(("metric_info", "key", "message"), [
    ({"metric_value_info": {"interval": {"min_value": "low"}}},
     "custom_metrics.m.metric_info.metric_value_info.interval.min_value", "valid number"),
    ({"metric_value_info": [0, 1]}, "custom_metrics.m.metric_info.metric_value_info",
     "valid dictionary"),
    ({"metric_value_info": {"interval": {"min_value": 2, "max_value": 1}}},
     "custom_metrics.m.metric_info.metric_value_info.interval", "min_value 2.0 is not at most"),
    ({"metric_value_info": {"interval": {"open_at_max": "yes"}}},
     "custom_metrics.m.metric_info.metric_value_info.interval.open_at_max", "valid boolean"),
    ([], "custom_metrics.m.metric_info", "valid dictionary"),
])
def test_custom_metric_info_is_validated(tmp_path: Path, metric_info: object, key: str,
                                         message: str) -> None:
    p = tmp_path / "cfg.json"
    p.write_text(json.dumps({"criteria": {"m": 0.5}, "custom_metrics": {
        "m": {"code_config": {"name": "nowhere.fn"}, "metric_info": metric_info}}}))
    with pytest.raises(DataError) as err:
        resolve_metrics(load_eval_config(p), p)
    assert (err.value.file, err.value.path) == (str(p), key)
    assert message in err.value.message


def test_config_with_a_byte_order_mark(tmp_path: Path) -> None:
    p = tmp_path / "cfg.json"
    p.write_bytes(b'\xef\xbb\xbf{"criteria": {"response_match_score": 0.5}}')
    assert load_eval_config(p).criteria == {"response_match_score": 0.5}


def test_a_simulator_template_with_its_placeholders_is_accepted(tmp_path: Path) -> None:
    p = tmp_path / "cfg.json"
    template = ('Plan: {{ conversation_plan }}\nSo far: {conversation_history}\nAs {{persona}}; '
                'end with {{ stop_signal }}. Reply as {\\"text\\": ...}')
    p.write_text(json.dumps({"criteria": {"response_match_score": 0.5},
                             "user_simulator_config": {"custom_instructions": template}}))
    config = load_eval_config(p)
    assert config.user_simulator_config is not None
    assert config.user_simulator_config["custom_instructions"] == template


def test_the_judge_takes_adks_thinking_config(tmp_path: Path) -> None:
    config = _resolve(tmp_path, '{"criteria": {"safety_v1": {"threshold": 1, "judge_model_options": '
                                '{"judge_model_config": {"thinking_config": {"thinking_budget": 0}}}}}}')
    assert config[0] == "safety_v1"
