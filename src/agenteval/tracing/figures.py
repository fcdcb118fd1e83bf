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


def figures(trace: Trace, invocation: Span, index: Mapping[str | None, list[Span]] | None = None) -> Figures:
    """The figures of `invocation`, one of `trace`'s invocation spans; O(spans). `index` is
    `trace.children_index()` when the caller has it (figures of several invocations)."""
    inside = trace.below(invocation.span_id, index)
    llm = [s for s in inside if s.kind == "llm"]
    tool = [s for s in inside if s.kind == "tool"]
    model_s = union_seconds(_intervals(llm)) if _intervals(llm) else None
    timed_tools = _intervals(tool)
    tool_s = (union_seconds(_intervals(llm) + timed_tools) - (model_s or 0.0)) if timed_tools else None
    return Figures(
        duration=invocation.duration, model_seconds=model_s, tool_seconds=tool_s,
        model_calls=len(llm), tool_calls=len(tool),
        input_tokens=_tokens(llm, "gen_ai.usage.input_tokens"),
        output_tokens=_tokens(llm, "gen_ai.usage.output_tokens"),
        cached_tokens=_tokens(llm, "gen_ai.usage.cache_read.input_tokens"),
        reasoning_tokens=_tokens(llm, "agenteval.usage.reasoning_tokens"),
        tool_use_tokens=_tokens(llm, "agenteval.usage.tool_use_prompt_tokens"))


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


__all__ = ["Figures", "figures", "invocation_figures", "invocations_figures", "union_seconds"]
