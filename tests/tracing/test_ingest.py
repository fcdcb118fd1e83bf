"""Scoring traces that real frameworks exported (tests/fixtures/traces, made by make_traces.py
there): Google ADK (both span schemas), the OpenAI Agents SDK and LangGraph (OpenInference)."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.datasets import load_eval_set
from agenteval.errors import DataError
from agenteval.tracing.ingest import read_traces

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
EXPECTED = FIXTURES / "expected.evalset.json"
# (input, output) tokens per model call, two calls per turn (the fixtures' README)
TOKENS = {"adk": [50, 7, 70, 12], "adk_legacy": [50, 7, 70, 12], "openai_agents": [50, 7, 70, 12],
          "langgraph": [60, 7, 80, 12]}


@pytest.mark.parametrize("name", sorted(TOKENS))
def test_each_framework_scores_as_expected(name: str, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    config = tmp_path / "cfg.json"
    config.write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0,
                                               "response_match_score": 1.0}}))
    r = CliRunner().invoke(cli, ["score", str(EXPECTED), "--actual", str(FIXTURES / f"{name}.otlp.json"),
                                 "--config_file_path", str(config), "-o", str(out)], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output  # every case passes: same tool calls, same answers
    doc = json.loads(out.read_text())
    cases = {c["eval_id"]: c for c in doc["eval_case_results"]}
    assert sorted(cases) == ["weather-oslo", "weather-paris-rome"]
    paris = cases["weather-paris-rome"]
    actual = [p["actual_invocation"] for p in paris["eval_metric_result_per_invocation"]]
    assert [a["user_content"]["parts"][0]["text"] for a in actual] == ["What's the weather in Paris?",
                                                                      "And in Rome?"]
    assert actual[1]["intermediate_data"]["tool_responses"][0]["response"] == {
        "city": "Rome", "temperature_c": 24, "condition": "clear"}
    trace = paris["trace"]
    assert [s["kind"] for s in trace["spans"]].count("invocation") == 2
    llm = [s for s in trace["spans"] if s["kind"] == "llm"]
    assert len(llm) == 4 and len([s for s in trace["spans"] if s["kind"] == "tool"]) == 2
    tokens = {m["metric_name"]: m for m in paris["overall_eval_metric_results"]}["token_usage_v1"]
    first_in, first_out, second_in, second_out = TOKENS[name]
    per_turn = [first_in + second_in, first_in + 40 + second_in + 40]  # turn 2 has 40 more each
    details = tokens["details"]["token_usage_details"]
    assert details["input_tokens"] == sum(per_turn) / 2
    assert details["output_tokens"] == first_out + second_out
    calls = {m["metric_name"]: m for m in paris["overall_eval_metric_results"]}
    assert calls["inference_call_count_v1"]["score"] == 2 and calls["tool_call_count_v1"]["score"] == 1


def test_spans_without_content_are_refused_with_the_fix(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["score", str(EXPECTED), "--actual",
                                 str(FIXTURES / "adk_no_content.otlp.json"), "-o", str(tmp_path / "r.json")])
    assert r.exit_code == 2 and not (tmp_path / "r.json").exists()
    assert "the spans carry no messages" in r.output
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY" in r.output


def _document(tmp_path: Path, mutate: object) -> Path:
    data = json.loads((FIXTURES / "openai_agents.otlp.json").read_text())
    mutate(data)  # type: ignore[operator]
    path = tmp_path / "t.otlp.json"
    path.write_text(json.dumps(data))
    return path


def _spans(d: dict) -> list:  # type: ignore[type-arg]
    return d["resourceSpans"][0]["scopeSpans"][0]["spans"]  # type: ignore[no-any-return]


_NAME = _spans(json.loads((FIXTURES / "openai_agents.otlp.json").read_text()))[1]["name"]


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: _spans(d)[3].update(traceId="xyz"),
     "resourceSpans[0].scopeSpans[0].spans[3].traceId: must be 32 hex digits, got 'xyz'"),
    # (an absent name is the empty one, as protobuf reads it: tests/tracing/test_otlp_proto.py)
    (lambda d: _spans(d)[0].update(name=5),
     "resourceSpans[0].scopeSpans[0].spans[0].name: must be text, got 5"),
    (lambda d: _spans(d)[1].update(startTimeUnixNano="soon"),
     "spans[1].startTimeUnixNano: must be nanoseconds since the epoch, got 'soon'"),
    (lambda d: _spans(d)[1].update(startTimeUnixNano=str(10**40)),
     f"spans[1].startTimeUnixNano: span '{_NAME}': {10**40} nanoseconds do not fit OTLP's fixed64"),
    (lambda d: _spans(d)[1].update(endTimeUnixNano="-5"),
     f"spans[1].endTimeUnixNano: span '{_NAME}': -5 nanoseconds do not fit OTLP's fixed64"),
    (lambda d: _spans(d)[1].update(endTimeUnixNano="1"),  # else a model time of minus 56 years
     f"spans[1].endTimeUnixNano: span '{_NAME}' ends before it starts (1 < startTimeUnixNano"),
    (lambda d: _spans(d)[2].update(attributes=[{"key": "a", "value": {"weirdValue": 1}}]),
     "spans[2].attributes[0].value: unknown attribute value type 'weirdValue'"),
    (lambda d: [s.update(attributes=[a for a in s.get("attributes", []) if a["key"] != "session.id"])
                for s in _spans(d) if True] and None,
     "conversation 'trace 1': matches no eval case"),
], ids=["trace-id", "name", "start", "start-too-late", "end-negative", "end-before-start", "value-type",
      "unmatched"])
def test_malformed_or_partial_traces_are_refused_naming_the_span(tmp_path: Path, mutate: object,
                                                                 message: str) -> None:
    path = _document(tmp_path, mutate)
    r = CliRunner().invoke(cli, ["score", str(EXPECTED), "--actual", str(path), "-o",
                                 str(tmp_path / "o.json")])
    assert r.exit_code == 2, r.output
    assert f"{path}: " in r.output and message in r.output
    assert not (tmp_path / "o.json").exists()


def _messages(span: dict, cut: object) -> None:  # type: ignore[type-arg]
    (a,) = [a for a in span["attributes"] if a["key"] == "gen_ai.output.messages"]
    text = a["value"]["stringValue"]
    a["value"]["stringValue"] = cut(text)  # type: ignore[operator]


@pytest.mark.parametrize(("cut", "message"), [
    (lambda text: text[:40], "not JSON: cut short?"),
    (lambda text: json.dumps({"messages": json.loads(text)}), "expected a JSON list of messages, got dict"),
], ids=["truncated", "not-a-list"])
def test_a_model_call_s_messages_that_do_not_decode_are_refused_not_read_as_no_answer(
        tmp_path: Path, cut: object, message: str) -> None:
    """An exporter's attribute length limit cuts a long answer short: read as no messages, the
    turn would be scored as an empty answer (a silent FAILED); refused, naming span and attribute."""
    data = json.loads((FIXTURES / "adk.otlp.json").read_text())
    _messages(data["resourceSpans"][0]["scopeSpans"][0]["spans"][2], cut)
    path = tmp_path / "t.otlp.json"
    path.write_text(json.dumps(data))
    r = CliRunner().invoke(cli, ["score", str(EXPECTED), "--actual", str(path), "-o",
                                 str(tmp_path / "o.json")])
    said = " ".join(r.output.split())
    assert r.exit_code == 2 and not (tmp_path / "o.json").exists(), r.output
    span = "resourceSpans[0].scopeSpans[0].spans[2] (span 'generate_content scripted-weather-model')"
    assert f"{path}: {span} " \
        f"attribute gen_ai.output.messages: {message}" in said, said


def test_json_lines_and_matching_by_first_message(tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "langgraph.otlp.json").read_text())
    for span in _spans(data):  # no session ids: conversations are matched by their first message
        span["attributes"] = [a for a in span.get("attributes", []) if a["key"] != "session.id"]
    half = len(_spans(data)) // 2
    first, second = json.loads(json.dumps(data)), json.loads(json.dumps(data))
    _spans(first)[:] = _spans(data)[:half]
    _spans(second)[:] = _spans(data)[half:]
    path = tmp_path / "lines.jsonl"
    path.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    conversations = read_traces(path)
    assert len(conversations.conversations) == 3  # one per trace: no session ids to join them
    expected = load_eval_set(EXPECTED)
    with pytest.raises(DataError, match="matches no eval case"):
        conversations.match(expected)  # "And in Rome?" opens no case
    single = load_eval_set(EXPECTED)
    single.eval_cases = [c for c in single.eval_cases if c.eval_id == "weather-oslo"]
    conversations.conversations = {k: v for k, v in conversations.conversations.items()
                                   if v[0].user_text == "Is it cold in Oslo?"}
    actual, traces = conversations.match(single)
    assert [c.eval_id for c in actual.eval_cases] == ["weather-oslo"] and "weather-oslo" in traces


def test_a_conversation_beside_the_cases_is_named_and_the_cases_are_scored(tmp_path: Path) -> None:
    """A trace export holds what else the app did too: one conversation that matches no case,
    when every case has its own, is left out and named; it used to refuse the file (every case lost)."""
    data = json.loads((FIXTURES / "langgraph.otlp.json").read_text())
    oslo = [s for s in _spans(data) if s["traceId"].startswith("824301")]
    other = json.loads(json.dumps(oslo).replace("Is it cold in Oslo?", "Hello there")
                       .replace("weather-oslo", "someone-else").replace("824301", "924301"))
    _spans(data).extend(other)
    path = tmp_path / "t.otlp.json"
    path.write_text(json.dumps(data))
    r = CliRunner().invoke(cli, ["score", str(EXPECTED), "--actual", str(path), "-o",
                                 str(tmp_path / "o.json")], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    said = " ".join(r.output.split())
    assert f"Note: {path}: conversation 'someone-else' not scored: matches no eval case" in said, said
    assert "'Hello there'" in said
    doc = json.loads((tmp_path / "o.json").read_text())
    assert sorted(c["eval_id"] for c in doc["eval_case_results"]) == ["weather-oslo", "weather-paris-rome"]
    # a case without its conversation: the one that matches none is named, as before
    data["resourceSpans"][0]["scopeSpans"][0]["spans"] = [s for s in _spans(data) if s not in oslo]
    path.write_text(json.dumps(data))
    r = CliRunner().invoke(cli, ["score", str(EXPECTED), "--actual", str(path), "-o",
                                 str(tmp_path / "o2.json")])
    assert r.exit_code == 2 and "conversation 'someone-else': matches no eval case" in r.output, r.output
    assert not (tmp_path / "o2.json").exists()
