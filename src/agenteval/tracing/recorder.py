"""Recording spans while a case runs, without threading a recorder through every call.

The runner opens a `TraceRecorder` for each case run (`recording(...)`); code anywhere below it
(the built-in agent, adapters, the user simulator, judges) opens spans with `span(kind, name,
attributes)`. Context variables carry the recorder and the current span, so spans nest by the
call structure, across `await` and into tasks started inside them. With no recorder active,
`span` does nothing and costs a context-variable lookup: code that records runs unchanged
outside a run.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from agenteval.schema.base import utf8_text
from agenteval.schema.trace import MAX_VALUE_CHARS, AttributeValue, Span, SpanKind, Trace

_RECORDER: ContextVar[TraceRecorder | None] = ContextVar("agenteval_recorder", default=None)
_CURRENT: ContextVar[Span | None] = ContextVar("agenteval_span", default=None)


# Ids need to be unique, not secret: they come from a generator of this module's own, seeded
# from the OS once and again in a forked child (so neither an agent's `random.seed` nor a fork
# repeats them). Drawing each from `os.urandom` (`secrets`) gave up the interpreter lock on
# every span (five a trivial case), so the event loop waited for it behind the journal's threads.
_IDS = random.Random()
os.register_at_fork(after_in_child=_IDS.seed)


def new_span_id() -> str:
    """16 hex digits, never all zero (OpenTelemetry's invalid span id)."""
    while not (bits := _IDS.getrandbits(64)):
        pass
    return f"{bits:016x}"


def new_trace_id() -> str:
    """32 hex digits, never all zero (OpenTelemetry's invalid trace id)."""
    while not (bits := _IDS.getrandbits(128)):
        pass
    return f"{bits:032x}"


def bounded(text: str, limit: int = MAX_VALUE_CHARS) -> tuple[str, bool]:
    """`text` cut to `limit` characters (its head and tail kept, the cut marked in the text),
    and whether it was cut."""
    if len(text) <= limit:
        return text, False
    marker = f" …[{len(text) - limit} characters cut]… "
    keep = max(0, limit - len(marker))
    head = keep * 2 // 3
    return text[:head] + marker + text[len(text) - (keep - head):], True


def as_attribute(value: Any) -> tuple[AttributeValue, bool]:
    """A value as a span attribute: primitives as they are, lists of strings as they are, any
    other value as JSON text; text bounded (see `bounded`) and made writable (`utf8_text`: an
    agent's reply may hold a lone surrogate, which would fail the whole document's writing).
    Returns (value, whether it was cut)."""
    if isinstance(value, (bool, int, float)):
        return value, False
    if isinstance(value, str):
        return bounded(utf8_text(value)[0])
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        cut = [bounded(utf8_text(v)[0]) for v in value]
        return [v for v, _ in cut], any(c for _, c in cut)
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (ValueError, TypeError, RecursionError) as e:  # a cycle, say: recording never fails a run
        text = f"<not recordable as JSON: {type(e).__name__}: {e}>"
    return bounded(utf8_text(text)[0])


class ActiveSpan:
    """A span being recorded: set attributes, mark an error."""

    def __init__(self, span: Span) -> None:
        self.span = span

    @property
    def span_id(self) -> str:
        return self.span.span_id

    def set(self, key: str, value: Any) -> None:
        """Sets an attribute (None is skipped)."""
        if value is None:
            return
        attr, cut = as_attribute(value)
        self.span.attributes[key] = attr
        if cut and key not in self.span.truncated:
            self.span.truncated.append(key)

    def update(self, attributes: Mapping[str, Any]) -> None:
        for key, value in attributes.items():
            self.set(key, value)

    def fail(self, message: str) -> None:
        # Made writable as attributes are: an agent's exception may say a lone surrogate.
        self.span.status, self.span.error = "error", utf8_text(message)[0]

    def end(self) -> None:
        """Ends a span opened with `start_span` (once; later calls change nothing)."""
        if self.span.end is None:
            self.span.end = _now_after(self.span.start)


def _now_after(start: float) -> float:
    """The wall clock, never before `start`: a clock stepped back while a span ran (NTP) would end
    it before it began, and a trace file with such a span is refused when read back."""
    return max(time.time(), start)


class TraceRecorder:
    """The spans of one case run."""

    def __init__(self, trace_id: str | None = None) -> None:
        self.trace = Trace(trace_id=trace_id or new_trace_id())

    def start(self, kind: SpanKind, name: str, parent: Span | None,
              attributes: Mapping[str, Any] | None = None) -> ActiveSpan:
        span = Span(span_id=new_span_id(), parent_id=parent.span_id if parent else None,
                    name=utf8_text(name)[0],
                    kind=kind, start=time.time())
        self.trace.spans.append(span)
        active = ActiveSpan(span)
        active.update(attributes or {})
        return active


def current_recorder() -> TraceRecorder | None:
    return _RECORDER.get()


def current_span() -> Span | None:
    """The span new spans go under here (None: none open, or no recorder)."""
    return _CURRENT.get() if _RECORDER.get() is not None else None


def start_span(kind: SpanKind, name: str, attributes: Mapping[str, Any] | None = None,
               parent: Span | None = None) -> ActiveSpan | None:
    """Opens a span under `parent` (None: the current span) without entering it, for steps
    that begin in one callback and end in another (end it with `ActiveSpan.end`); None with no
    recorder. An explicit parent is for steps that run concurrently (parallel agent branches),
    whose parent the context cannot tell."""
    recorder = _RECORDER.get()
    if recorder is None:
        return None
    return recorder.start(kind, name, parent if parent is not None else _CURRENT.get(), attributes)


def graft(spans: list[Span]) -> None:
    """Adds `spans`, recorded elsewhere (in a worker process, by its own recorder), to the
    current recorder: their roots become children of the current span. Nothing happens with
    no recorder active."""
    recorder = _RECORDER.get()
    if recorder is None:
        return
    parent = _CURRENT.get()
    for s in spans:
        if s.parent_id is None and parent is not None:
            s.parent_id = parent.span_id
        recorder.trace.spans.append(s)


@contextmanager
def recording(recorder: TraceRecorder) -> Iterator[TraceRecorder]:
    """Makes `recorder` the one spans go to, inside the block (and tasks started in it)."""
    token = _RECORDER.set(recorder)
    parent = _CURRENT.set(None)
    try:
        yield recorder
    finally:
        _CURRENT.reset(parent)
        _RECORDER.reset(token)


@contextmanager
def span(kind: SpanKind, name: str,
         attributes: Mapping[str, Any] | None = None) -> Iterator[ActiveSpan | None]:
    """Records a span around the block, child of the current one; yields it (None when no
    recorder is active). An exception leaving the block marks the span as an error and
    propagates."""
    recorder = _RECORDER.get()
    if recorder is None:
        yield None
        return
    active = recorder.start(kind, name, _CURRENT.get(), attributes)
    token = _CURRENT.set(active.span)
    try:
        yield active
    except BaseException as e:
        active.fail(f"{type(e).__name__}: {e}")
        raise
    finally:
        active.span.end = _now_after(active.span.start)
        _CURRENT.reset(token)


__all__ = ["ActiveSpan", "TraceRecorder", "as_attribute", "bounded", "current_recorder", "current_span",
           "graft", "new_span_id", "new_trace_id", "recording", "span", "start_span"]
