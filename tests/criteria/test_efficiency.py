"""The efficiency criteria on recorded invocations: every count, total and mean as defined
(each count summed over an invocation's events, means over the invocations that have one)."""

from __future__ import annotations

from typing import Any

import pytest

from agenteval.criteria import EvalContext, efficiency
from agenteval.criteria.efficiency import (
    InferenceCallCount,
    InvocationDuration,
    TokenUsage,
    ToolCallCount,
)
from agenteval.schema import BaseCriterion, Invocation, InvocationEvents, TokenUsageDetails
from agenteval.schema.trace import Span, Trace
from agenteval.tracing.figures import Figures

COUNTS = ("prompt_token_count", "cached_content_token_count", "tool_use_prompt_token_count",
          "candidates_token_count", "thoughts_token_count")


def _inv(usages: list[dict[str, int] | None], duration: float | None = None,
         model: float | None = None, legacy: bool = False) -> Invocation:
    data: dict[str, Any] = ({"tool_uses": [{"name": "t", "args": {}}]} if legacy else
                            {"invocation_events": [
                                {"author": "a", "usage_metadata": u, "content": {"role": "model", "parts": [
                                    {"function_call": {"name": "t", "args": {"i": i}}}]}}
                                for i, u in enumerate(usages)]})
    return Invocation.model_validate({"user_content": {"role": "user", "parts": [{"text": "q"}]},
                                      "intermediate_data": data, "duration": duration,
                                      "model_duration": model})


CASES = [
    [_inv([{"prompt_token_count": 10, "candidates_token_count": 5}], 2.0, 0.5)],
    [_inv([{"prompt_token_count": 10, "thoughts_token_count": 2}, None,
           {"prompt_token_count": 7, "cached_content_token_count": 3, "candidates_token_count": 1}],
          3.0),
     _inv([], None), _inv([None], 1.25, 2.0), _inv([], legacy=True)],
    [_inv([{"tool_use_prompt_token_count": 4}]), _inv([{"total_token_count": 9}], 0.1, 0.05)],
    [_inv([], legacy=True)],
]


def _expected_tokens(inv: Invocation) -> tuple[float | None, ...] | None:
    usages = inv.usage()
    if not usages:
        return None
    sums = []
    for attr in COUNTS:
        values = [getattr(u, attr) for u in usages if getattr(u, attr) is not None]
        sums.append(float(sum(values)) if values else None)
    return tuple(sums)


@pytest.mark.parametrize("case", CASES)
def test_token_usage_sums_each_count_and_averages_over_the_invocations(case: list[Invocation]) -> None:
    result = TokenUsage("token_usage_v1", BaseCriterion(threshold=0.0)).score(EvalContext(actual=case))
    rows: list[tuple[float | None, ...]] = []
    for inv, score in zip(case, result.per_invocation, strict=True):
        counts = _expected_tokens(inv)
        if counts is None:
            assert score.score is None and score.details is None
            continue
        prompt, cached, tool, candidates, reasoning = counts
        inputs = None if prompt is None and tool is None else (prompt or 0.0) + (tool or 0.0)
        outputs = (None if candidates is None and reasoning is None
                   else (candidates or 0.0) + (reasoning or 0.0))
        total = None if inputs is None and outputs is None else (inputs or 0.0) + (outputs or 0.0)
        row = (total, inputs, prompt, cached, tool, outputs, candidates, reasoning)
        assert score.details is not None and score.details.token_usage_details is not None
        assert tuple(score.details.token_usage_details.model_dump().values()) == row
        assert score.score == total
        rows.append(row)
    assert result.details is not None and result.details.token_usage_details is not None
    overall = result.details.token_usage_details.model_dump()
    for k, name in enumerate(overall):
        values = [v for r in rows if (v := r[k]) is not None]
        assert overall[name] == (sum(values) / len(case) if values else None)
    assert list(overall) == list(TokenUsageDetails.model_fields)


@pytest.mark.parametrize("case", CASES)
def test_duration_averages_each_part_over_the_timed_invocations(case: list[Invocation]) -> None:
    criterion = InvocationDuration("invocation_duration_v1", BaseCriterion(threshold=0.0))
    result = criterion.score(EvalContext(actual=case))
    timed = [inv for inv in case if inv.duration is not None]
    assert result.details is not None and result.details.duration_details is not None
    overall = result.details.duration_details

    def mean(values: list[float | None]) -> float | None:  # a time: to the microsecond
        present = [v for v in values if v is not None]
        return round(sum(present) / len(present), 6) if present else None

    assert overall.total_seconds == mean([inv.duration for inv in timed])
    assert overall.model_seconds == mean([inv.model_duration for inv in timed])
    assert overall.tool_seconds == mean([inv.tool_duration for inv in timed])
    assert overall.framework_seconds == mean([max((inv.duration or 0.0) - (inv.model_duration or 0.0), 0.0)
                                              for inv in timed])
    assert result.score == overall.total_seconds


@pytest.mark.parametrize("case", CASES)
def test_call_counts_per_invocation(case: list[Invocation]) -> None:
    ctx = EvalContext(actual=case)
    tools = ToolCallCount("tool_call_count_v1", BaseCriterion(threshold=0.0)).score(ctx)
    models = InferenceCallCount("inference_call_count_v1", BaseCriterion(threshold=0.0)).score(ctx)
    assert [p.score for p in tools.per_invocation] == [float(len(inv.tool_calls())) for inv in case]
    assert [p.score for p in models.per_invocation] == [
        float(sum(1 for e in data.invocation_events if e.usage_metadata or e.model_version))
        if isinstance(data := inv.intermediate_data, InvocationEvents) else None
        for inv in case]


def test_an_invocations_duration_details_are_its_parts_with_the_framework_rest() -> None:
    timings = ((3.0, 0.5, 1.0), (1.0, None, 0.25), (0.5, 0.75, None), (None, 1.0, 1.0),
               (2.0, None, None))
    case = [Invocation.model_validate({"user_content": {"role": "user", "parts": [{"text": "q"}]},
                                       "duration": total, "model_duration": model, "tool_duration": tool})
            for total, model, tool in timings]
    result = InvocationDuration("invocation_duration_v1", BaseCriterion(threshold=0.0)).score(
        EvalContext(actual=case))
    # The framework's share is what the model and tools leave, never below 0; untimed: nothing.
    frameworks = (1.5, 0.75, 0.0, None, 2.0)
    for (total, model, tool), framework, score in zip(timings, frameworks, result.per_invocation,
                                                      strict=True):
        if total is None:
            assert score.score is None and score.details is None
            continue
        assert score.details is not None and score.details.duration_details is not None
        assert score.details.duration_details.model_dump() == {
            "total_seconds": total, "model_seconds": model, "tool_seconds": tool,
            "framework_seconds": framework}
        assert score.score == total
    assert result.details is not None and result.details.duration_details is not None
    assert result.details.duration_details.model_dump() == {
        "total_seconds": 1.625, "model_seconds": 0.625, "tool_seconds": 0.625,
        "framework_seconds": 1.062}  # (1.5 + 0.75 + 0.0 + 2.0) / 4 = 1.0625, to the millisecond as ADK


def test_times_are_written_without_float_noise() -> None:
    # A difference or a mean of times in milliseconds wrote 0.09999999999999998 and
    # 0.20000000000000004: an invocation's times are written to the microsecond, the means to
    # the millisecond as ADK 2.13 rounds them (a score never is rounded otherwise).
    case = [_inv([None], 0.3, 0.1), _inv([None], 0.1, 0.05), _inv([None], 0.2)]
    case[0].tool_duration = 0.1
    result = InvocationDuration("invocation_duration_v1", BaseCriterion(threshold=0.0)).score(
        EvalContext(actual=case))
    assert result.score == 0.2
    assert result.details is not None and result.details.duration_details is not None
    assert result.details.duration_details.model_dump() == {
        "total_seconds": 0.2, "model_seconds": 0.075, "tool_seconds": 0.1, "framework_seconds": 0.117}
    first = result.per_invocation[0].details
    assert first is not None and first.duration_details is not None
    assert first.duration_details.framework_seconds == 0.1


def _traced_case() -> tuple[list[Invocation], Trace]:
    spans = [Span(span_id="i", name="turn", kind="invocation", start=0.0, end=2.0),
             Span(span_id="m", parent_id="i", name="llm", kind="llm", start=0.0, end=1.0,
                  attributes={"gen_ai.usage.input_tokens": 7, "gen_ai.usage.output_tokens": 3}),
             Span(span_id="t", parent_id="i", name="tool", kind="tool", start=1.0, end=1.5)]
    return [_inv([{"prompt_token_count": 1}], 2.0)], Trace(trace_id="x", spans=spans)


def test_a_cases_figures_are_read_from_its_trace_once_for_every_criterion(
        monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[int] = []
    real = efficiency.invocations_figures

    def counted(trace: Trace | None, count: int) -> list[Figures | None]:
        reads.append(count)
        return real(trace, count)

    monkeypatch.setattr(efficiency, "invocations_figures", counted)
    actual, trace = _traced_case()
    ctx = EvalContext(actual=actual, trace=trace)
    scores = [cls(name, BaseCriterion(threshold=0.0)).score(ctx).score for cls, name in (
        (ToolCallCount, "tool_call_count_v1"), (InferenceCallCount, "inference_call_count_v1"),
        (TokenUsage, "token_usage_v1"))]
    assert scores == [1.0, 1.0, 10.0]  # from the spans, not the invocation's own usage
    assert reads == [1]
    # Another trace (or another count of invocations) in the same context is read again.
    ctx.trace = Trace(trace_id="y", spans=[*trace.spans, Span(
        span_id="m2", parent_id="i", name="llm", kind="llm", start=1.5, end=1.6)])
    assert InferenceCallCount("inference_call_count_v1",
                              BaseCriterion(threshold=0.0)).score(ctx).score == 2.0
    assert reads == [1, 1]
    assert ctx == EvalContext(actual=actual, trace=ctx.trace)  # what was kept is not compared


def test_tool_calls_are_the_invocations_own_as_adk_counts_them_trace_or_not() -> None:
    # A custom agent that answers its own calls makes no tool span: ADK 2.13 counts the calls in
    # the invocation's events (1 here), where the trace's spans counted 0.
    actual, trace = _traced_case()
    untimed = Trace(trace_id="x", spans=[s for s in trace.spans if s.kind != "tool"])
    ctx = EvalContext(actual=actual, trace=untimed)
    result = ToolCallCount("tool_call_count_v1", BaseCriterion(threshold=0.0)).score(ctx)
    assert result.score == 1.0 and [p.score for p in result.per_invocation] == [1.0]


def test_the_overall_duration_is_the_mean_to_the_millisecond_as_adks() -> None:
    # ADK 2.13's invocation_duration_v1 reports round(mean, 3): 1.25, 3.0 and 0.0 seconds give
    # 1.417 there (tests/cli/test_score_adk_differential.py compares whole documents).
    case = [Invocation.model_validate({"user_content": {"role": "user", "parts": [{"text": "q"}]},
                                       "duration": d}) for d in (1.25, 3.0, None, 0.0)]
    result = InvocationDuration("invocation_duration_v1", BaseCriterion(threshold=0.0)).score(
        EvalContext(actual=case))
    assert result.score == 1.417
    assert [s.score for s in result.per_invocation] == [1.25, 3.0, None, 0.0]
