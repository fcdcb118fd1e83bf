"""The live receiver end to end: real OTLP/HTTP requests (the frameworks' recorded JSON exports,
and protobuf from the OpenTelemetry SDK's own exporter) to a collector on a free port, scored and
recorded in a run history; bad requests refused with OTLP status bodies, the receiver going on."""

from __future__ import annotations

import gzip
import http.client
import json
import socket
import time
from pathlib import Path

import httpx
import pytest
from google.rpc import status_pb2
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agenteval.collector import JudgeBudget, Limits
from agenteval.collector.receiver import BadRequest, decode
from agenteval.collector.scoring import COLLECTED_SET
from agenteval.models import ScriptedModel
from agenteval.schema import EvalConfig
from agenteval.store import RunStore, load_result
from tests.collector.helpers import TRACES, Live, live_collector, otlp_json


def _post(live: Live, body: bytes, content_type: str = "application/json", **headers: str) -> httpx.Response:
    return httpx.post(live.url, content=body, headers={"Content-Type": content_type, **headers}, timeout=30)


def test_framework_exports_over_http_json_are_scored_against_their_cases_and_recorded(tmp_path: Path) -> None:
    with live_collector(tmp_path, [TRACES / "expected.evalset.json"]) as live:
        # each file holds both conversations, under the same session ids (the eval ids): one
        # file after the other, else their turns would make one conversation
        for n, name in enumerate(("adk", "openai_agents")):
            reply = _post(live, (TRACES / f"{name}.otlp.json").read_bytes())
            assert reply.status_code == 200 and reply.json() == {}
            outcomes = live.wait_for(2 * n + 2)
    assert [(o.eval_set_id, o.status, o.passed, o.reason) for o in outcomes] == [
        ("traces", "scored", True, None)] * 4
    assert {o.eval_id for o in outcomes} == {"weather-paris-rome", "weather-oslo"}
    assert {o.turns for o in outcomes if o.eval_id == "weather-paris-rome"} == {2}
    runs = RunStore(tmp_path).list_runs()
    assert sorted(r.run_id for r in runs) == sorted(o.result_id for o in outcomes if o.result_id)
    # the stored document is the case's, with the conversation's spans as its trace
    doc = load_result(runs[0].result_path)
    case = doc.eval_case_results[0]
    assert case.eval_id in ("weather-paris-rome", "weather-oslo") and case.trace is not None
    assert doc.run is not None and str(doc.run.actual_file).startswith("collect:")


def _sdk_conversation(url: str, session: str, question: str, answer: str, turns: int = 1) -> None:
    """Spans made and sent by the OpenTelemetry SDK's OTLP/HTTP (protobuf) exporter: an agent
    run with one GenAI chat span per turn, in the GenAI conventions."""
    provider = TracerProvider(resource=Resource.create({"service.name": "sdk-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url)))
    tracer = provider.get_tracer("test")
    for n in range(turns):
        with tracer.start_as_current_span("invoke_agent helper") as agent:
            agent.set_attribute("gen_ai.conversation.id", session)
            with tracer.start_as_current_span("chat m") as chat:
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.set_attribute("gen_ai.conversation.id", session)
                chat.set_attribute("gen_ai.input.messages", json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": f"{question} {n}"}]}]))
                chat.set_attribute("gen_ai.output.messages", json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": f"{answer} {n}"}]}]))
    provider.shutdown()


def test_protobuf_from_the_sdk_exporter_unmatched_is_scored_reference_free(tmp_path: Path) -> None:
    with live_collector(tmp_path, [TRACES / "expected.evalset.json"]) as live:
        _sdk_conversation(live.url, "prod-session-1", "How do I reset my password?", "Use the link.", turns=2)
        (outcome,) = live.wait_for(1)
    assert (outcome.status, outcome.eval_set_id, outcome.eval_id, outcome.turns) == (
        "scored", COLLECTED_SET, "prod-session-1", 2)
    assert outcome.passed is False  # no get_weather call: the reference-free criterion says so
    (run,) = RunStore(tmp_path).list_runs()
    doc = load_result(run.result_path)
    actual = [p.actual_invocation for p in doc.eval_case_results[0].eval_metric_result_per_invocation]
    assert [i.user_content.text() for i in actual] == ["How do I reset my password? 0",
                                                       "How do I reset my password? 1"]
    assert actual[1].final_response is not None and actual[1].final_response.text() == "Use the link. 1"


def test_malformed_requests_get_otlp_errors_and_the_receiver_keeps_working(tmp_path: Path) -> None:
    with live_collector(tmp_path, [TRACES / "expected.evalset.json"]) as live:
        bad_proto = _post(live, b"\xff\xff\xff garbage", "application/x-protobuf")
        assert bad_proto.status_code == 400
        status = status_pb2.Status.FromString(bad_proto.content)
        assert status.code == 3 and "ExportTraceServiceRequest" in status.message
        bad_json = _post(live, b"{not json")
        assert bad_json.status_code == 400 and bad_json.json()["code"] == 3
        span = {"traceId": "zz", "spanId": "00f067aa0ba902b7", "name": "x", "startTimeUnixNano": "1"}
        bad_id = _post(live, otlp_json([span]))
        assert bad_id.status_code == 400 and "traceId" in bad_id.json()["message"]
        late = _post(live, otlp_json([{**span, "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
                                       "startTimeUnixNano": str(10**40)}]))
        assert late.status_code == 400 and "startTimeUnixNano: span 'x'" in late.json()["message"]
        assert _post(live, b"{}", "text/plain").status_code == 400
        assert _post(live, b"not gzip", Content_Encoding="gzip").status_code == 400
        bomb = gzip.compress(b" " * (live.collector.receiver.max_body_bytes + 1))
        assert _post(live, bomb, **{"Content-Encoding": "gzip"}).status_code == 413
        assert httpx.post(live.url.replace("/v1/traces", "/v1/logs"), content=b"{}").status_code == 404
        # a wrong method on the traces path is 405; any method on another path is 404
        assert httpx.get(live.url).status_code == 405
        assert httpx.put(live.url, content=b"{}").status_code == 405
        assert httpx.get(live.url.replace("/v1/traces", "/metrics")).status_code == 404
        assert live.collector.receiver.counters.rejected == 11
        assert len([line for line in live.logs if line.startswith("rejected")]) == 11
        # and a good export after all that is scored
        assert _post(live, (TRACES / "adk.otlp.json").read_bytes()).status_code == 200
        assert {o.eval_id for o in live.wait_for(2)} == {"weather-paris-rome", "weather-oslo"}


def test_gzip_json_is_accepted(tmp_path: Path) -> None:
    with live_collector(tmp_path, [TRACES / "expected.evalset.json"]) as live:
        body = gzip.compress((TRACES / "langgraph.otlp.json").read_bytes())
        assert _post(live, body, **{"Content-Encoding": "gzip"}).status_code == 200
        assert {o.eval_id for o in live.wait_for(2)} == {"weather-paris-rome", "weather-oslo"}


def test_a_batch_the_exporter_sends_again_is_scored_once_not_refused(tmp_path: Path) -> None:
    # an exporter that got no answer in time sends the batch again: the same spans twice
    limits = Limits(quiet_seconds=3600)  # both posts held together; scored when it stops
    with live_collector(tmp_path, [TRACES / "expected.evalset.json"], limits=limits) as live:
        body = (TRACES / "openai_agents.otlp.json").read_bytes()
        assert _post(live, body).status_code == 200
        assert _post(live, gzip.compress(body), **{"Content-Encoding": "gzip"}).status_code == 200
    outcomes = [o for o, _ in live.outcomes]
    assert [(o.status, o.passed) for o in outcomes] == [("scored", True)] * 2, outcomes
    assert live.collector.receiver.assembler.duplicate_spans == 24


def test_a_flood_of_spans_that_never_complete_stays_within_the_caps(tmp_path: Path) -> None:
    limits = Limits(quiet_seconds=3600, max_spans=500, max_traces=100)
    with live_collector(tmp_path, limits=limits) as live:
        for batch in range(20):  # 2,000 spans in 400 traces, none ever done
            spans = [{"traceId": f"{batch * 20 + t + 1:032x}", "spanId": f"{k + 1:016x}",
                      "parentSpanId": f"{k:016x}" if k else "", "name": "work",
                      "startTimeUnixNano": "1700000000000000000",
                      "attributes": [{"key": "session.id", "value": {"stringValue": f"s{batch}-{t}"}}]}
                     for t in range(20) for k in range(5)]
            assert _post(live, otlp_json(spans)).status_code == 200
            assembler = live.collector.receiver.assembler
            assert assembler.held <= 500 and assembler.open_traces <= 100
        assert assembler.evicted_traces == 300 and assembler.evicted_spans == 1500
        assert live.collector.receiver.counters.spans == 2000
        live.collector.stop(drain=False)
    assert live.outcomes == [] and RunStore(tmp_path).list_runs() == []


def test_judged_reference_free_criteria_keep_to_the_judge_budget(tmp_path: Path) -> None:
    judge = ScriptedModel(lambda req: json.dumps({"rationale": "fine", "verdict": "safe"}))
    free = EvalConfig.model_validate({"criteria": {
        "safety_v1": {"threshold": 0.5, "judge_model_options": {"judge_model": "j", "num_samples": 1}},
        "tool_trajectory_single_tool_use": {"threshold": 1.0, "tool_name": "lookup"}}})
    with live_collector(tmp_path, free=free, models={"j": judge}, budget=JudgeBudget(3)) as live:
        _sdk_conversation(live.url, "a", "hello", "hi", turns=2)  # 2 judge calls: within 3 a minute
        first = live.wait_for(1)[0]
        _sdk_conversation(live.url, "b", "hello", "hi", turns=2)  # 2 more: over the budget
        second = live.wait_for(2)[1]
    assert first.judged and first.reason is None
    assert not second.judged and second.reason is not None and "safety_v1 not scored" in second.reason
    assert len(judge.requests) == 2
    gating = {"safety_v1", "tool_trajectory_single_tool_use"}  # besides the informational ones
    scores = [gating & {m.metric_name for m in
                        load_result(r.result_path).eval_case_results[0].overall_eval_metric_results}
              for r in sorted(RunStore(tmp_path).list_runs(), key=lambda r: r.created)]
    assert scores == [{"safety_v1", "tool_trajectory_single_tool_use"}, {"tool_trajectory_single_tool_use"}]


def test_sampling_skips_whole_conversations(tmp_path: Path) -> None:
    with live_collector(tmp_path, [TRACES / "expected.evalset.json"], sample_rate=0.0) as live:
        assert _post(live, (TRACES / "adk.otlp.json").read_bytes()).status_code == 200
        assert {o.status for o in live.wait_for(2)} == {"sampled_out"}
    assert RunStore(tmp_path).list_runs() == []


def test_content_less_traces_are_skipped_with_the_capture_advice(tmp_path: Path) -> None:
    with live_collector(tmp_path, [TRACES / "expected.evalset.json"]) as live:
        assert _post(live, (TRACES / "adk_no_content.otlp.json").read_bytes()).status_code == 200
        outcomes = live.wait_for(2)
    assert {o.status for o in outcomes} == {"skipped"}
    assert all("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in (o.reason or "") for o in outcomes)


def test_a_criterion_the_judge_could_not_evaluate_gives_its_reason(tmp_path: Path) -> None:
    free = EvalConfig.model_validate({"criteria": {"safety_v1": {"threshold": 0.5}}})
    with live_collector(tmp_path, free=free, judge_model="openai-compat:x@http://127.0.0.1:9/v1") as live:
        _sdk_conversation(live.url, "a", "hello", "hi", turns=1)
        outcome = live.wait_for(1)[0]
    assert outcome.status == "scored" and not outcome.passed
    assert outcome.reason is not None and outcome.reason.startswith("safety_v1 not evaluated: judge error")


def test_a_client_that_disconnects_mid_body_is_logged_as_such_and_nothing_of_it_kept(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    body = (TRACES / "openai_agents.otlp.json").read_bytes()
    with live_collector(tmp_path, [TRACES / "expected.evalset.json"]) as live:
        port = live.collector.receiver.port
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                           b"Content-Length: %d\r\n\r\n" % len(body) + body[:len(body) // 2])
        deadline = time.monotonic() + 30
        while not live.logs and time.monotonic() < deadline:
            time.sleep(0.02)
        # then the exporter's retry, whole, is scored
        assert _post(live, body).status_code == 200
        assert {o.eval_id for o in live.wait_for(2)} == {"weather-paris-rome", "weather-oslo"}
    # a cancelled upload, not a refusal (no 400 was sent: nobody was there to read it)
    assert (live.collector.receiver.counters.rejected, live.collector.receiver.counters.cancelled) == (0, 1)
    (line,) = live.logs
    assert line.startswith("a request from 127.0.0.1 was cancelled part-way: "), line
    assert f"disconnected after {len(body) // 2} of {len(body)} bytes" in line, line
    assert "Traceback" not in capfd.readouterr().err  # no reply to a closed socket attempted



def test_a_chunked_body_is_read_like_one_with_a_length(tmp_path: Path) -> None:
    # a streamed body (e.g. gzip-compressed as it is sent) comes with Transfer-Encoding: chunked
    packed = gzip.compress((TRACES / "adk.otlp.json").read_bytes())
    with live_collector(tmp_path, [TRACES / "expected.evalset.json"]) as live:
        client = http.client.HTTPConnection("127.0.0.1", live.collector.receiver.port, timeout=30)
        pieces = iter([packed[i:i + 4000] for i in range(0, len(packed), 4000)])
        client.request("POST", "/v1/traces", body=pieces,
                       headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
                       encode_chunked=True)
        reply = client.getresponse()
        assert (reply.status, reply.read()) == (200, b"{}")
        client.close()
        assert {o.eval_id for o in live.wait_for(2)} == {"weather-paris-rome", "weather-oslo"}


def test_a_bad_or_oversized_chunked_body_is_refused(tmp_path: Path) -> None:
    with live_collector(tmp_path) as live:
        def raw(request: bytes) -> bytes:
            with socket.create_connection(("127.0.0.1", live.collector.receiver.port), timeout=30) as client:
                client.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                               b"Transfer-Encoding: chunked\r\n\r\n" + request)
                return client.makefile("rb").readline()
        assert raw(b"zz\r\n{}\r\n0\r\n\r\n").startswith(b"HTTP/1.1 400")
        live.collector.receiver.max_body_bytes = 10
        assert raw(b"6\r\n{\"a\":\r\n6\r\n 1234}\r\n0\r\n\r\n").startswith(b"HTTP/1.1 413")
    assert [line.split(":", 1)[1].strip()[:3] for line in live.logs] == ["400", "413"]


def test_gzip_of_several_members_is_read_whole_and_one_cut_short_or_trailed_is_refused() -> None:
    body = (TRACES / "adk.otlp.json").read_bytes()
    packed = gzip.compress(body)
    # gzip allows members one after the other (a body compressed piece by piece): only the first
    # was read, so its JSON was "malformed" (or, were the pieces whole exports, the rest dropped)
    pieces = gzip.compress(body[:1000]) + gzip.compress(body[1000:])
    assert len(decode(pieces, "application/json", "gzip")) == 15
    assert len(decode(packed + b"\0\0", "application/json", "gzip")) == 15  # padding, as gzip reads it
    with pytest.raises(BadRequest, match="gzip data ends early"):
        decode(packed[:len(packed) // 2], "application/json", "gzip")
    with pytest.raises(BadRequest, match="bytes after its gzip data"):  # was read, the rest ignored
        decode(packed + b"more", "application/json", "gzip")


def test_a_request_after_the_stop_is_refused_as_retryable_not_answered_200_and_lost(tmp_path: Path) -> None:
    # an exporter's keep-alive connection outlives the listening socket: a batch sent on it after
    # the stop was answered 200 and fed to an assembler whose conversations were already held
    # (or scored), so it was lost; now 503, which OTLP exporters send again (to the next collect)
    body = (TRACES / "openai_agents.otlp.json").read_bytes()
    headers = {"Content-Type": "application/json"}
    limits = Limits(quiet_seconds=3600)
    with live_collector(tmp_path, limits=limits) as live, httpx.Client(timeout=30) as client:
        assert client.post(live.url, content=body, headers=headers).status_code == 200
        live.collector.stop(drain=False)
        assert len(live.collector.receiver.assembler.hold().conversations) == 2
        late = client.post(live.url, content=body, headers=headers)  # the same connection
        assert late.status_code == 503, late.text
        assert "stopping" in late.json()["message"]
        assert live.collector.receiver.assembler.hold().conversations == []
        assert any("503" in line for line in live.logs), live.logs
