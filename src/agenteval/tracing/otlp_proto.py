"""Reading OTLP/protobuf trace exports (`ExportTraceServiceRequest`, what OTLP/HTTP exporters
send with `Content-Type: application/x-protobuf`) into the same `OtlpSpan`s as OTLP/JSON
(`agenteval.tracing.otlp_json`): hex ids, times in epoch seconds, attribute values unwrapped.

Decoding needs the `opentelemetry-proto` package (installed with agenteval's `otel` extra); a
malformed message, an id of the wrong length or a span without a start time is a DataError
naming `source` and the span's path in the message.
"""

from __future__ import annotations

from typing import Any

from agenteval.errors import DataError
from agenteval.tracing.otlp_json import OtlpSpan, check_times


def _decoder() -> Any:
    try:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
    except ImportError:  # pragma: no cover - the otel extra is part of dev
        raise DataError(None, "Content-Type", "OTLP/protobuf needs the opentelemetry-proto package: "
                        "pip install 'agenteval[otel]' (or send OTLP/JSON)") from None
    return trace_service_pb2.ExportTraceServiceRequest


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    raw = getattr(v, kind)
    if kind == "array_value":
        return [_value(x) for x in raw.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in raw.values}
    if kind == "bytes_value":
        return bytes(raw).hex()
    return raw  # str, bool, int, float as they are


def _attributes(items: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in items}


def _hex(raw: bytes, size: int, where: str, source: str, required: bool = True) -> str | None:
    if not raw.strip(b"\0") and not required:
        return None
    if len(raw) != size or not raw.strip(b"\0"):
        raise DataError(source, where, f"must be {size} bytes and not all zero, got {len(raw)} bytes")
    return raw.hex()


def read_otlp_proto(data: bytes, source: str = "OTLP/protobuf") -> list[OtlpSpan]:
    """Every span of one serialized ExportTraceServiceRequest."""
    request = _decoder()()
    try:
        request.ParseFromString(data)
    except Exception as e:  # protobuf's DecodeError; its type depends on the runtime
        raise DataError(source, "", f"not an ExportTraceServiceRequest: {e}") from None
    return request_spans(request, source)


def request_spans(request: Any, source: str = "OTLP/protobuf") -> list[OtlpSpan]:
    """Every span of a parsed ExportTraceServiceRequest (as gRPC hands it over)."""
    out = []
    for r, rs in enumerate(request.resource_spans):
        resource = _attributes(rs.resource.attributes)
        for s, ss in enumerate(rs.scope_spans):
            for k, span in enumerate(ss.spans):
                where = f"resourceSpans[{r}].scopeSpans[{s}].spans[{k}]"
                if not span.start_time_unix_nano:
                    raise DataError(source, f"{where}.startTimeUnixNano", "field required")
                check_times(span.start_time_unix_nano / 1e9, span.end_time_unix_nano / 1e9 or None,
                            f"{where}.endTimeUnixNano", source, span.name)
                code = span.status.code
                out.append(OtlpSpan(
                    trace_id=str(_hex(span.trace_id, 16, f"{where}.traceId", source)),
                    span_id=str(_hex(span.span_id, 8, f"{where}.spanId", source)),
                    parent_id=_hex(span.parent_span_id, 8, f"{where}.parentSpanId", source, required=False),
                    name=span.name, start=span.start_time_unix_nano / 1e9,
                    end=span.end_time_unix_nano / 1e9 if span.end_time_unix_nano else None,
                    attributes=_attributes(span.attributes),
                    status={1: "ok", 2: "error"}.get(code, "unset"),
                    error=span.status.message or None if code == 2 else None,
                    resource=resource, where=where))
    return out


__all__ = ["read_otlp_proto", "request_spans"]
