"""agenteval's own export re-ingested (issue 26, item 1.6): a run exported with --otlp_endpoint to
a real OTLP/HTTP receiver, written as OTLP/JSON, then scored from those traces, gives the run's
scores, for a plain-callable agent (no model call: its invocation spans carry the messages) and
for a built-in agent on a scripted OpenAI-compatible server (invocation_duration_v1 included)."""

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from tests.fake_server import FakeServer, Step, reply
from tests.helpers import call, eval_set, inv

trace_service = pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")
json_format = pytest.importorskip("google.protobuf.json_format")

CALLABLE = '''
def root_agent(text, state):
    return {"response": "answer to " + text, "tool_calls": [{"name": "lookup", "args": {"q": text},
                                                            "response": {"ok": True}}]}
'''

BUILTIN = '''
from agenteval.agents import Agent


def add(a: int, b: int) -> int:
    """Adds two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


root_agent = Agent(name="calc", model="local", instruction="Add numbers with the add tool.", tools=[add])
'''


@pytest.fixture
def received() -> Iterator[tuple[str, list[Any]]]:
    """An OTLP/HTTP receiver on 127.0.0.1: (its URL, the ExportTraceServiceRequests it got)."""
    requests: list[Any] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            request = trace_service.ExportTraceServiceRequest()
            request.ParseFromString(self.rfile.read(int(self.headers["content-length"])))
            requests.append(request)
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", requests
    server.shutdown()
    server.server_close()


def _hex(value: Any) -> Any:
    if isinstance(value, list):
        return [_hex(v) for v in value]
    if not isinstance(value, dict):
        return value
    return {k: base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") else _hex(v)
            for k, v in value.items()}


def _write_otlp_json(requests: list[Any], path: Path) -> None:
    path.write_text("\n".join(json.dumps(_hex(json_format.MessageToDict(r))) for r in requests))


def _scores(path: Path) -> dict[str, dict[str, Any]]:
    doc = json.loads(path.read_text())
    return {c["eval_id"]: {m["metric_name"]: m["score"] for m in c["overall_eval_metric_results"]}
            for c in doc["eval_case_results"]}


def _round_trip(agent: Path, evalset: Path, url: str, requests: list[Any], tmp_path: Path,
                extra: list[str]) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    run = tmp_path / "run.json"
    r = CliRunner().invoke(cli, ["eval", str(agent), str(evalset), "--no_history", "-o", str(run),
                                 "--otlp_endpoint", url, *extra])
    assert r.exit_code in (0, 1) and "Exported" in r.output, r.output  # 1: a case failed
    code = r.exit_code
    traces = tmp_path / "traces.otlp.json"
    _write_otlp_json(requests, traces)
    rescored = tmp_path / "rescored.json"
    r = CliRunner().invoke(cli, ["score", str(evalset), "--actual", str(traces), "-o", str(rescored)])
    assert r.exit_code == code, r.output
    return _scores(run), _scores(rescored)


def test_a_plain_callable_agents_export_scores_the_same(received: tuple[str, list[Any]],
                                                         tmp_path: Path) -> None:
    url, requests = received
    agent = tmp_path / "my_agent"
    agent.mkdir()
    (agent / "agent.py").write_text(CALLABLE)
    s = eval_set("myset", {"good": [inv("x", "answer to x", [call("lookup", q="x")]),
                                    inv("y", "answer to y", [call("lookup", q="y")])],
                           "bad": [inv("z", "something else", [call("other")])]})
    evalset = agent / "myset.evalset.json"
    evalset.write_text(s.model_dump_json(exclude_none=True))
    run, rescored = _round_trip(agent, evalset, url, requests, tmp_path, [])
    assert rescored == run
    assert run["good"]["tool_trajectory_avg_score"] == 1.0 and run["bad"]["tool_trajectory_avg_score"] == 0.0


def test_a_builtin_agents_export_scores_the_same_durations_included(received: tuple[str, list[Any]],
                                                                     tmp_path: Path) -> None:
    url, requests = received
    agent = tmp_path / "calc"
    agent.mkdir()
    (agent / "agent.py").write_text(BUILTIN)
    s = eval_set("calc", {"sum": [inv("What is 2 + 3?", "It is 5.", [call("add", a=2, b=3)])]})
    evalset = agent / "calc.evalset.json"
    evalset.write_text(s.model_dump_json(exclude_none=True))
    asks = reply("")
    asks["choices"][0]["message"] = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}]}
    asks["choices"][0]["finish_reason"] = "tool_calls"
    server = FakeServer(steps=[Step(body=asks, delay=0.05), Step(body=reply("It is 5."), delay=0.05)]).start()
    try:
        run, rescored = _round_trip(agent, evalset, url, requests, tmp_path,
                                    ["--agent_model", f"openai-compat:m@{server.base_url}"])
    finally:
        server.close()
    assert rescored == run
    assert run["sum"]["tool_trajectory_avg_score"] == 1.0
    assert run["sum"]["invocation_duration_v1"] is not None and run["sum"]["invocation_duration_v1"] >= 0.1


ADK = '''
from google.adk.agents import LlmAgent
from google.adk.models import LlmResponse
from google.genai import types

from tests.agents.scripted_adk import ScriptedLlm


def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


def _reply(part):
    return LlmResponse(content=types.Content(role="model", parts=[part]),
                       usage_metadata=types.GenerateContentResponseUsageMetadata(
                           prompt_token_count=20, candidates_token_count=5, total_token_count=25))


root_agent = LlmAgent(name="calc", tools=[add], model=ScriptedLlm(delay=0.05, script=[
    _reply(types.Part(function_call=types.FunctionCall(name="add", args={"a": 2, "b": 3}))),
    _reply(types.Part(text="It is 5."))]))
'''


def test_an_adk_agents_export_scores_the_same(received: tuple[str, list[Any]], tmp_path: Path) -> None:
    pytest.importorskip("google.adk")
    url, requests = received
    agent = tmp_path / "calc"
    agent.mkdir()
    (agent / "agent.py").write_text(ADK)
    s = eval_set("calc", {"sum": [inv("What is 2 + 3?", "It is 5.", [call("add", a=2, b=3)])]})
    evalset = agent / "calc.evalset.json"
    evalset.write_text(s.model_dump_json(exclude_none=True))
    run, rescored = _round_trip(agent, evalset, url, requests, tmp_path, [])
    assert rescored == run
    assert run["sum"]["tool_trajectory_avg_score"] == 1.0 and run["sum"]["inference_call_count_v1"] == 2
