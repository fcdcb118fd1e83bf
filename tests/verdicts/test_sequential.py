"""The `--until_decided` rule: decisions, the runs it asks for, and its error rate (seeded)."""

import random

import pytest

from agenteval.verdicts.sequential import (
    Decision,
    SequentialRule,
    decide,
    runs_that_could_decide,
    runs_to_decide,
)


def test_decisions_and_confidence() -> None:
    # Never failing: decided after 5 runs, as an exact binomial test would (2^-5 < 0.05).
    assert decide("x", [True] * 5, 0.05, 0.5).decision == Decision.PASSED
    assert decide("x", [True] * 4, 0.05, 0.5).decision == Decision.UNDECIDED  # (16 + 31/5) / 2 < 20
    d = decide("x", [False] * 5, 0.05, 0.5)
    assert d.decision == Decision.FAILED and d.confidence == pytest.approx(1 - 2 / (32 + 63 / 6))
    assert (d.runs, d.passed_runs) == (5, 0)
    assert decide("x", [True] * 11 + [False], 0.05, 0.5).decision == Decision.PASSED
    assert decide("x", [True] * 10 + [False], 0.05, 0.5).decision == Decision.UNDECIDED
    assert decide("x", [True, False] * 10, 0.05, 0.5).decision == Decision.UNDECIDED


def test_runs_to_decide_asks_for_the_fewest_that_could_decide() -> None:
    assert runs_to_decide([], 0.05, 0.5, 20) == 5
    assert runs_to_decide([True], 0.05, 0.5, 20) == 4
    assert runs_to_decide([True] * 5, 0.05, 0.5, 20) == 0  # decided
    assert runs_to_decide([True, False], 0.05, 0.5, 5) == 0  # 3 more could not decide it
    assert runs_to_decide([True, False], 0.05, 0.5, 20) == 10
    assert runs_to_decide([False], 0.05, 0.8, 20) == 2  # far below a high bar: quick
    rule = SequentialRule(0.05, 0.5, 20)
    assert rule.more_runs([True]) == 4
    decisions = rule.decisions([("a", [True] * 5), ("b", [True, False])])
    assert decisions.counts() == {Decision.PASSED: 1, Decision.FAILED: 0, Decision.UNDECIDED: 1}


def test_the_max_runs_that_could_decide_an_undecided_case() -> None:
    assert runs_that_could_decide(4, 5, 0.05, 0.5) == 12  # 11 of 12 is decided (above), 10 of 11 not
    assert decide("x", [True] * 11 + [False], 0.05, 0.5).decision == Decision.PASSED
    assert runs_that_could_decide(1, 5, 0.05, 0.5) == 12  # the same, below
    assert runs_that_could_decide(5, 5, 0.05, 0.5) is None  # decided
    assert runs_that_could_decide(500, 1000, 0.05, 0.5, limit=1000) is None  # beyond the limit


@pytest.mark.parametrize(("alpha", "rate", "max_runs"), [(0.0, 0.5, 5), (0.05, 1.0, 5), (0.05, 0.5, 0)])
def test_settings_are_checked(alpha: float, rate: float, max_runs: int) -> None:
    with pytest.raises(ValueError):
        SequentialRule(alpha, rate, max_runs)


def _run(p: float, rule: SequentialRule, rng: random.Random) -> Decision:
    """The rule as the runner applies it: rounds of the runs that could decide."""
    verdicts: list[bool] = [rng.random() < p]
    while more := rule.more_runs(verdicts):
        verdicts += [rng.random() < p for _ in range(more)]
    return decide("x", verdicts, rule.alpha, rule.rate).decision


def test_wrong_decisions_are_at_most_alpha_at_the_boundary() -> None:
    """Seeded: a case whose pass chance is just below (above) the rate is decided passed
    (failed) at most alpha of the time, checked however the rounds fall."""
    rng = random.Random(11)
    rule = SequentialRule(0.05, 0.5, 60)
    trials = 1000
    wrong_pass = sum(_run(0.49, rule, rng) == Decision.PASSED for _ in range(trials))
    wrong_fail = sum(_run(0.51, rule, rng) == Decision.FAILED for _ in range(trials))
    assert wrong_pass / trials <= 0.05 and wrong_fail / trials <= 0.05
    # far from the rate, it decides, and right
    assert sum(_run(0.95, rule, rng) == Decision.PASSED for _ in range(200)) >= 190
