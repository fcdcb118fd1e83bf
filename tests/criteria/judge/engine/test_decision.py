"""The decision cascade as pure steps: vote → confidence → held → escalated → cross-checked."""

import dataclasses

import pytest

from agenteval.criteria.judge.engine.decision import (
    DecisionOptions,
    JudgeQuestion,
    cross_check,
    decide,
    escalate,
    hold,
    needs_check,
)
from agenteval.criteria.judge.engine.service import JudgeAnswer, Sample
from agenteval.criteria.judge.engine.verdict import Verdict

CHECK = JudgeQuestion(0, "s1, cross-check", "check?", labels=("same", "different"),
                      positive=frozenset({"same"}))
Q = JudgeQuestion(0, "s1", "p", labels=("valid", "invalid"), positive=frozenset({"valid"}),
                  check=CHECK, check_when=frozenset({"valid"}))


def _answer(*labels: str | None, distribution: dict[str, float] | None = None) -> JudgeAnswer:
    return JudgeAnswer("p", [Sample("raw", Verdict(label, f"because {i}") if label else None)
                             for i, label in enumerate(labels)], distribution=distribution)


def test_the_vote_and_its_confidence_from_the_samples() -> None:
    d = decide(Q, "weak", _answer("valid", "valid", "invalid", "valid", None))
    assert (d.score, d.verdict, d.rationale, d.error) == (1.0, "valid", "because 0", None)
    assert (d.confidence, d.confidence_source, d.uncertain) == (0.6, "samples", False)
    assert d.model == "weak" and d.outcome == 1.0


def test_log_probabilities_make_the_confidence_and_the_shipped_threshold_applies_to_them() -> None:
    answer = _answer("valid", "valid", "valid", distribution={"valid": 0.52, "invalid": 0.48})
    shipped = DecisionOptions(shipped_min_confidence=0.55)
    d = decide(Q, "weak", answer, shipped)
    assert d.confidence == 0.52 and d.confidence_source == "logprobs" and d.threshold == 0.55
    assert d.uncertain and d.score is None
    assert d.error == "judge uncertain: valid with p=0.52, below min_confidence 0.55"
    # Sample agreement is no probability: the shipped threshold does not hold it.
    sampled = decide(Q, "weak", _answer("valid", "valid", "invalid"), shipped)
    assert not sampled.uncertain and sampled.threshold is None


def test_holding_makes_a_new_decision_and_leaves_the_first_as_it_was() -> None:
    plain = decide(Q, "weak", _answer("valid", "valid", "valid", "invalid", "invalid"))
    held = hold(plain, DecisionOptions(min_confidence=0.8))
    assert held.error == "judge uncertain: valid with confidence 0.60, below min_confidence 0.8"
    assert plain.error is None and plain.score == 1.0 and not plain.uncertain
    with pytest.raises(dataclasses.FrozenInstanceError):
        held.score = 1.0  # type: ignore[misc]


def test_a_judge_error_or_a_sure_verdict_is_never_uncertain() -> None:
    options = DecisionOptions(min_confidence=0.8)
    unreadable = decide(Q, "weak", _answer("valid", None, None), options)
    assert unreadable.error == "only 1 of 3 judge samples could be read" and not unreadable.uncertain
    assert not decide(Q, "weak", _answer(*["valid"] * 5), options).uncertain
    assert not decide(Q, "weak", _answer("valid"), options).uncertain  # one sample: no confidence


def test_an_uncertain_verdict_awaits_the_stronger_judge_which_decides() -> None:
    options = DecisionOptions(min_confidence=0.8, escalate_to="strong")
    weak = decide(Q, "weak", _answer("valid", "invalid", "valid", "invalid", "valid"), options)
    assert weak.uncertain and weak.awaits_escalation and weak.error is None and weak.score == 1.0
    strong = decide(Q, "strong", _answer("invalid", "invalid", "invalid"))
    decided = escalate(weak, strong)
    assert (decided.score, decided.verdict, decided.rationale) == (0.0, "invalid", "because 0")
    assert decided.confidence == 0.6 and decided.model == "weak" and decided.escalated is strong
    assert not decided.awaits_escalation and weak.escalated is None


def test_the_cross_check_decides_the_question() -> None:
    first = decide(Q, "weak", _answer("valid", "valid", "valid"))
    assert needs_check(first)
    assert not needs_check(decide(Q, "weak", _answer("invalid", "invalid", "invalid")))
    check = decide(CHECK, "weak", _answer("different", "different", "same"))
    checked = cross_check(first, check)
    assert checked.score == 1.0 and checked.outcome == 0.0 and checked.check is check
    assert first.check is None


def test_an_uncertain_verdict_held_as_an_error_is_never_cross_checked_into_a_pass() -> None:
    # Uncertain is never a pass: with no stronger judge, a held "valid" stays a judge error and
    # no confident cross-check may turn it into the question's score.
    held = decide(Q, "weak", _answer("valid", "valid", "valid", "invalid", "invalid"),
                  DecisionOptions(min_confidence=0.8))
    assert held.uncertain and held.score is None and held.verdict == "valid"
    assert not needs_check(held)
    assert held.outcome is None
