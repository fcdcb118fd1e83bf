"""The reasons of judged criteria, in words, from the voted answers (see `JudgeCriterion`).

One question: `3 of 5 samples said valid; confidence 0.81 ≥ 0.55` (`p=0.81` when the confidence
is a probability from log-probabilities; the threshold is the `min_confidence` the verdict was
held to, when there is one), the judge's rationale after a dash for a negative verdict, an
escalation (`uncertain: ...; escalated to M: ...`) and a cross-check (`; cross-check: ...`)
when they happened, after the question's item (a rubric's id, a sentence) when it has one.
Several questions about one invocation: how many were positive and the first negative one,
named by its item.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from agenteval.schema import JudgeRecord

if TYPE_CHECKING:
    from agenteval.criteria.judge.base import Answered

# The min_confidence a record's confidence was held to, by its confidence source.
Threshold = Callable[[str | None], float | None]


def _confidence(record: JudgeRecord, threshold: Threshold) -> str:
    if record.confidence is None:
        return ""
    value = (f"p={record.confidence:.2f}" if record.confidence_source == "logprobs"
             else f"confidence {record.confidence:.2f}")
    limit = threshold(record.confidence_source)
    if limit is not None:
        value += f" {'<' if record.confidence < limit else '≥'} {limit:g}"
    return f"; {value}"


def verdict_text(record: JudgeRecord, threshold: Threshold) -> str:
    """One judged question's verdict: the vote, its confidence against `min_confidence`, and
    (for a negative verdict) the rationale; an escalation and an error as they happened."""
    if record.escalated is not None:
        first = _vote(record)
        return (f"uncertain ({first}{_confidence(record, threshold)}), escalated to "
                f"{record.escalated.judge_model}: {verdict_text(record.escalated, threshold)}")
    if record.verdict is None:
        return f"judge error: {record.error}" if record.error else "no verdict"
    text = _vote(record) + _confidence(record, threshold)
    if record.error:  # uncertain, no escalation: the verdict was not used
        return f"{text}: {record.error}"
    if record.score is not None and record.score < 1.0 and record.rationale:
        text += f" — {record.rationale}"
    return text


def _vote(record: JudgeRecord) -> str:
    n = len(record.verdicts)
    if n <= 1:
        return f"the judge said {record.verdict}"
    agreeing = sum(1 for v in record.verdicts if v == record.verdict)
    return f"{agreeing} of {n} samples said {record.verdict}"


def answer_text(answered: Answered, threshold: Threshold) -> str:
    """A question's verdict with its cross-check's, when one was asked."""
    text = verdict_text(answered.record, threshold)
    for check in answered.checks:
        text += f"; cross-check: {verdict_text(check, threshold)}"
    return text


def injection_text(answered: Sequence[Answered], on_injection: str = "judge") -> str:
    """`; text addressed to the judge: 1 passage cut from the answer, 1 found in the quoted
    material (failed closed)` when a question's material held any; else empty."""
    cut = sum(len(a.record.screened) for a in answered)
    found = sum(len(a.record.flagged) for a in answered)
    if not cut and not found:
        return ""
    parts = [f"{n} passage{'s' if n > 1 else ''} {where}" for n, where in (
        (cut, "cut from the answer"), (found, "found in the quoted material")) if n]
    outcome = " (failed closed: on_injection fail)" if on_injection == "fail" else ""
    return f"; text addressed to the judge: {', '.join(parts)}{outcome}"


def invocation_text(answered: Sequence[Answered], threshold: Threshold,
                    on_injection: str = "judge") -> str | None:
    """The reason of an invocation's judged score from its questions (and what was found
    addressed to the judge, `injection_text`); None without questions."""
    if not answered:
        return None
    return _invocation_text(answered, threshold) + injection_text(answered, on_injection)


def _invocation_text(answered: Sequence[Answered], threshold: Threshold) -> str:
    if len(answered) == 1:  # named by its item (a rubric, a sentence) when it has one
        item = answered[0].question.item
        return f"{item + ': ' if item else ''}{answer_text(answered[0], threshold)}"
    positive = sum(1 for a in answered if a.score == 1.0)
    worst = next((a for a in answered if a.score is None or a.score < 1.0), None)
    head = f"{positive} of {len(answered)} questions positive"
    if worst is None:
        return head
    item = worst.question.item or "question"
    return f"{head}; first not: {item}: {answer_text(worst, threshold)}"


__all__ = ["answer_text", "injection_text", "invocation_text", "verdict_text"]
