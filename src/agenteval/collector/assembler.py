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

**Retries.** An exporter sends a batch again when it got no answer in time, so a span can arrive
twice: a span equal to one its trace holds (the same ids, times, attributes) is that span again and
is not held twice (counted in `duplicate_spans`); a *different* span under an id already held is
kept, for the conversation's reading to refuse by name.

**Late spans.** A span of a trace whose conversation was already taken (scored) is dropped,
counted in `late_spans`: the verdict was recorded from the conversation as it was then, and the
span alone is no conversation (it used to start one, scored as a fragment: a second verdict on
a piece of the first conversation). The ids of the last `max_traces` traces taken are kept for
this. A new *trace* of a session already taken is a new conversation under that session id (a
user who came back after the quiet period).
**Across a restart.** `hold` takes every open conversation out, and the ids of the traces taken;
`restore` puts them back in a new assembler, each conversation's quiet period starting again (an
exporter sends again, after a while, what it could not send while nothing listened). So
`agenteval collect` stopped mid-conversation and started again scores the conversation once,
whole (`collector.held` keeps them on disk between).
Every operation is O(spans added) or O(traces held); nothing grows without bound.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from agenteval.tracing.ingest import SESSION_KEYS
from agenteval.tracing.otlp_json import OtlpSpan, same_span


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
    key: str  # its conversation's
    spans: list[OtlpSpan] = field(default_factory=list)
    by_id: dict[str, OtlpSpan] = field(default_factory=dict)  # the first span held under each id
    session: str | None = None


@dataclass
class _OpenConversation:
    traces: list[str] = field(default_factory=list)  # trace ids, in arrival order
    last: float = 0.0  # when one of its traces last received a span (the caller's clock)


@dataclass(frozen=True)
class Conversation:
    """A finished conversation: its key (session id, or `trace <id>`) and its spans."""

    key: str
    spans: list[OtlpSpan]
    last_span_at: float  # when its last span arrived (the caller's clock)


@dataclass(frozen=True)
class Held:
    """An assembler's open conversations (each one's spans, a trace after another), least recently
    fed first, and the ids of the traces it took last (oldest first)."""

    conversations: list[list[OtlpSpan]]
    taken: list[str]

    @property
    def spans(self) -> int:
        """How many spans are held."""
        return sum(map(len, self.conversations))


class Closed(Exception):
    """Spans offered after `Assembler.close`: not taken (the receivers answer so that the
    exporter sends them again, to the next collector)."""


class Assembler:
    """Thread-safe: receivers `add` spans, a scorer takes the `done` conversations.

    Conversations are kept in the order they were last fed, so the ones past their quiet period
    are at the front: `done` looks at those only (and at the traces whose root ended), never at
    every conversation held."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self._traces: OrderedDict[str, _OpenTrace] = OrderedDict()  # least recently fed first
        self._conversations: OrderedDict[str, _OpenConversation] = OrderedDict()  # likewise
        self._ended: set[str] = set()  # conversations of one sessionless trace whose root ended
        self._taken: OrderedDict[str, None] = OrderedDict()  # the last traces taken, oldest first
        self._lock = threading.Lock()
        self._closed = False
        self.held = 0
        self.evicted_traces = 0
        self.evicted_spans = 0
        self.dropped_spans = 0
        self.duplicate_spans = 0
        self.late_spans = 0

    def _feed(self, key: str, trace_id: str | None, now: float) -> None:
        conversation = self._conversations.get(key)
        if conversation is None:
            conversation = self._conversations[key] = _OpenConversation()
        else:
            self._conversations.move_to_end(key)
        if trace_id is not None:
            conversation.traces.append(trace_id)
        conversation.last = now

    def _leave(self, key: str, trace_id: str) -> None:
        """Takes a trace out of its conversation (dropped when it has no trace left)."""
        conversation = self._conversations[key]
        conversation.traces.remove(trace_id)
        if not conversation.traces:
            del self._conversations[key]
            self._ended.discard(key)

    def close(self) -> None:
        """Takes no more spans: `add` raises Closed from now on. At a stop, a request still
        arriving on an open connection would otherwise be taken after the conversations were held
        or scored, and lost."""
        with self._lock:
            self._closed = True

    def add(self, spans: Iterable[OtlpSpan], now: float) -> None:
        """Holds `spans` (received at `now`), then evicts down to the limits; Closed after
        `close`, nothing of them held."""
        limits = self.limits
        with self._lock:
            if self._closed:
                raise Closed("the receiver is stopping")
            for s in spans:
                trace = self._traces.get(s.trace_id)
                if trace is None and s.trace_id in self._taken:
                    self.late_spans += 1
                    continue
                if trace is None:
                    trace = self._traces[s.trace_id] = _OpenTrace(f"trace {s.trace_id}")
                    self._feed(trace.key, s.trace_id, now)
                else:
                    self._traces.move_to_end(s.trace_id)
                    self._feed(trace.key, None, now)
                held = trace.by_id.get(s.span_id)
                if held is not None and same_span(held, s):
                    self.duplicate_spans += 1
                    continue
                if len(trace.spans) >= limits.max_spans_per_trace:
                    self.dropped_spans += 1
                    continue
                trace.spans.append(s)
                trace.by_id.setdefault(s.span_id, s)
                self.held += 1
                if trace.session is None:
                    a = s.attributes
                    session = next((str(a[k]) for k in SESSION_KEYS if a.get(k)), None)
                    if session is not None:  # the trace joins its session's conversation
                        self._leave(trace.key, s.trace_id)
                        trace.session, trace.key = session, session
                        self._feed(session, s.trace_id, now)
                if s.parent_id is None and s.end is not None and trace.session is None:
                    self._ended.add(trace.key)
            while self.held > limits.max_spans or len(self._traces) > limits.max_traces:
                trace_id, evicted = self._traces.popitem(last=False)
                self._leave(evicted.key, trace_id)
                self.held -= len(evicted.spans)
                self.evicted_traces += 1
                self.evicted_spans += len(evicted.spans)

    @property
    def open_traces(self) -> int:
        """How many traces are held."""
        return len(self._traces)

    def _take(self, key: str) -> Conversation:
        conversation = self._conversations.pop(key)
        self._ended.discard(key)
        spans = [s for trace_id in conversation.traces for s in self._traces.pop(trace_id).spans]
        self.held -= len(spans)
        self._taken.update(dict.fromkeys(conversation.traces))
        while len(self._taken) > self.limits.max_traces:
            self._taken.popitem(last=False)
        return Conversation(key, spans, conversation.last)

    def hold(self) -> Held:
        """Takes out every open conversation, not as taken: to be `restore`d (see the module
        docstring)."""
        with self._lock:
            held = Held([[s for trace_id in conversation.traces for s in self._traces[trace_id].spans]
                         for conversation in self._conversations.values()], list(self._taken))
            self._traces.clear()
            self._conversations.clear()
            self._ended.clear()
            self.held = 0
            return held

    def restore(self, held: Held, now: float) -> None:
        """Holds `held`'s conversations again as if their spans had arrived at `now`, and remembers
        its taken traces (their late spans are dropped as before)."""
        with self._lock:
            self._taken.update(dict.fromkeys(held.taken))
            while len(self._taken) > self.limits.max_traces:
                self._taken.popitem(last=False)
        for spans in held.conversations:
            self.add(spans, now)

    def done(self, now: float, limit: int | None = None, everything: bool = False) -> list[Conversation]:
        """Takes out the conversations done at `now` (all of them with `everything`, e.g. at
        shutdown), at most `limit`: ended traces first, then by their last span, oldest first."""
        quiet = self.limits.quiet_seconds
        out: list[Conversation] = []
        with self._lock:
            while self._ended and (limit is None or len(out) < limit):
                out.append(self._take(next(iter(self._ended))))
            while self._conversations and (limit is None or len(out) < limit):
                key, oldest = next(iter(self._conversations.items()))
                if not everything and now - oldest.last < quiet:
                    break
                out.append(self._take(key))
            return out


__all__ = ["Assembler", "Closed", "Conversation", "Held", "Limits"]
