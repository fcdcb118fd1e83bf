"""Judge calls in the case's trace: one `judge` span per question asked, linked both ways with
its judge record (the record's `span_id`; the span's metric, invocation and item)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from agenteval.criteria.judge.engine.decision import Decision
from agenteval.schema import JudgeRecord
from agenteval.tracing import ActiveSpan, span


@contextmanager
def judge_span(metric: str, invocation_index: int | None, item: str | None, model: str, prompt: str,
               step: str | None = None) -> Iterator[ActiveSpan | None]:
    """The span of one judge question, named `judge METRIC`."""
    with span("judge", f"judge {metric}", {
            "openinference.span.kind": "EVALUATOR", "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model, "agenteval.metric": metric,
            "agenteval.invocation_index": invocation_index, "agenteval.item": item,
            "agenteval.step": step, "input.value": prompt}) as s:
        yield s


def _outcome(s: ActiveSpan, verdict: str | None, score: float | None, rationale: str | None,
             error: str | None, prompt_tokens: int, cached: bool, replies: list[str]) -> None:
    attributes: dict[str, Any] = {
        "agenteval.verdict": verdict, "agenteval.score": score, "output.value": rationale,
        "gen_ai.usage.input_tokens": prompt_tokens, "agenteval.cached": cached,
        "agenteval.replies": replies}
    s.update(attributes)
    if error is not None:
        s.fail(error)


def judged(s: ActiveSpan | None, record: JudgeRecord) -> None:
    """Records the outcome of a judge call (a preparatory note) on its span and links the
    record to it."""
    if s is None:
        return
    record.span_id = s.span_id
    _outcome(s, record.verdict, record.score, record.rationale, record.error, record.prompt_tokens,
             record.cached, list(record.replies))


def traced(s: ActiveSpan | None, decision: Decision) -> Decision:
    """Records a judge model's decision on its span: the decision, linked to the span."""
    if s is None:
        return decision
    answer = decision.answer
    _outcome(s, decision.verdict, decision.score, decision.rationale, decision.error,
             answer.prompt_tokens, answer.cached, answer.replies)
    return replace(decision, span_id=s.span_id)
