"""Exporting recorded traces over OTLP/HTTP to any OpenTelemetry collector (Phoenix, Langfuse,
Jaeger, the OpenTelemetry Collector).

The spans were recorded during the run (`agenteval.tracing.recorder`); this turns them into the
OpenTelemetry SDK's span objects, ids and times unchanged, and sends them with the SDK's OTLP
exporter (protobuf over HTTP). The SDK is an optional extra (`pip install 'agenteval[otel]'`),
imported only here and only when an export is asked for.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from agenteval.errors import AgentEvalError
from agenteval.schema import EvalCaseResult, EvalSetResult
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


def _spans(case_runs: Iterable[EvalCaseResult], run_id: str | None) -> list[Any]:
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

    for case in case_runs:
        if case.trace is not None:
            out += [one(case.trace, s) for s in case.trace.spans]
    return out


def export(results: Sequence[EvalSetResult], endpoint: str, *, headers: Mapping[str, str] | None = None,
           timeout: float = 10.0, run_id: str | None = None) -> int:
    """Sends every case trace of `results` to `endpoint` (see `traces_url`); returns the number
    of spans sent. An AgentEvalError says why when the collector refused them or was not there."""
    return export_case_runs([c for r in results for c in r.eval_case_results], endpoint, headers=headers,
                            timeout=timeout, run_id=run_id)


def export_case_runs(case_runs: Sequence[EvalCaseResult], endpoint: str, *,
                     headers: Mapping[str, str] | None = None, timeout: float = 10.0,
                     run_id: str | None = None) -> int:
    """`export` of some case runs' traces (a batch of a run streamed case by case)."""
    trace_exporter = _sdk()
    spans = _spans(case_runs, run_id)
    if not spans:
        return 0
    url = traces_url(endpoint)
    exporter = trace_exporter.OTLPSpanExporter(endpoint=url, headers=dict(headers or {}), timeout=timeout)
    with _exporter_log(trace_exporter.__name__) as records:
        try:
            outcome = exporter.export(spans)
        finally:
            exporter.shutdown()
    if outcome.name != "SUCCESS":
        raise AgentEvalError(f"{url}: the OTLP collector did not take the {len(spans)} spans"
                             f"{_why(records)}")
    return len(spans)


@contextmanager
def _exporter_log(name: str) -> Iterator[list[logging.LogRecord]]:
    """The SDK exporter's log records of one export, kept rather than printed: its retries and
    failure would otherwise reach stderr as library log lines beside agenteval's own error,
    which says the same once (with the reason taken from these records)."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger, handler = logging.getLogger(name), Keep()
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield records
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


_ERRNO = re.compile(r"\[Errno -?\d+\][^'\")]*")


def _why(records: Sequence[logging.LogRecord]) -> str:
    """`: <reason>` from the exporter's records: the HTTP status it was refused with, or the
    connection's error (`[Errno 111] Connection refused`) and how many tries it took."""
    args = [r.args if isinstance(r.args, tuple) else () for r in records]
    for r, a in zip(reversed(records), reversed(args), strict=True):
        if str(r.msg).startswith("Failed to export span batch code") and len(a) == 2:
            return f": refused (HTTP {a[0]} {a[1]})" if a[0] is not None else f": {a[1]}"
    errors = [str(a[0]) for r, a in zip(records, args, strict=True) if a and "retrying" in str(r.msg)]
    if not errors:
        return " (refused, or not reachable)"
    tries = f"{len(errors) + 1} tries"  # each retry is logged; the last try is not
    found = _ERRNO.search(errors[-1])
    return f": not reachable ({found.group(0).strip()}; {tries})" if found else f": {errors[-1]} ({tries})"


class TraceBatches:
    """A run's traces sent to `endpoint` in batches of `batch` case runs as they come, so that
    no more than a batch is held; the first failure (a missing SDK, a collector that refuses)
    stops the sending and is raised by `close`, which sends what is left and returns the
    number of spans sent."""

    def __init__(self, endpoint: str, run_id: str | None = None, batch: int = 256) -> None:
        self.endpoint, self.run_id, self.batch = endpoint, run_id, batch
        self.buffer: list[EvalCaseResult] = []
        self.sent = 0
        self.error: AgentEvalError | None = None

    def add(self, case_run: EvalCaseResult) -> None:
        if self.error is not None:
            return
        self.buffer.append(case_run)
        if len(self.buffer) >= self.batch:
            self._send()

    def _send(self) -> None:
        try:
            self.sent += export_case_runs(self.buffer, self.endpoint, run_id=self.run_id)
        except AgentEvalError as e:
            self.error = e
        self.buffer = []

    def close(self) -> int:
        if self.error is None and self.buffer:
            self._send()
        if self.error is not None:
            raise self.error
        return self.sent


__all__ = ["TraceBatches", "export", "export_case_runs", "traces_url"]
