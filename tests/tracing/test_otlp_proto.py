"""Reading OTLP/protobuf exports: a span that cannot be right is refused naming its place."""

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
