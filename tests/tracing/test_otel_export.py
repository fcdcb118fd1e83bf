"""Traces exported over OTLP/HTTP to a real receiver: an HTTP server on 127.0.0.1 that decodes
the protobuf ExportTraceServiceRequest, as a collector does."""

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from tests.helpers import call, eval_set, inv

trace_service = pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")

AGENT = '''
def root_agent(text, state):
    return {"response": "answer to " + text, "tool_calls": [{"name": "lookup", "args": {"q": text},
                                                            "response": {"ok": True}}]}
'''


class Receiver:
    def __init__(self) -> None:
        self.requests: list[Any] = []
        self.paths: list[str] = []
        self.url = ""


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["content-length"]))
            request = trace_service.ExportTraceServiceRequest()
            request.ParseFromString(body)
            state.requests.append(request)
            state.paths.append(self.path)
            reply = trace_service.ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind != "array_value" else [x.string_value for x in v.array_value.values]


def _project(tmp_path: Path) -> Path:
    agent = tmp_path / "my_agent"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    s = eval_set("myset", {"good": [inv("x", "answer to x", [call("lookup", q="x")])]})
    (agent / "myset.evalset.json").write_text(s.model_dump_json(exclude_none=True))
    return agent


def test_eval_exports_the_recorded_spans_to_an_otlp_receiver(receiver: Receiver, tmp_path: Path) -> None:
    agent = _project(tmp_path)
    out = tmp_path / "r.json"
    r = CliRunner().invoke(cli, ["eval", str(agent), "myset", "--no_history", "-o", str(out),
                                 "--otlp_endpoint", receiver.url])
    assert r.exit_code == 0, r.output
    assert receiver.paths == ["/v1/traces"] and "Exported 5 spans to" in r.output
    (request,) = receiver.requests
    (resource_spans,) = request.resource_spans
    resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
    assert resource["service.name"] == "agenteval" and resource["agenteval.run_id"]
    spans = [s for scope in resource_spans.scope_spans for s in scope.spans]
    document = json.loads(out.read_text())["eval_case_results"][0]["trace"]
    # the same spans, ids, parents and attributes as in the result document
    assert sorted(s.span_id.hex() for s in spans) == sorted(s["span_id"] for s in document["spans"])
    assert {s.trace_id.hex() for s in spans} == {document["trace_id"]}
    by_name = {s.name: s for s in spans}
    tool = by_name["execute_tool lookup"]
    attrs = {a.key: _value(a.value) for a in tool.attributes}
    assert attrs["gen_ai.tool.name"] == "lookup" and attrs["gen_ai.tool.call.arguments"] == '{"q": "x"}'
    assert attrs["openinference.span.kind"] == "TOOL"
    assert tool.parent_span_id == by_name["invoke_agent root_agent"].span_id
    assert by_name["invocation 0"].parent_span_id == by_name["case good"].span_id
    assert tool.end_time_unix_nano >= tool.start_time_unix_nano > 0


def test_the_standard_variable_is_honoured_and_a_dead_collector_is_a_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agenteval.tracing import otel

    # The SDK retries a refused connection with backoffs of 1, 2, 4 s (20% jitter) until the
    # export's deadline: with the default 10 s the test slept 7 s. A 2.5 s deadline gives up
    # before the second backoff (1.6 s or more) after one retry: two tries.
    monkeypatch.setitem(otel.export_case_runs.__kwdefaults__, "timeout", 2.5)
    agent = _project(tmp_path)
    out = tmp_path / "r.json"
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}  # discard port: nobody listens
    r = CliRunner().invoke(cli, ["eval", str(agent), "myset", "--no_history", "-o", str(out)], env=env)
    assert r.exit_code == 0, r.output  # the run's outcome (its case passed), not 2
    assert "warning: traces not exported: http://127.0.0.1:9/v1/traces: the OTLP collector did not " \
        "take the 5 spans: not reachable ([Errno 111] Connection refused; 2 tries)" in r.stderr, r.stderr
    assert out.is_file()  # the run's results are kept


def test_a_refused_export_says_why_once_without_the_sdks_log_lines(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """The SDK's own WARNING/ERROR log lines (its retries, its failure) are not printed beside
    agenteval's error; the error carries their reason: the HTTP status that refused the spans."""
    import logging

    from agenteval.errors import AgentEvalError
    from agenteval.tracing import otel

    class Refuse(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_error(400, "bad spans")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    agent = _project(tmp_path)
    out = tmp_path / "r.json"
    r = CliRunner().invoke(cli, ["eval", str(agent), "myset", "--no_history", "-o", str(out)])
    assert r.exit_code == 0, r.output
    from agenteval.schema import EvalSetResult
    result = EvalSetResult.model_validate_json(out.read_text())
    logger = logging.getLogger("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    try:
        with pytest.raises(AgentEvalError, match=r"take the \d+ spans: refused \(HTTP 400 bad spans\)"):
            otel.export([result], url)
    finally:
        server.shutdown()
        server.server_close()
    assert "Failed to export" not in capfd.readouterr().err  # logging's last-resort handler is stderr
    assert logger.propagate and not logger.handlers  # the logger is left as it was


def test_nothing_is_exported_or_imported_without_an_endpoint(tmp_path: Path) -> None:
    import subprocess
    import sys

    agent = _project(tmp_path)
    # `cli`, not the console script's `main`: `main` may end the process with os._exit once its
    # output is flushed (cli.teardown), before the check below could print.
    code = ("import sys; from agenteval.cli.main import cli\n"
            f"try:\n    cli(['eval', {str(agent)!r}, 'myset', '--no_history'])\n"
            "except SystemExit:\n    pass\n"
            "print('OTEL-SDK', 'opentelemetry.sdk' in sys.modules)")
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("OTEL_")}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "OTEL-SDK False" in p.stdout, p.stdout + p.stderr
