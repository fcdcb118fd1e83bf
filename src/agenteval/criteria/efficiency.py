"""Efficiency metrics: informational counts, never gating (lower is better).

Results are built with `trusted` (no validation): every value is a float or None, computed here
from validated invocations, and a run builds several per invocation.

They read the case run's trace when there is one (`agenteval.tracing.figures`: the spans are
the one source of model calls, tokens and timings; inference writes the same timings into the
invocations). Without a trace (results read back from ADK files) they read what the invocations
say: model calls (events with usage metadata or a model version), token usage and timings. Tool
calls are always the invocations' own, as ADK counts them. Where the data lacks them (the legacy
intermediate form, files without timings) the value is None, i.e. not available.

Reasons: overall only (an invocation's score is its count, which says it all): the mean per
invocation, over how many invocations, and where the counts came from (the trace, or the
invocations' recorded events). They are informational: no threshold is applied.
"""

from __future__ import annotations

from functools import partial

from agenteval.criteria.base import (
    Criterion,
    CriterionResult,
    EvalContext,
    InvocationScore,
    Reason,
    mean,
)
from agenteval.criteria.reasons import num
from agenteval.schema import (
    DurationDetails,
    EvalMetricResultDetails,
    Invocation,
    TokenUsageDetails,
)
from agenteval.schema.base import maker, measured_seconds
from agenteval.tracing.figures import Figures, invocations_figures


def _figures(ctx: EvalContext) -> list[Figures | None]:
    """The figures of the case's invocations, read from its trace once for the criteria that
    use them (kept in the context with the trace and count they were read for)."""
    kept, trace, n = ctx.figures, ctx.trace, len(ctx.actual)
    if kept is not None and kept[0] is trace and kept[1] == n:
        return kept[2]
    figures = invocations_figures(trace, n)
    if trace is not None:
        ctx.figures = (trace, n, figures)
    return figures


def _reason(score: float | None, unit: str, ctx: EvalContext, traced: bool = True) -> Reason:
    """`mean 1.5 tool calls per invocation over 2 invocations (from the trace; informational)`,
    made when read (the runner does not store an informational criterion's reason)."""
    if score is None:
        return None
    # A partial, not a closure: one object instead of a function and a cell per value it holds
    # (never read by `score`, which stores no informational reason; four a case).
    return partial(_reason_text, score, unit, len(ctx.actual),
                   "the trace" if traced and ctx.trace is not None else "the recorded invocations")


def _reason_text(score: float, unit: str, n: int, source: str) -> str:
    return (f"mean {num(score)} {unit} per invocation over {n} invocation"
            f"{'' if n == 1 else 's'} (from {source}; informational)")


class ToolCallCount(Criterion):
    """`tool_call_count_v1`: tool calls per invocation; overall, the mean."""

    reusable = True  # nothing of a case is kept

    def score(self, ctx: EvalContext) -> CriterionResult:
        # The invocation's calls, trace or not, as ADK counts them and as the trajectory scores
        # them: a custom agent's calls that no tool span times (it answers them itself) count.
        per = [float(len(inv.tool_calls())) for inv in ctx.actual]
        overall = mean(per)
        return CriterionResult(overall, [InvocationScore(v) for v in per],
                               reason=_reason(overall, "tool calls", ctx, traced=False))


class InferenceCallCount(Criterion):
    """`inference_call_count_v1`: model calls per invocation; overall, the mean."""

    reusable = True  # nothing of a case is kept

    def score(self, ctx: EvalContext) -> CriterionResult:
        per: list[float | None]
        if ctx.trace is None:
            per = [None if (n := inv.model_call_count()) is None else float(n) for inv in ctx.actual]
        else:
            per = []
            for inv, f in zip(ctx.actual, _figures(ctx), strict=True):
                n = f.model_calls if f is not None and f.model_calls else inv.model_call_count()
                per.append(None if n is None else float(n))
        overall = mean(per)
        return CriterionResult(overall, [InvocationScore(v) for v in per],
                               reason=_reason(overall, "model calls", ctx))


def _counts(inv: Invocation, fig: Figures | None) -> tuple[float | None, ...] | None:
    """(prompt, cached, tool-use prompt, candidates, reasoning) tokens, from the spans when they
    reported any, else from the invocation's usage metadata; None when nothing reported."""
    if fig is not None and (fig.input_tokens is not None or fig.output_tokens is not None):
        return tuple(None if v is None else float(v) for v in (
            fig.input_tokens, fig.cached_tokens, fig.tool_use_tokens, fig.output_tokens,
            fig.reasoning_tokens))
    usages = inv.usage()
    if not usages:
        return None
    # Each count's values in event order, summed as `sum` sums them: one column per count.
    rows = [(u.prompt_token_count, u.cached_content_token_count, u.tool_use_prompt_token_count,
             u.candidates_token_count, u.thoughts_token_count) for u in usages]
    if len(rows) == 1:  # `sum` of one value: 0 + v (so -0.0 gives 0.0, as `sum` does)
        return tuple(None if v is None else float(0 + v) for v in rows[0])
    return tuple(float(sum(present)) if (present := [v for v in column if v is not None]) else None
                 for column in zip(*rows, strict=True))


def token_usage(inv: Invocation, fig: Figures | None = None) -> TokenUsageDetails | None:
    """Summed token counts of an invocation's model calls; None when none were reported."""
    counts = _counts(inv, fig)
    if counts is None:
        return None
    prompt, cached, tool, candidates, reasoning = counts
    inputs = None if prompt is None and tool is None else (prompt or 0.0) + (tool or 0.0)
    outputs = (None if candidates is None and reasoning is None
               else (candidates or 0.0) + (reasoning or 0.0))
    overall = None if inputs is None and outputs is None else (inputs or 0.0) + (outputs or 0.0)
    return _make_tokens({
        "total_tokens": overall, "input_tokens": inputs, "prompt_tokens": prompt,
        "cached_tokens": cached, "tool_use_tokens": tool, "output_tokens": outputs,
        "candidates_tokens": candidates, "reasoning_tokens": reasoning})


# Built without validation (every value a float or None computed here), from dicts written in
# the models' field order, which `maker` does not check: several per invocation in a run.
_make_tokens = maker(TokenUsageDetails)
_make_duration = maker(DurationDetails)
_make_details = maker(EvalMetricResultDetails)
_TOKEN_FIELDS = tuple(TokenUsageDetails.model_fields)


def _details(token_usage: TokenUsageDetails | None = None,
             duration: DurationDetails | None = None) -> EvalMetricResultDetails:
    return _make_details({
        "rubric_scores": None, "token_usage_details": token_usage, "duration_details": duration})


class TokenUsage(Criterion):
    """`token_usage_v1`: total tokens per invocation.

    Overall details: each count summed over invocations and divided by the number of all
    invocations (a count reported by no invocation stays None).
    """

    reusable = True  # nothing of a case is kept

    def score(self, ctx: EvalContext) -> CriterionResult:
        per: list[InvocationScore] = []
        reported: list[TokenUsageDetails] = []  # the invocations' that reported a count
        figures = _figures(ctx) if ctx.trace is not None else [None] * len(ctx.actual)
        for inv, f in zip(ctx.actual, figures, strict=True):
            d = token_usage(inv, f)
            if d is None:
                per.append(InvocationScore(None))
            else:
                reported.append(d)
                per.append(InvocationScore(d.total_tokens, _details(d)))
        n = len(per) or 1
        # Each field's values over the invocations that reported it, in order (the dicts'
        # values are in field order), summed by `sum`.
        sums: dict[str, float | None]
        if len(reported) == 1:
            # `sum` of one value is `0 + v` (a case's usual lot: one invocation of two reports).
            sums = {name: None if v is None else (0 + v) / n
                    for name, v in reported[0].__dict__.items()}
        else:
            sums = dict.fromkeys(_TOKEN_FIELDS)
            if reported:
                for name, column in zip(_TOKEN_FIELDS, zip(*[d.__dict__.values() for d in reported],
                                                           strict=True), strict=True):
                    values = [v for v in column if v is not None]
                    sums[name] = sum(values) / n if values else None
        overall = _make_tokens(sums)
        # As ADK: the overall score is the total over all invocations divided by their number
        # (an invocation that reported nothing counts as 0).
        return CriterionResult(overall.total_tokens, per, _details(overall),
                               reason=_reason(overall.total_tokens, "tokens", ctx))


class InvocationDuration(Criterion):
    """`invocation_duration_v1`: seconds per invocation; overall, each part averaged."""

    reusable = True  # nothing of a case is kept

    def score(self, ctx: EvalContext) -> CriterionResult:
        per: list[InvocationScore] = []
        # Each part's sum over the invocations timed (left to right, from 0.0, as `mean` adds a
        # column's values) and how many gave it: the overall means in the same pass as the
        # invocations' details (where each timed invocation's seconds went; the framework's
        # share is the rest, never below 0).
        timed = with_model = with_tool = 0
        total = model_sum = tool_sum = framework_sum = 0.0
        for inv in ctx.actual:
            seconds = inv.duration
            if seconds is None:
                per.append(InvocationScore(None))
                continue
            model, tool = inv.model_duration, inv.tool_duration
            framework = measured_seconds(max(seconds - (model or 0.0) - (tool or 0.0), 0.0))
            d = _make_duration({"total_seconds": seconds, "model_seconds": model,
                                "tool_seconds": tool, "framework_seconds": framework})
            per.append(InvocationScore(seconds, _details(None, d)))
            timed += 1
            total += seconds
            framework_sum += framework
            if model is not None:
                with_model += 1
                model_sum += model
            if tool is not None:
                with_tool += 1
                tool_sum += tool
        # The mean of the scores: a timed invocation's is its total, which is never None, so
        # it is the mean of the totals just taken (the same values in the same order). Each
        # mean to the millisecond, as ADK 2.13 rounds its averaged parts (and so its overall
        # score): 1.25, 3.0 and 0.0 seconds make 1.417, not 1.416667.
        overall = round(total / timed, 3) if timed else None
        avg = _make_duration({
            "total_seconds": overall,
            "model_seconds": round(model_sum / with_model, 3) if with_model else None,
            "tool_seconds": round(tool_sum / with_tool, 3) if with_tool else None,
            "framework_seconds": round(framework_sum / timed, 3) if timed else None})
        return CriterionResult(overall, per, _details(None, avg),
                               reason=_reason(overall, "seconds", ctx, traced=False))
