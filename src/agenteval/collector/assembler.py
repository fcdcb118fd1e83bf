"""Spans arriving live, assembled into conversations, in bounded memory.

Spans are held by trace. A trace's conversation is its session id (the first of
`tracing.ingest.SESSION_KEYS` any of its spans carries), else the trace alone. A conversation is
**done** when none of its traces received a span for `quiet_seconds`, or, for a trace without a
session id, as soon as its root span (one without a parent) has ended: exporters send a trace's
root last, since it ends last.

**Bounds.** At most `max_spans` spans and `max_traces` traces are held; past either, the trace
that received a span least recently is evicted whole (its spans dropped, counted in
`evicted_traces` / `evicted_spans`). A trace holds at most `max_spans_per_trace` spans; later
ones of it are dropped (counted in `dropped_spans`) and the trace is scored with those it has.
Every operation is O(spans added) or O(traces held); nothing grows without bound.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from agenteval.tracing.ingest import SESSION_KEYS
from agenteval.tracing.otlp_json import OtlpSpan


@dataclass(frozen=True)
class Limits:
    """When a conversation is done, and what the assembler may hold (see the module docstring)."""

    quiet_seconds: float = 5.0
    max_spans: int = 100_000
    max_traces: int = 10_000
    max_spans_per_trace: int = 10_000

    def __post_init__(self) -> None:
        if self.quiet_seconds < 0:
            raise ValueError(f"quiet_seconds must be >= 0, got {self.quiet_seconds}")
        for name in ("max_spans", "max_traces", "max_spans_per_trace"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")


@dataclass
class _OpenTrace:
    spans: list[OtlpSpan] = field(default_factory=list)
    last: float = 0.0  # when it last received a span (the caller's clock)
    session: str | None = None
    root_ended: bool = False


@dataclass(frozen=True)
class Conversation:
    """A finished conversation: its key (session id, or `trace <id>`) and its spans."""

    key: str
    spans: list[OtlpSpan]
    last_span_at: float  # when its last span arrived (the caller's clock)


class Assembler:
    """Thread-safe: receivers `add` spans, a scorer takes the `done` conversations."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self._traces: OrderedDict[str, _OpenTrace] = OrderedDict()  # least recently fed first
        self._lock = threading.Lock()
        self.held = 0
        self.evicted_traces = 0
        self.evicted_spans = 0
        self.dropped_spans = 0

    def add(self, spans: Iterable[OtlpSpan], now: float) -> None:
        """Holds `spans` (received at `now`), then evicts down to the limits."""
        limits = self.limits
        with self._lock:
            for s in spans:
                trace = self._traces.get(s.trace_id)
                if trace is None:
                    trace = self._traces[s.trace_id] = _OpenTrace()
                else:
                    self._traces.move_to_end(s.trace_id)
                trace.last = now
                if len(trace.spans) >= limits.max_spans_per_trace:
                    self.dropped_spans += 1
                    continue
                trace.spans.append(s)
                self.held += 1
                if trace.session is None:
                    a = s.attributes
                    trace.session = next((str(a[k]) for k in SESSION_KEYS if a.get(k)), None)
                if s.parent_id is None and s.end is not None:
                    trace.root_ended = True
            while self.held > limits.max_spans or len(self._traces) > limits.max_traces:
                _, evicted = self._traces.popitem(last=False)
                self.held -= len(evicted.spans)
                self.evicted_traces += 1
                self.evicted_spans += len(evicted.spans)

    @property
    def open_traces(self) -> int:
        """How many traces are held."""
        return len(self._traces)

    def done(self, now: float, limit: int | None = None, everything: bool = False) -> list[Conversation]:
        """Takes out the conversations done at `now` (all of them with `everything`, e.g. at
        shutdown), oldest first, at most `limit`."""
        quiet = self.limits.quiet_seconds
        with self._lock:
            groups: dict[str, list[str]] = {}
            for trace_id, t in self._traces.items():
                groups.setdefault(t.session or f"trace {trace_id}", []).append(trace_id)
            out: list[Conversation] = []
            for key, ids in groups.items():
                if limit is not None and len(out) >= limit:
                    break
                traces = [self._traces[i] for i in ids]
                last = max(t.last for t in traces)
                ended = traces[0].session is None and traces[0].root_ended
                if everything or ended or now - last >= quiet:
                    for i in ids:
                        del self._traces[i]
                    spans = [s for t in traces for s in t.spans]
                    self.held -= len(spans)
                    out.append(Conversation(key, spans, last))
            return out


__all__ = ["Assembler", "Conversation", "Limits"]
