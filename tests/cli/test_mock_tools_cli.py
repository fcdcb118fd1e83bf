"""`agenteval eval --mock_tools` and the config's `mock_tools` on the volatile ADK agent (a
scripted `BaseLlm` whose tools return the clock, a uuid and a random choice), run for real."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk", reason="google-adk is not installed (pip install 'agenteval[adk]')")

from click.testing import CliRunner, Result

from agenteval.cli.main import cli
from tests.agents import volatile_adk
from tests.agents.volatile_adk import CALLS

# What differs between two runs of the same thing: ids, clocks, measured seconds.
_VOLATILE_KEY = re.compile(r"(^|[._])(id|run_id|trace_id|span_id|parent_id|session_id|invocation_id|"
                           r"eval_set_result_id|eval_set_result_name|start|end|started|ended|"
                           r"creation_timestamp|argv)$|seconds|duration")
_TIMED_METRIC = "invocation_duration_v1"


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if not _VOLATILE_KEY.search(k)}
    if isinstance(value, list):
        return [_stable(v) for v in value
                if not (isinstance(v, dict) and v.get("metric_name") == _TIMED_METRIC)]
    return value


@pytest.fixture
def helpdesk(tmp_path: Path) -> Path:
    folder = tmp_path / "helpdesk"
    folder.mkdir()
    (folder / "agent.py").write_text("from tests.agents.volatile_adk import agent\n\nroot_agent = agent()\n")
    (folder / "volatile.evalset.json").write_text(volatile_adk.eval_set().model_dump_json(exclude_none=True))
    CALLS.clear()
    return folder


def _eval(folder: Path, out: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["eval", str(folder), str(folder / "volatile.evalset.json"),
                                    "--no_history", "--output", str(out), *args])


def _doc(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _served(doc: dict[str, Any]) -> list[Any]:
    return [e.get("served") for case in doc["eval_case_results"]
            for inv in case["eval_metric_result_per_invocation"]
            for e in inv["actual_invocation"]["intermediate_data"]["invocation_events"]
            if e.get("served") is not None]


def test_five_mocked_reruns_give_identical_documents_and_no_tool_runs(helpdesk: Path,
                                                                      tmp_path: Path) -> None:
    docs = []
    for i in range(5):
        out = tmp_path / f"run{i}.json"
        r = _eval(helpdesk, out, "--mock_tools", "expected")
        assert r.exit_code == 0, r.output
        docs.append(_doc(out))
    assert CALLS == {}  # the tools' own code never ran
    first = _stable(docs[0])
    assert all(_stable(d) == first for d in docs[1:])
    assert [c["final_eval_status"] for c in docs[0]["eval_case_results"]] == [1, 1]
    assert _served(docs[0]) == [["expected"] * 3, ["expected"], ["expected"]]
    # the runs really differ in what was scrubbed: the comparison is not vacuous
    assert docs[0]["eval_case_results"][0]["session_id"] != docs[1]["eval_case_results"][0]["session_id"]


def test_live_runs_the_tools_and_marks_nothing(helpdesk: Path, tmp_path: Path) -> None:
    out = tmp_path / "live.json"
    _eval(helpdesk, out)  # fails or passes by the clock: only what ran matters here
    assert CALLS == {"get_time": 1, "new_ticket_id": 1, "random_quote": 3}
    assert _served(_doc(out)) == []


def test_config_modes_per_tool_leave_a_live_tool_running(helpdesk: Path, tmp_path: Path) -> None:
    (helpdesk / "test_config.json").write_text(json.dumps({
        "criteria": {"tool_trajectory_avg_score": 1.0},
        "mock_tools": {"get_time": "live", "*": "expected"}, "mock_tools_strict": True}))
    out = tmp_path / "out.json"
    r = _eval(helpdesk, out)
    assert r.exit_code == 0, r.output
    assert CALLS == {"get_time": 1}
    assert _served(_doc(out))[0] == ["live", "expected", "expected"]
    # --mock_tools live on the command line replaces the config's modes: everything runs
    CALLS.clear()
    assert _eval(helpdesk, tmp_path / "live.json", "--mock_tools", "live").exit_code == 0
    assert CALLS == {"get_time": 1, "new_ticket_id": 1, "random_quote": 3}


def test_strict_fails_an_unmatched_call_naming_it(helpdesk: Path, tmp_path: Path) -> None:
    path = helpdesk / "volatile.evalset.json"
    data = json.loads(path.read_text())
    data["eval_cases"][1]["conversation"][0]["user_content"]["parts"][0]["text"] = "One about courage?"
    path.write_text(json.dumps(data))
    out = tmp_path / "out.json"
    r = _eval(helpdesk, out, "--mock_tools", "expected", "--mock_tools_strict")
    assert r.exit_code == 1
    assert CALLS == {}
    cases = {c["eval_id"]: c for c in _doc(out)["eval_case_results"]}
    assert cases["ticket_then_quote"]["error_message"] is None
    assert cases["quote_only"]["error_message"].startswith(
        'UnmatchedToolCall: random_quote({"topic": "courage"}) by agent \'helpdesk\' in invocation 0 '
        "matches no expected call")


def test_args_match_of_the_trajectory_criterion_decides_what_matches(helpdesk: Path,
                                                                     tmp_path: Path) -> None:
    path = helpdesk / "volatile.evalset.json"
    data = json.loads(path.read_text())
    data["eval_cases"][1]["conversation"][0]["user_content"]["parts"][0]["text"] = "One about courage?"
    path.write_text(json.dumps(data))
    (helpdesk / "test_config.json").write_text(json.dumps({
        "criteria": {"tool_trajectory_avg_score": {"threshold": 1.0,
                                                   "args_match": {"random_quote": {"topic": "ignore"}}}},
        "mock_tools": "expected", "mock_tools_strict": True}))
    r = _eval(helpdesk, tmp_path / "out.json")
    assert r.exit_code == 0, r.output  # any topic matches the recorded quote call
    assert CALLS == {}


@pytest.mark.parametrize(("config", "field"), [({"mock_tools": "always"}, "mock_tools"),
                                               ({"mock_tools": {"get_time": "mock"}}, "mock_tools"),
                                               ({"mock_tools_strict": "yes"}, "mock_tools_strict"),
                                               # strict with every tool live: it refused nothing
                                               ({"mock_tools_strict": True}, "mock_tools_strict")])
def test_a_bad_setting_is_refused_naming_the_file_and_field(helpdesk: Path, tmp_path: Path,
                                                            config: dict[str, Any], field: str) -> None:
    (helpdesk / "test_config.json").write_text(json.dumps(config))
    out = tmp_path / "out.json"
    r = _eval(helpdesk, out)
    assert r.exit_code == 2
    said = " ".join(r.output.split())
    assert "test_config.json" in said and field in said
    assert not out.exists() and CALLS == {}


def test_worker_processes_serve_calls_too(helpdesk: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    r = _eval(helpdesk, out, "--mock_tools", "expected", "--isolation", "process", "--parallelism", "1")
    assert r.exit_code == 0, r.output
    doc = _doc(out)
    assert _served(doc) == [["expected"] * 3, ["expected"], ["expected"]]
    replies = [inv["actual_invocation"]["final_response"]["parts"][0]["text"]
               for inv in doc["eval_case_results"][0]["eval_metric_result_per_invocation"]]
    assert replies[0] == "Ticket 3f9a2c1d opened at 2026-01-05T09:30:00.000000. Fortune favours the bold."
