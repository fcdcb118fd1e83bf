"""`agenteval eval_set from_trace` (issue 26, item 3): an eval case from a stored trace or run,
without running the agent; scoring the trace against the case it made passes."""

import json
import re
from pathlib import Path

from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.datasets import load_eval_set
from tests.helpers import call, eval_set, inv

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"

AGENT = '''
def root_agent(text, state):
    state["asked"] = state.get("asked", 0) + 1
    return {"response": "answer to " + text, "tool_calls": [{"name": "lookup", "args": {"q": text},
                                                            "response": {"ok": True}}]}
'''


def _from_trace(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["eval_set", "from_trace", *args])
    return r.exit_code, r.output


def test_a_trace_becomes_a_case_that_its_trace_passes(tmp_path: Path) -> None:
    into = tmp_path / "made.evalset.json"
    code, output = _from_trace(str(TRACES / "openai_agents_group.otlp.json"), "--into", str(into),
                               "--eval_id", "weather-chat")
    assert code == 0, output
    assert "Added case weather-chat (2 turn(s), 3 tool call(s))" in output
    made = load_eval_set(into)
    assert made.eval_set_id == "made"
    (case,) = made.eval_cases
    turns = case.conversation or []
    assert [t.user_content.text() for t in turns] == ["What's the weather in Paris and in Rome?",
                                                       "And in Oslo?"]
    assert [(c.name, c.args) for c in turns[0].tool_calls()] == [("get_weather", {"city": "Paris"}),
                                                                 ("get_weather", {"city": "Rome"})]
    assert turns[1].final_response is not None and turns[1].final_response.text() == (
        "It is -2°C and snowing in Oslo.")
    assert all(t.duration is None for t in turns)  # the run's timings are no expectation
    other = tmp_path / "other.evalset.json"  # no session id: the case is named after the trace
    code, output = _from_trace(str(TRACES / "openai_agents_group.otlp.json"), "--into", str(other))
    assert code == 0, output
    (made_id,) = [c.eval_id for c in load_eval_set(other).eval_cases]
    assert re.fullmatch(r"trace_[0-9a-f]{32}", made_id), made_id
    config = tmp_path / "cfg.json"
    criteria = {"tool_trajectory_avg_score": 1.0, "response_match_score": 1.0}
    config.write_text(json.dumps({"criteria": criteria}))
    traces = TRACES / "openai_agents_group.otlp.json"
    r = CliRunner().invoke(cli, ["score", str(into), "--actual", str(traces), "--config_file_path",
                                 str(config), "-o", str(tmp_path / "r.json")])
    assert r.exit_code == 0, r.output


def test_which_conversation_must_be_said_and_a_duplicate_id_is_refused(tmp_path: Path) -> None:
    into = tmp_path / "made.evalset.json"
    code, output = _from_trace(str(TRACES / "adk.otlp.json"), "--into", str(into))
    assert code == 2 and "2 conversations: say which with --case" in output and "'weather-oslo'" in output
    assert not into.exists()
    code, output = _from_trace(str(TRACES / "adk.otlp.json"), "--case", "weather-oslo", "--into", str(into))
    assert code == 0, output
    before = into.read_bytes()
    code, output = _from_trace(str(TRACES / "adk.otlp.json"), "--case", "weather-oslo", "--into", str(into))
    assert code == 2 and str(into) in output and "already has a case 'weather-oslo'" in output
    assert into.read_bytes() == before
    code, output = _from_trace(str(TRACES / "adk.otlp.json"), "--case", "nope", "--into", str(into))
    assert code == 2 and "no conversation 'nope'" in output
    code, output = _from_trace(str(TRACES / "adk_no_content.otlp.json"), "--case", "weather-oslo",
                               "--into", str(into))
    assert code == 2 and "the spans carry no messages" in output and into.read_bytes() == before


def test_a_run_becomes_a_case_with_its_session_into_an_existing_set(tmp_path: Path) -> None:
    agent = tmp_path / "my_agent"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    s = eval_set("myset", {"good": [inv("x", "answer to x", [call("lookup", q="x")]),
                                    inv("y", "answer to y", [call("lookup", q="y")])]})
    evalset = agent / "myset.evalset.json"
    evalset.write_text(s.model_dump_json(exclude_none=True))
    run = tmp_path / "run.json"
    r = CliRunner().invoke(cli, ["eval", str(agent), str(evalset), "--no_history", "-o", str(run)])
    assert r.exit_code == 0, r.output
    code, output = _from_trace(str(run), "--into", str(evalset))
    assert code == 2 and "already has a case 'good'" in output
    code, output = _from_trace(str(run), "--into", str(evalset), "--eval_id", "good_again")
    assert code == 0, output
    made = {c.eval_id: c for c in load_eval_set(evalset).eval_cases}
    assert sorted(made) == ["good", "good_again"]
    again = made["good_again"]
    assert again.final_session_state == {"asked": 2}
    assert [(t.user_content.text(), t.final_response.text() if t.final_response else None,
             [(c.name, c.args) for c in t.tool_calls()]) for t in again.conversation or []] == [
        ("x", "answer to x", [("lookup", {"q": "x"})]), ("y", "answer to y", [("lookup", {"q": "y"})])]


def test_a_file_that_is_neither_a_trace_nor_a_result_is_named_as_such(tmp_path: Path) -> None:
    source = tmp_path / "other.json"
    source.write_text("{}")
    code, output = _from_trace(str(source), "--into", str(tmp_path / "made.evalset.json"))
    assert code == 2 and "neither an OTLP/JSON trace nor a result document" in output, output
    source.write_text("[]")
    code, output = _from_trace(str(source), "--into", str(tmp_path / "made.evalset.json"))
    assert code == 2 and "result document (expected a result document" in output, output


def test_an_eval_id_that_file_colon_id_cannot_pick_is_refused(tmp_path: Path) -> None:
    into = tmp_path / "made.evalset.json"
    code, output = _from_trace(str(TRACES / "adk.otlp.json"), "--case", "weather-oslo", "--into", str(into),
                               "--eval_id", "oslo,1")
    assert code == 2 and "--eval_id: 'oslo,1' holds ',' or ':'" in output, output
    assert not into.exists()


def test_an_empty_eval_id_is_refused_not_taken_for_the_default(tmp_path: Path) -> None:
    # `--eval_id ""` (an unset shell variable) made the case under the conversation's id, exit 0
    into = tmp_path / "made.evalset.json"
    code, output = _from_trace(str(TRACES / "adk.otlp.json"), "--case", "weather-oslo", "--into", str(into),
                               "--eval_id", "")
    assert code == 2 and "--eval_id: '' is blank" in output, output
    assert not into.exists()


def test_an_integer_beyond_64_bits_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """An eval set cannot hold it (its streaming reader refuses it): the case is not written,
    and the error names the trace, the conversation and where the integer would have gone;
    an `intValue` attribute beyond OTLP's int64 is refused by the trace reader, naming it."""
    text = (TRACES / "adk.otlp.json").read_text()
    big = tmp_path / "big.otlp.json"
    big.write_text(text.replace('\\"arguments\\":{\\"city\\":\\"Oslo\\"}',
                                '\\"arguments\\":{\\"city\\":\\"Oslo\\",\\"n\\":123456789012345678901234567890}'))
    into = tmp_path / "made.evalset.json"
    code, output = _from_trace(str(big), "--case", "weather-oslo", "--into", str(into))
    assert code == 2 and not into.exists(), output
    said = " ".join(output.split())
    assert f"{big}: weather-oslo.conversation[0].intermediate_data.tool_uses[0].args.n: an integer beyond " \
        "64 bits" in said, said
    doc = json.loads(text)
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"].append(
        {"key": "count", "value": {"intValue": str(2**63)}})
    wide = tmp_path / "wide.otlp.json"
    wide.write_text(json.dumps(doc))
    code, output = _from_trace(str(wide), "--case", "weather-oslo", "--into", str(into))
    said = " ".join(output.split())
    assert code == 2 and not into.exists(), output
    assert "resourceSpans[0].scopeSpans[0].spans[0].attributes[" in said, said
    assert "outside OTLP's int64" in said, said


def _genai_trace(path: Path, user: str, reply: list[dict[str, object]]) -> None:
    """One turn in the GenAI conventions: an agent run, one chat span (user text in, `reply` out)."""
    def span(n: int, name: str, attributes: dict[str, str]) -> dict[str, object]:
        return {"traceId": "a" * 32, "spanId": f"{n:016x}", "name": name, "startTimeUnixNano": str(n),
                "endTimeUnixNano": str(n + 10), **({"parentSpanId": f"{1:016x}"} if n > 1 else {}),
                "attributes": [{"key": k, "value": {"stringValue": v}}
                               for k, v in {"gen_ai.conversation.id": "s1", **attributes}.items()]}
    messages = [{"role": "user", "parts": [{"type": "text", "content": user}]}] if user else [
        {"role": "system", "parts": [{"type": "text", "content": "You are helpful."}]}]
    chat = span(2, "chat m", {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(messages),
                              "gen_ai.output.messages": json.dumps(reply)})
    spans = [span(1, "invoke_agent a", {}), chat]
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))


def test_a_turn_without_a_user_message_or_a_final_response_is_no_case(tmp_path: Path) -> None:
    """It would be written as an empty expected message or answer (every real answer then fails
    response matching): refused, naming the conversation, the turn and the span; nothing written."""
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}]
    asked = [{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "get_weather",
                                              "arguments": {"city": "Oslo"}}]}]
    into = tmp_path / "made.evalset.json"
    for user, reply, missing in (("", answer, "no user message"), ("Oslo?", asked, "no final response")):
        trace = tmp_path / "t.otlp.json"
        _genai_trace(trace, user, reply)
        code, output = _from_trace(str(trace), "--into", str(into))
        said = " ".join(output.split())
        assert code == 2 and not into.exists(), output
        assert f"{trace}: conversation 's1' turn 1 (resourceSpans[0].scopeSpans[0].spans[1], span " \
            f"'chat m'): {missing}" in said, said
    _genai_trace(trace, "Oslo?", answer)
    code, output = _from_trace(str(trace), "--into", str(into))
    assert code == 0 and [c.eval_id for c in load_eval_set(into).eval_cases] == ["s1"], output


def test_a_legacy_file_into_is_refused_not_rewritten(tmp_path: Path) -> None:
    """ADK's `.test.json` list of turns: adding a case wrote it back in the eval-set format (exit 0),
    the legacy file, the only copy of what a faulty conversion would lose, gone."""
    legacy = Path(__file__).resolve().parents[1] / "fixtures" / "adk" / "home_automation_agent"
    into = tmp_path / "old.test.json"
    into.write_bytes((legacy / "simple_test2.test.json").read_bytes())
    before = into.read_bytes()
    code, output = _from_trace(str(TRACES / "adk.otlp.json"), "--case", "weather-oslo", "--into", str(into))
    said = " ".join(output.split())
    assert code == 2 and f"{into}: a legacy test file" in said and "agenteval migrate" in said, output
    assert into.read_bytes() == before
