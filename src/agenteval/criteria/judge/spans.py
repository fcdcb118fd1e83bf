"""Judge calls in the case's trace: one `judge` span per question asked, linked both ways with
its judge record (the record's `span_id`; the span's metric, invocation and item)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

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


def judged(s: ActiveSpan | None, record: JudgeRecord) -> None:
    """Records the outcome of a judge question on its span and links the record to it."""
    if s is None:
        return
    record.span_id = s.span_id
    s.update({"agenteval.verdict": record.verdict, "agenteval.score": record.score,
              "output.value": record.rationale, "gen_ai.usage.input_tokens": record.prompt_tokens,
              "agenteval.cached": record.cached, "agenteval.replies": list(record.replies)})
    if record.error is not None:
        s.fail(record.error)
