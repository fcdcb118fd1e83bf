"""OTLP over gRPC (when grpcio is installed): spans the OpenTelemetry SDK made, sent through
a real gRPC channel with the service's generated stub, scored like those over HTTP; malformed
spans refused with INVALID_ARGUMENT, the server going on."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenteval.collector.grpc_receiver import GrpcReceiver
from agenteval.collector.scoring import COLLECTED_SET
from agenteval.store import RunStore
from tests.collector.helpers import live_collector

grpc = pytest.importorskip("grpc")
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402


def _sdk_request() -> trace_service_pb2.ExportTraceServiceRequest:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("chat m") as chat:  # a root span: done when it ends
        chat.set_attribute("gen_ai.operation.name", "chat")
        chat.set_attribute("gen_ai.input.messages",
                           '[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]')
        chat.set_attribute("gen_ai.output.messages",
                           '[{"role": "assistant", "parts": [{"type": "text", "content": "hello"}]}]')
    provider.shutdown()
    return encode_spans(memory.get_finished_spans())


def test_spans_over_grpc_are_scored_and_bad_ones_refused(tmp_path: Path) -> None:
    with live_collector(tmp_path) as live:
        server = GrpcReceiver(live.collector.receiver.assembler, "127.0.0.1", 0, log=live.logs.append)
        server.start()
        try:
            with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                stub = trace_service_pb2_grpc.TraceServiceStub(channel)
                bad = _sdk_request()
                bad.resource_spans[0].scope_spans[0].spans[0].trace_id = b"\x01"
                with pytest.raises(grpc.RpcError) as refused:
                    stub.Export(bad, timeout=30)
                assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert "traceId" in refused.value.details()
                stub.Export(_sdk_request(), timeout=30)
                (outcome,) = live.wait_for(1)
        finally:
            server.stop()
    assert (outcome.status, outcome.eval_set_id, outcome.turns) == ("scored", COLLECTED_SET, 1)
    assert server.counters.spans == 1 and server.counters.rejected == 1
    assert any(line.startswith("rejected a gRPC request") for line in live.logs)
    assert len(RunStore(tmp_path).list_runs()) == 1


def test_a_body_that_is_no_protobuf_is_refused_invalid_argument_logged_and_counted(tmp_path: Path) -> None:
    # gRPC's own deserializer refused it INTERNAL ("Exception deserializing request!"), with
    # nothing logged or counted by collect: a batch lost without a word, as over HTTP it is not
    with live_collector(tmp_path) as live:
        server = GrpcReceiver(live.collector.receiver.assembler, "127.0.0.1", 0, log=live.logs.append)
        server.start()
        try:
            with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                export = channel.unary_unary(
                    "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
                    request_serializer=lambda b: b, response_deserializer=lambda b: b)
                with pytest.raises(grpc.RpcError) as refused:
                    export(b"\xff\xff\xff not protobuf", timeout=30)
                assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert "not an ExportTraceServiceRequest" in refused.value.details()
                stub = trace_service_pb2_grpc.TraceServiceStub(channel)
                stub.Export(_sdk_request(), timeout=30)  # the server goes on
                live.wait_for(1)
        finally:
            server.stop()
    assert server.counters.rejected == 1 and server.counters.spans == 1
    assert any("not an ExportTraceServiceRequest" in line for line in live.logs), live.logs


def test_a_message_over_the_size_limit_is_refused_logged_and_counted(tmp_path: Path) -> None:
    # gRPC's core refused it RESOURCE_EXHAUSTED before a unary handler ran: nothing logged or
    # counted by collect, where every other refusal is. (The message is 520 bytes.)
    with live_collector(tmp_path) as live:
        server = GrpcReceiver(live.collector.receiver.assembler, "127.0.0.1", 0, log=live.logs.append,
                              max_message_bytes=400)
        server.start()
        try:
            with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                stub = trace_service_pb2_grpc.TraceServiceStub(channel)
                with pytest.raises(grpc.RpcError) as refused:
                    stub.Export(_sdk_request(), timeout=30)
                assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            deadline = time.monotonic() + 30  # (the server's thread logs it as the client hears it)
            while not server.counters.rejected and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            server.stop()
    assert (server.counters.rejected, server.counters.cancelled, server.counters.requests) == (1, 0, 0)
    assert any(line.startswith("rejected a gRPC request") and "is 520 bytes, over 400" in line
               for line in live.logs), live.logs


def test_an_upload_the_client_cancels_part_way_is_counted_and_logged_as_cancelled(tmp_path: Path) -> None:
    """A client that cancels its call before its message ended: no refusal (before, it was
    counted as one, and logged as a message over the size limit)."""
    import threading

    with live_collector(tmp_path) as live:
        server = GrpcReceiver(live.collector.receiver.assembler, "127.0.0.1", 0, log=live.logs.append)
        server.start()
        try:
            with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                export = channel.stream_unary(
                    "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
                    request_serializer=lambda b: b, response_deserializer=lambda b: b)
                release = threading.Event()

                def never_sent() -> Iterator[bytes]:
                    release.wait(30)
                    yield from ()

                # A cancel that reaches the server before its handler runs is never seen there
                # (nothing to count): a new call is cancelled later each time, until one is seen.
                deadline, wait, counters = time.monotonic() + 120, 0.05, server.counters
                while not (counters.cancelled or counters.rejected) and time.monotonic() < deadline:
                    call = export.future(never_sent(), timeout=300)
                    seen = time.monotonic() + wait
                    while not (counters.cancelled or counters.rejected) and time.monotonic() < seen:
                        time.sleep(0.01)
                    call.cancel()
                    wait *= 2
                    seen = time.monotonic() + 5  # the cancel reaching the server
                    while not (counters.cancelled or counters.rejected) and time.monotonic() < seen:
                        time.sleep(0.01)
                release.set()
        finally:
            server.stop()
    assert server.counters.rejected == 0 and server.counters.cancelled >= 1, live.logs
    assert any("cancelled by the client part-way" in line for line in live.logs), live.logs
