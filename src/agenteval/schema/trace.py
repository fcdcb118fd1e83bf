"""Traces: what happened inside a case run, as a tree of spans (agenteval extension).

One trace per case run, kept on its `EvalCaseResult` as `trace`. Its root span is the case run;
below it, one `invocation` span per user turn (the agent's steps, model calls and tool calls
inside it, and the user simulator's turn when one wrote the message), and a `scoring` span
holding the judge calls made while scoring (each with the invocation it judged and the item of
its judge record).

Span names and attributes follow OpenTelemetry's GenAI semantic conventions (`invoke_agent
NAME`, `chat MODEL`, `execute_tool NAME`; `gen_ai.*` attributes), with OpenInference's span
kind and input/output keys beside them, so the same spans can be exported to any OTLP collector
(Phoenix, Langfuse, Jaeger) and read back. Attribute values are JSON primitives or lists of
strings; structured payloads (messages, tool arguments and results) are JSON text, each cut to
`MAX_VALUE_CHARS` characters with the cut marked in the text and the key listed in `truncated`.
"""


from collections.abc import Mapping
from typing import Literal

from pydantic import Field

from agenteval.schema.base import WireModel

SpanKind = Literal["case", "invocation", "agent", "llm", "tool", "user_simulator", "scoring", "judge",
                   "other"]
AttributeValue = str | int | float | bool | list[str]

MAX_VALUE_CHARS = 2000  # one attribute's text; longer text keeps its head and tail


class Span(WireModel):
    """One timed step. `start`/`end` are epoch seconds; `status` is `ok` unless the step
    raised (`error`, with the exception's text)."""

    span_id: str  # 16 hex digits
    parent_id: str | None = None
    name: str
    kind: SpanKind = "other"
    start: float
    end: float | None = None
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    attributes: dict[str, AttributeValue] = Field(default_factory=dict)
    truncated: list[str] = Field(default_factory=list)  # attribute keys whose text was cut

    @property
    def duration(self) -> float | None:
        return None if self.end is None else max(0.0, self.end - self.start)


class Trace(WireModel):
    """The spans of one case run, in start order; `trace_id` is 32 hex digits."""

    trace_id: str
    spans: list[Span] = Field(default_factory=list)

    def children(self, span_id: str | None) -> list[Span]:
        """The spans whose parent is `span_id` (None: the roots), in `spans` order. One pass
        over the spans: for a walk over the tree use `children_index` once instead."""
        return [s for s in self.spans if s.parent_id == span_id]

    def children_index(self) -> dict[str | None, list[Span]]:
        """Every parent id's child spans (under None: the roots), each list in `spans` order;
        built in one pass, so a walk of the whole tree costs O(spans)."""
        index: dict[str | None, list[Span]] = {}
        for s in self.spans:
            index.setdefault(s.parent_id, []).append(s)
        return index

    def below(self, span_id: str, index: Mapping[str | None, list[Span]] | None = None) -> list[Span]:
        """Every span under `span_id` (not itself), depth first, children in `spans` order;
        O(spans), iterative (any depth). `index` is `children_index()` when the caller has it.
        A span id met again in the walk (ids repeated in a malformed trace) is listed but not
        descended into again, so the walk always ends."""
        kids = self.children_index() if index is None else index
        out: list[Span] = []
        seen = {span_id}
        stack = list(reversed(kids.get(span_id, ())))
        while stack:
            span = stack.pop()
            out.append(span)
            if span.span_id not in seen:
                seen.add(span.span_id)
                stack.extend(reversed(kids.get(span.span_id, ())))
        return out

    def invocations(self) -> list[Span]:
        """The invocation spans, in turn order."""
        def order(span: Span) -> tuple[int, float]:
            index = span.attributes.get("agenteval.invocation_index")
            return (index if isinstance(index, int) else 0), span.start

        return sorted((s for s in self.spans if s.kind == "invocation"), key=order)


__all__ = ["MAX_VALUE_CHARS", "AttributeValue", "Span", "SpanKind", "Trace"]
