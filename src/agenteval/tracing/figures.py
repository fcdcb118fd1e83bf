"""Efficiency figures of an invocation, read from its spans: the one place they are computed.

Inference writes them into the invocation (`duration`, `model_duration`, `tool_duration`), and
the efficiency criteria read them from the trace when there is one, so the numbers in the
result document, the reports and the criteria are the same numbers.

- `duration`: the invocation span's length.
- `model_seconds`: time covered by model calls (`llm` spans), overlaps counted once; None when
  no model call was timed.
- `tool_seconds`: time covered by tool calls and not by a model call (ADK's rule: a tool waiting
  on a model, e.g. an agent used as a tool, counts as model time); None when no tool call was
  timed (calls an agent only reported, marked `agenteval.untimed`, count but have no time).
- `model_calls`, `tool_calls`: the number of `llm` and `tool` spans.
- token counts: the `gen_ai.usage.*` attributes of the `llm` spans, summed (None when no model
  call reported them).

Calls and tokens are counted from the same tree the trajectory comes from: spans under a span
marked `agenteval.uncounted` (an agent run whose calls the invocation's recorded events leave
out, e.g. an ADK AgentTool's inner run with `inner_tool_calls: exclude`) are not counted; their
time still is (it was spent, and ADK counts it too). `agent_summary.agent_figures` gives the
same figures per agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agenteval.schema.trace import Span, Trace


def union_seconds(intervals: list[tuple[float, float]]) -> float:
    """Seconds covered by the intervals, overlaps counted once."""
    total, counted_to = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > counted_to:
            total += end - max(start, counted_to)
            counted_to = end
    return total


def _intervals(spans: list[Span]) -> list[tuple[float, float]]:
    # Calls an agent reported after the fact (`agenteval.untimed`) have no time of their own.
    return [(s.start, s.end) for s in spans
            if s.end is not None and not s.attributes.get("agenteval.untimed")]


def _tokens(spans: list[Span], key: str) -> int | None:
    values = [v for s in spans if isinstance(v := s.attributes.get(key), int)]
    return sum(values) if values else None


@dataclass(frozen=True)
class Figures:
    """What one invocation cost (see the module docstring)."""

    duration: float | None
    model_seconds: float | None
    tool_seconds: float | None
    model_calls: int
    tool_calls: int
    input_tokens: int | None
    output_tokens: int | None
    cached_tokens: int | None
    reasoning_tokens: int | None = None
    tool_use_tokens: int | None = None


def counted(trace: Trace, span_id: str, index: Mapping[str | None, list[Span]] | None = None) -> list[Span]:
    """`trace.below(span_id)` without the subtrees of spans marked `agenteval.uncounted`."""
    kids = trace.children_index() if index is None else index
    out: list[Span] = []
    seen = {span_id}
    stack = list(reversed(kids.get(span_id, ())))
    while stack:
        span = stack.pop()
        if span.attributes.get("agenteval.uncounted") is True:
            continue
        out.append(span)
        if span.span_id not in seen:
            seen.add(span.span_id)
            stack.extend(reversed(kids.get(span.span_id, ())))
    return out


def step_figures(duration: float | None, timed: list[Span], inside: list[Span]) -> Figures:
    """Figures of a step that lasted `duration`: time from the spans in `timed`, calls and
    tokens from those in `inside`."""
    llm_timed = [s for s in timed if s.kind == "llm"]
    llm = [s for s in inside if s.kind == "llm"]
    model_s = union_seconds(_intervals(llm_timed)) if _intervals(llm_timed) else None
    timed_tools = _intervals([s for s in timed if s.kind == "tool"])
    tool_s = (union_seconds(_intervals(llm_timed) + timed_tools) - (model_s or 0.0)) if timed_tools else None
    return Figures(
        duration=duration, model_seconds=model_s, tool_seconds=tool_s,
        model_calls=len(llm), tool_calls=sum(1 for s in inside if s.kind == "tool"),
        input_tokens=_tokens(llm, "gen_ai.usage.input_tokens"),
        output_tokens=_tokens(llm, "gen_ai.usage.output_tokens"),
        cached_tokens=_tokens(llm, "gen_ai.usage.cache_read.input_tokens"),
        reasoning_tokens=_tokens(llm, "agenteval.usage.reasoning_tokens"),
        tool_use_tokens=_tokens(llm, "agenteval.usage.tool_use_prompt_tokens"))


def figures(trace: Trace, invocation: Span, index: Mapping[str | None, list[Span]] | None = None) -> Figures:
    """The figures of `invocation`, one of `trace`'s invocation spans; O(spans). `index` is
    `trace.children_index()` when the caller has it (figures of several invocations)."""
    kids = trace.children_index() if index is None else index
    return step_figures(invocation.duration, trace.below(invocation.span_id, kids),
                    counted(trace, invocation.span_id, kids))


def invocation_figures(trace: Trace | None, index: int) -> Figures | None:
    """The figures of the `index`-th invocation of a trace; None without a trace or that span."""
    if trace is None:
        return None
    spans = trace.invocations()
    return figures(trace, spans[index]) if index < len(spans) else None


def invocations_figures(trace: Trace | None, count: int) -> list[Figures | None]:
    """`invocation_figures(trace, i)` for i in range(count), the tree indexed once: O(spans)
    for the lot, however many invocations the trace has."""
    if trace is None:
        return [None] * count
    spans = trace.invocations()
    index = trace.children_index()
    return [figures(trace, spans[i], index) if i < len(spans) else None for i in range(count)]


__all__ = ["Figures", "counted", "figures", "invocation_figures", "invocations_figures", "step_figures",
           "union_seconds"]
