"""Exporting recorded traces over OTLP/HTTP to any OpenTelemetry collector (Phoenix, Langfuse,
Jaeger, the OpenTelemetry Collector).

The spans were recorded during the run (`agenteval.tracing.recorder`); this turns them into the
OpenTelemetry SDK's span objects, ids and times unchanged, and sends them with the SDK's OTLP
exporter (protobuf over HTTP). The SDK is an optional extra (`pip install 'agenteval[otel]'`),
imported only here and only when an export is asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agenteval.errors import AgentEvalError
from agenteval.schema import EvalSetResult
from agenteval.schema.trace import Span, Trace

TRACES_PATH = "/v1/traces"


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL for `endpoint`: a base URL (as OTEL_EXPORTER_OTLP_ENDPOINT is)
    gets `/v1/traces` appended; a URL already ending in it is kept."""
    url = endpoint.rstrip("/")
    return url if url.endswith(TRACES_PATH) else url + TRACES_PATH


def _sdk() -> Any:
    try:
        from opentelemetry.exporter.otlp.proto.http import trace_exporter
    except ImportError as e:
        raise AgentEvalError("exporting traces needs the OpenTelemetry SDK and its OTLP exporter: "
                             "pip install 'agenteval[otel]'") from e
    return trace_exporter


def _spans(results: Sequence[EvalSetResult], run_id: str | None) -> list[Any]:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    resource = Resource.create({"service.name": "agenteval",
                                **({"agenteval.run_id": run_id} if run_id else {})})
    out: list[Any] = []

    def context(trace: Trace, span_id: str) -> Any:
        return SpanContext(int(trace.trace_id, 16), int(span_id, 16), is_remote=False,
                           trace_flags=TraceFlags(TraceFlags.SAMPLED))

    def one(trace: Trace, span: Span) -> Any:
        status = (Status(StatusCode.ERROR, span.error) if span.status == "error"
                  else Status(StatusCode.OK))
        end = span.end if span.end is not None else span.start
        return ReadableSpan(
            name=span.name, context=context(trace, span.span_id),
            parent=context(trace, span.parent_id) if span.parent_id else None,
            resource=resource, attributes=dict(span.attributes),
            kind=SpanKind.CLIENT if span.kind in ("llm", "judge") else SpanKind.INTERNAL,
            start_time=int(span.start * 1e9), end_time=int(end * 1e9), status=status)

    for result in results:
        for case in result.eval_case_results:
            if case.trace is not None:
                out += [one(case.trace, s) for s in case.trace.spans]
    return out


def export(results: Sequence[EvalSetResult], endpoint: str, *, headers: Mapping[str, str] | None = None,
           timeout: float = 10.0, run_id: str | None = None) -> int:
    """Sends every case trace of `results` to `endpoint` (see `traces_url`); returns the number
    of spans sent. An AgentEvalError says why when the collector refused them or was not there."""
    trace_exporter = _sdk()
    spans = _spans(results, run_id)
    if not spans:
        return 0
    url = traces_url(endpoint)
    exporter = trace_exporter.OTLPSpanExporter(endpoint=url, headers=dict(headers or {}), timeout=timeout)
    try:
        outcome = exporter.export(spans)
    finally:
        exporter.shutdown()
    if outcome.name != "SUCCESS":
        raise AgentEvalError(f"{url}: the OTLP collector did not take the {len(spans)} spans "
                             "(refused, or not reachable)")
    return len(spans)


__all__ = ["export", "traces_url"]
