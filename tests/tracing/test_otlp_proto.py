"""Reading OTLP/protobuf exports: a span that cannot be right is refused naming its place."""

from collections.abc import Callable
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agenteval.errors import DataError
from agenteval.tracing.otlp_proto import read_otlp_proto


def _request(start: int, end: int) -> bytes:
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = b"\x01" * 16, b"\x02" * 8, "chat m"
    span.start_time_unix_nano, span.end_time_unix_nano = start, end
    return request.SerializeToString()


def test_a_span_that_ends_before_it_starts_is_refused() -> None:
    # its negative duration would be summed into the turn's model time
    with pytest.raises(DataError, match=r"request body: resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]\."
                       r"endTimeUnixNano: span 'chat m' ends before it starts "
                       r"\(1000 < startTimeUnixNano 5000\)"):
        read_otlp_proto(_request(5000, 1000), "request body")
    (span,) = read_otlp_proto(_request(5000, 0), "request body")  # not ended: kept, without an end
    assert span.end is None and span.start == 5e-6


@pytest.mark.parametrize("change", [
    {},
    {"name": ""},  # OTLP: an empty name is an unknown one; proto3's JSON leaves it out
    {"start_time_unix_nano": 0},  # unset: refused by both
    {"end_time_unix_nano": 0},  # not ended: kept without an end by both
    {"parent_span_id": b"\x03" * 8},
    {"trace_id": b"\x00" * 16},  # all zero: refused by both
])
def test_the_json_and_protobuf_readers_agree(tmp_path: Path, change: dict[str, object]) -> None:
    from google.protobuf.json_format import MessageToJson

    from agenteval.tracing.otlp_json import read_otlp_json

    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = b"\x01" * 16, b"\x02" * 8, "chat m"
    span.start_time_unix_nano, span.end_time_unix_nano = 5000, 6000
    for key, value in change.items():
        setattr(span, key, value)
    path = tmp_path / "t.otlp.json"
    path.write_text(MessageToJson(request))  # the same request as protobuf's JSON printer writes it

    def read(reader: Callable[[], object]) -> object:
        try:
            return reader()
        except DataError as e:
            return e.path  # the field refused (the words may differ: hex, or bytes)

    from_json = read(lambda: read_otlp_json(path, path.read_text()))
    from_proto = read(lambda: read_otlp_proto(request.SerializeToString(), str(path)))
    assert from_json == from_proto
