"""Issue 26, item 1: traces the real frameworks exported over real OTLP/HTTP read right
(tests/fixtures/traces, made by capture_otlp.py there): ADK's merged span around parallel calls,
content captured in logs only, the OpenAI Agents SDK's several runs in one `trace(...)`,
pydantic-ai's own instrumentation, tool arguments in `agenteval trace`, turn durations."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.tracing.ingest import read_traces

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
PARALLEL = FIXTURES / "parallel.evalset.json"
FRAMEWORKS = ["adk_parallel", "openai_agents_group", "pydantic_ai", "pydantic_ai_one_trace"]


def _score(expected: Path, traces: Path, tmp_path: Path) -> tuple[int, str, Path]:
    out = tmp_path / "r.json"
    config = tmp_path / "cfg.json"
    criteria = {"tool_trajectory_avg_score": 1.0, "response_match_score": 1.0}
    config.write_text(json.dumps({"criteria": criteria}))
    r = CliRunner().invoke(cli, ["score", str(expected), "--actual", str(traces), "--config_file_path",
                                 str(config), "-o", str(out)], env={"COLUMNS": "200"})
    return r.exit_code, r.output, out


def _metrics(case: dict) -> dict:  # type: ignore[type-arg]
    return {m["metric_name"]: m for m in case["overall_eval_metric_results"]}


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_parallel_and_multi_turn_traces_score_as_expected(name: str, tmp_path: Path) -> None:
    code, output, out = _score(PARALLEL, FIXTURES / f"{name}.otlp.json", tmp_path)
    assert code == 0, output  # same calls (two at once in turn 1), same answers
    (case,) = json.loads(out.read_text())["eval_case_results"]
    per = case["eval_metric_result_per_invocation"]
    assert [p["actual_invocation"]["user_content"]["parts"][0]["text"] for p in per] == [
        "What's the weather in Paris and in Rome?", "And in Oslo?"]
    counts = [next(m["score"] for m in p["eval_metric_results"] if m["metric_name"] == "tool_call_count_v1")
              for p in per]
    assert counts == [2, 1]  # ADK's `execute_tool (merged)` is no third call
    durations = [next(m for m in p["eval_metric_results"] if m["metric_name"] == "invocation_duration_v1")
                 for p in per]
    assert all(d["score"] is not None and d["score"] > 0 for d in durations)
    tool_spans = [s for s in case["trace"]["spans"] if s["kind"] == "tool"]
    assert len(tool_spans) == 3
    assert [json.loads(s["attributes"]["gen_ai.tool.call.arguments"]) for s in tool_spans] == [
        {"city": "Paris"}, {"city": "Rome"}, {"city": "Oslo"}]


def test_the_merged_span_is_kept_but_not_counted() -> None:
    (conv,) = read_traces(FIXTURES / "adk_parallel.otlp.json").conversations.values()
    first = conv[0]
    assert any(s.attributes.get("gen_ai.tool.name") == "(merged tools)" for s in first.spans)
    assert [(c.name, c.args) for c in first.calls] == [("get_weather", {"city": "Paris"}),
                                                        ("get_weather", {"city": "Rome"})]
    assert [r.name for r in first.results] == ["get_weather", "get_weather"]


@pytest.mark.parametrize("name", ["openai_agents_group", "pydantic_ai_one_trace"])
def test_one_trace_of_two_runs_is_two_turns_of_one_conversation(name: str) -> None:
    conversations = read_traces(FIXTURES / f"{name}.otlp.json").conversations
    (conv,) = conversations.values()
    assert [t.user_text for t in conv] == ["What's the weather in Paris and in Rome?", "And in Oslo?"]
    assert conv[0].end <= conv[1].start  # each turn is its own run's time, not the trace's


def test_turn_durations_come_from_span_times() -> None:
    (conv,) = read_traces(FIXTURES / "pydantic_ai.otlp.json").conversations.values()
    for t in conv:
        root = min(t.spans, key=lambda s: s.start)
        assert t.end - t.start == pytest.approx((root.end or 0) - root.start)
        assert t.model_seconds is not None and 0 < t.model_seconds <= t.end - t.start
        assert t.tool_seconds is not None and t.tool_seconds >= 0


def test_content_in_logs_gives_the_content_advice_before_matching(tmp_path: Path) -> None:
    # ADK with EVENT_ONLY, in a session whose id ADK made (no eval_id): content is the problem
    code, output, out = _score(PARALLEL, FIXTURES / "adk_event_only.otlp.json", tmp_path)
    assert code == 2 and not out.exists()
    assert "the spans carry no messages" in output and "SPAN_ONLY" in output
    assert "matches no eval case" not in output


@pytest.mark.parametrize(("name", "expected"), [("openai_agents", "expected"), ("adk_legacy", "expected"),
                                                ("adk_parallel", "parallel")])
def test_agenteval_trace_shows_tool_arguments_and_results(name: str, expected: str, tmp_path: Path) -> None:
    traces = FIXTURES / f"{name}.otlp.json"
    code, output, out = _score(FIXTURES / f"{expected}.evalset.json", traces, tmp_path)
    assert code == 0, output
    r = CliRunner().invoke(cli, ["trace", str(out)], env={"COLUMNS": "250"})
    assert r.exit_code == 0, r.output
    assert "args {}" not in r.output and "args not recorded" not in r.output
    assert '{"city": "Paris"}' in r.output.replace('{"city":"Paris"}', '{"city": "Paris"}')
    assert '"temperature_c": 18' in r.output
