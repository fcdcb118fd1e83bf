import json
from pathlib import Path

import pytest

from agenteval.datasets import load_eval_config, load_eval_set, load_session_file, migrate
from agenteval.errors import DataError
from tests.conftest import ADK, SHARED


def _json_files() -> list[Path]:
    return sorted(p for p in SHARED.rglob("*.json") if p.name != "adk_scores.json")


@pytest.mark.parametrize("path", _json_files(), ids=lambda p: str(p.relative_to(SHARED)))
def test_every_shared_fixture_loads(path: Path) -> None:
    if path.name.startswith("config_") or path.name == "test_config.json":
        load_eval_config(path)
    elif path.name.endswith(".session.json"):
        load_session_file(path)
    else:
        s = load_eval_set(path)
        assert s.eval_cases and all(c.conversation for c in s.eval_cases)


def test_legacy_test_file_becomes_one_case_with_initial_session() -> None:
    path = ADK / "trip_planner_agent" / "trip_inquiry.test.json"
    s = load_eval_set(path, ADK / "trip_planner_agent" / "initial.session.json")
    raw = json.loads(path.read_text())
    (case,) = s.eval_cases
    assert case.eval_id == str(path)
    assert case.conversation is not None and len(case.conversation) == len(raw)
    first = case.conversation[0]
    assert first.user_content.text() == raw[0]["query"]
    assert [c.name for c in first.tool_calls()] == [t["tool_name"] for t in raw[0]["expected_tool_use"]]
    assert case.session_input is not None and case.session_input.state["origin"] == "San Francisco"
    assert "/" not in s.eval_set_id  # unlike ADK, safe to use in a result file name


def test_old_session_list_format(tmp_path: Path) -> None:
    p = tmp_path / "old.json"
    p.write_text(json.dumps([{
        "name": "greet", "data": [{"query": "hi", "expected_tool_use": [], "reference": "hello"}],
        "initial_session": {"app_name": "a", "user_id": "u", "state": {"x": 1}},
    }]))
    (case,) = load_eval_set(p).eval_cases
    assert case.eval_id == "greet" and case.session_input and case.session_input.state == {"x": 1}


def test_migrate_writes_a_loadable_current_format_file(tmp_path: Path) -> None:
    new = tmp_path / "new.evalset.json"
    migrate(ADK / "home_automation_agent" / "simple_test2.test.json", new)
    data = json.loads(new.read_text())
    assert "eval_cases" in data and "evalCases" not in data
    assert load_eval_set(new).eval_cases[0].conversation


@pytest.mark.parametrize(("content", "where", "message"), [
    ("{", "line 1 column 2", "malformed JSON"),
    ('{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [{}]}]}',
     "eval_cases[0].conversation[0].user_content", "field required"),
    ('{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [{"user_content": '
     '{"parts": [{"text": 5}]}}]}]}', "eval_cases[0].conversation[0].user_content.parts[0].text",
     "string"),
    ('[{"query": "q", "expected_tool_use": [{"tool_input": {}}]}]',
     "[0].expected_tool_use[0].tool_name", "field required"),
    ('{"eval_set_id": "s", "eval_cases": [{"eval_id": "c"}]}', "eval_cases[0]", "exactly one"),
    ('{"something": 1}', "eval_set_id", "field required"),
    ('"text"', "", "not an eval set"),
])
def test_bad_files_name_file_and_json_path(tmp_path: Path, content: str, where: str,
                                          message: str) -> None:
    p = tmp_path / "bad.evalset.json"
    p.write_text(content)
    with pytest.raises(DataError) as err:
        load_eval_set(p)
    assert err.value.file == str(p)
    assert err.value.path == where
    assert message in err.value.message


def test_missing_file() -> None:
    with pytest.raises(DataError, match="file not found"):
        load_eval_set("/nonexistent/x.evalset.json")
