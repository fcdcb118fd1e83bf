"""The decision on one judged question, as immutable values made by pure functions.

The cascade, in order (the asking is `engine.cascade`; everything here is pure):

1. **Vote** (`vote`): the verdict is the label most readable samples chose; a tie between the
   positive and the negative side goes to the negative side (fail closed). If half or more of
   the samples could not be read (even after the service's retry), the question has no verdict:
   a judge error. A pass is never assembled from a minority of readable samples.
2. **Confidence** (`confidence`): the probability of the verdict's side at the verdict token
   when the answer has label probabilities (`"logprobs"`), else the share of all samples on the
   verdict's side (`"samples"`; none with a single sample).
3. **Held to a threshold** (`hold`, or `decide` with `DecisionOptions`): a verdict whose confidence is
   below the `min_confidence` for its source is *uncertain*, never a pass. Without a stronger
   judge to ask, it becomes a judge error (`judge uncertain: ...`); with one (`escalate_to`), it
   waits for it.
4. **Escalated** (`escalate`): the stronger judge's decision (voted, never held to a threshold)
   decides: its score, verdict, rationale and error replace the uncertain one's; the uncertain
   decision keeps its own samples and confidence, and the stronger one beside them.
5. **Cross-checked** (`cross_check`): a question may carry a second question (`check`), asked
   when the first's verdict is one of `check_when`; the second's score is then the question's
   (so it can turn a pass into a fail or a judge error); both decisions are kept.

Every step returns a new `Decision`; nothing is changed in place.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Literal

from agenteval.criteria.judge.engine.logprobs import side_probability
from agenteval.criteria.judge.engine.service import JudgeAnswer

Source = Literal["logprobs", "samples"]


@dataclass(frozen=True)
class JudgeQuestion:
    """One question for the judge: which invocation and item (rubric id, sentence) it is about,
    the prompt, the labels it may answer and which of them are positive, the fields the judge
    fills in before its label, the solved (prompt, reply) pairs shown first, the passages cut
    from the agent's text, and an optional cross-check asked when the verdict is in
    `check_when`."""

    invocation_index: int
    item: str | None
    prompt: str
    labels: tuple[str, ...] = ("yes", "no")
    positive: frozenset[str] = frozenset({"yes"})
    notes: tuple[str, ...] = ()  # fields the judge fills in before its label
    examples: tuple[tuple[str, str], ...] = ()  # solved (prompt, reply) pairs shown first
    screened: tuple[str, ...] = ()  # passages cut from the agent's text (see `prompting.screen`)
    check: JudgeQuestion | None = None  # asked when this question's verdict is in check_when
    check_when: frozenset[str] = frozenset()


@dataclass(frozen=True)
class DecisionOptions:
    """How sure a verdict must be: `min_confidence` as configured (None: not set; 0: off), the
    criterion's shipped threshold for probabilities (`logprobs`) used when none is configured,
    and the stronger judge that decides uncertain verdicts (None: they are judge errors)."""

    min_confidence: float | None = None
    shipped_min_confidence: float | None = None
    escalate_to: str | None = None

    def threshold(self, source: str | None) -> float | None:
        """The threshold below which a verdict of this confidence source is uncertain: the
        configured one, else the shipped default for probabilities."""
        if self.min_confidence is not None:
            return self.min_confidence
        return self.shipped_min_confidence if source == "logprobs" else None


@dataclass(frozen=True)
class Decision:
    """What one judge model decided on one question (see the module docstring).

    `score` is 1.0 / 0.0 for the verdict's side, None on a judge error (`error` says why);
    `confidence` and `confidence_source` are this model's; `threshold` is the min_confidence it
    was held to (None: not held). After an escalation, `score`, `verdict`, `rationale` and
    `error` are the stronger judge's (`escalated`). `check` is the cross-check's decision, and
    `outcome` the question's score once it is cross-checked. `span_id` links the judge span."""

    question: JudgeQuestion
    model: str
    answer: JudgeAnswer
    score: float | None
    verdict: str | None
    rationale: str | None
    error: str | None
    confidence: float | None = None
    confidence_source: Source | None = None
    threshold: float | None = None
    uncertain: bool = False
    escalated: Decision | None = None
    check: Decision | None = None
    span_id: str | None = None

    @property
    def outcome(self) -> float | None:
        """The question's score: the cross-check's when one was asked, else this one."""
        return self.check.score if self.check is not None else self.score

    @property
    def awaits_escalation(self) -> bool:
        """Uncertain, with no error yet: a stronger judge is to decide (see `escalate`)."""
        return self.uncertain and self.escalated is None and self.error is None


def vote(answer: JudgeAnswer, q: JudgeQuestion) -> tuple[float | None, str | None, str | None, str | None]:
    """(score, label, rationale, error) by majority over the readable samples; the judge's
    own failure, when it could not be asked, is the error."""
    if answer.error is not None:
        return None, None, None, answer.error
    readable = [s.verdict for s in answer.samples if s.verdict is not None]
    if len(readable) * 2 <= len(answer.samples):
        return None, None, None, (f"only {len(readable)} of {len(answer.samples)} judge samples could "
                                  "be read")
    positive = sum(1 for v in readable if v.label in q.positive)
    negative = len(readable) - positive
    side = [v for v in readable if (v.label in q.positive) == (positive > negative)]
    label = Counter(v.label for v in side).most_common(1)[0][0]
    rationale = next(v.rationale for v in side if v.label == label)
    return (1.0 if positive > negative else 0.0), label, rationale, None


def confidence(answer: JudgeAnswer, q: JudgeQuestion, label: str | None
               ) -> tuple[float | None, Source | None]:
    """The verdict's confidence and where it comes from: the probability of the verdict's side
    at the verdict token when the answer has label probabilities, else the samples' agreement
    (None with a single sample, which says nothing about it)."""
    if label is None:
        return None, None
    if answer.distribution is not None:
        return side_probability(answer.distribution, q.positive, label), "logprobs"
    share = agreement(answer, q, label)
    return share, None if share is None else "samples"


def agreement(answer: JudgeAnswer, q: JudgeQuestion, label: str | None) -> float | None:
    """The share of all samples (unreadable ones included) on the verdict's side; None with a
    single sample."""
    if label is None or len(answer.samples) < 2:
        return None
    side = label in q.positive
    return sum(1 for s in answer.samples
               if s.verdict is not None and (s.verdict.label in q.positive) == side) / len(answer.samples)


def decide(q: JudgeQuestion, model: str, answer: JudgeAnswer,
           options: DecisionOptions | None = None) -> Decision:
    """`model`'s decision on `q` from its `answer`: the vote and its confidence, then held to
    `options`' threshold (`hold`; None: not held, as for the stronger judge of an escalation,
    whose verdict is final)."""
    score, label, rationale, error = vote(answer, q)
    conf, source = confidence(answer, q, label)
    decision = Decision(q, model, answer, score, label, rationale, error, conf, source)
    return decision if options is None else hold(decision, options)


def hold(decision: Decision, options: DecisionOptions) -> Decision:
    """The decision held to the threshold for its confidence source. Below it, it is uncertain:
    a judge error (`judge uncertain: ...`) unless `options.escalate_to` is set, in which case it
    awaits `escalate`. A verdict without confidence, or a judge error, is never uncertain."""
    threshold = options.threshold(decision.confidence_source)
    decision = replace(decision, threshold=threshold)
    conf = decision.confidence
    if threshold is None or decision.error is not None or conf is None or conf >= threshold:
        return decision
    if options.escalate_to:
        return replace(decision, uncertain=True)
    how = "p=" if decision.confidence_source == "logprobs" else "confidence "
    return replace(decision, uncertain=True, score=None,
                   error=(f"judge uncertain: {decision.verdict} with {how}{conf:.2f}, below "
                          f"min_confidence {threshold:g}"))


def escalate(uncertain: Decision, strong: Decision) -> Decision:
    """The uncertain decision, decided by the stronger judge's: its score, verdict, rationale
    and error are `strong`'s, its own samples and confidence stay, `strong` is kept beside."""
    return replace(uncertain, score=strong.score, verdict=strong.verdict, rationale=strong.rationale,
                   error=strong.error, escalated=strong)


def needs_check(decision: Decision) -> bool:
    """Whether the question's cross-check is to be asked: it has one, the (escalated) verdict
    is one of its `check_when` labels, and that verdict stands (an uncertain verdict held as a
    judge error is never a pass, so no cross-check may turn it into one)."""
    q = decision.question
    return q.check is not None and decision.score is not None and decision.verdict in q.check_when


def cross_check(decision: Decision, check: Decision) -> Decision:
    """The decision with its cross-check's, which decides the question's `outcome`."""
    return replace(decision, check=check)


__all__ = ["Decision", "DecisionOptions", "JudgeQuestion", "Source", "agreement", "confidence",
           "cross_check", "decide", "escalate", "hold", "needs_check", "vote"]
