"""`--until_decided`: when a case's runs say enough about whether it passes.

Each run of a case passes or not (its verdict against its criteria's thresholds). A case is
DECIDED PASSED when the evidence that its pass chance is above `rate` reaches 1/`alpha`, DECIDED
FAILED when the evidence that it is below does (`stats.evidence_above` / `evidence_below`:
likelihood ratios against `rate` of a mixture of "always passes" (or "never passes") and a
uniform prior on that side of `rate`; so a case that always passes is decided PASSED after 5 runs
at the defaults, as soon as an exact binomial test would, and a 19-of-20 one too). Both are
nonnegative supermartingales under the hypothesis they test against, so by Ville's inequality a
case whose pass chance is at most `rate` is decided PASSED with probability at most `alpha`, and
one at least `rate` decided FAILED with probability at most `alpha`, however many times the
evidence is looked at and whenever the runs stop (an anytime-valid rule: runs may be added one
or several at a time). A case still undecided when its runs reach `max_runs` stays UNDECIDED
(its pass chance is near `rate`). The confidence reported is 1 − 1/evidence (the rule's
anytime p-value is 1/evidence).
"""


from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

from agenteval.verdicts.stats import evidence_above, evidence_below


class Decision(str, Enum):
    """Where a case stands under the sequential rule."""

    PASSED = "passed"
    FAILED = "failed"
    UNDECIDED = "undecided"


class CaseDecision(BaseModel):
    """One case: its decision, after how many runs (and passes), at what confidence."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    eval_id: str
    decision: Decision
    runs: int
    passed_runs: int
    confidence: float = Field(description="1 − 1/evidence for the side decided (or the stronger "
                              "side while undecided), floored at 0.")


class Decisions(BaseModel):
    """The rule's settings and every case's decision (kept in a result document's metadata
    under `until_decided`)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    alpha: float
    rate: float
    max_runs: int
    cases: list[CaseDecision] = Field(default_factory=list)

    def counts(self) -> dict[Decision, int]:
        out = dict.fromkeys(Decision, 0)
        for c in self.cases:
            out[c.decision] += 1
        return out


def decide(eval_id: str, verdicts: Sequence[bool], alpha: float, rate: float) -> CaseDecision:
    """A case's decision from its runs' verdicts (run order; True: passed)."""
    n, k = len(verdicts), sum(verdicts)
    up, down = evidence_above(k, n, rate), evidence_below(k, n, rate)
    if up >= 1.0 / alpha:
        decision, evidence = Decision.PASSED, up
    elif down >= 1.0 / alpha:
        decision, evidence = Decision.FAILED, down
    else:
        decision, evidence = Decision.UNDECIDED, max(up, down)
    return CaseDecision(eval_id=eval_id, decision=decision, runs=n, passed_runs=k,
                        confidence=max(0.0, 1.0 - 1.0 / evidence) if evidence > 0 else 0.0)


def runs_to_decide(verdicts: Sequence[bool], alpha: float, rate: float, max_runs: int) -> int:
    """How many more runs an undecided case needs at least before it can be decided (were they
    all to pass, or all to fail); 0 when it is decided, or when the runs `max_runs` leaves could
    not decide it whatever they gave. Scheduling that many at once spends no run the rule could
    have spared."""
    n, k = len(verdicts), sum(verdicts)
    if decide("", verdicts, alpha, rate).decision != Decision.UNDECIDED:
        return 0
    for more in range(1, max_runs - n + 1):
        if (evidence_above(k + more, n + more, rate) >= 1.0 / alpha
                or evidence_below(k, n + more, rate) >= 1.0 / alpha):
            return more
    return 0  # not even the runs left, all passing or all failing, would decide it


def runs_that_could_decide(passed: int, runs: int, alpha: float, rate: float,
                           limit: int = 1000) -> int | None:
    """The fewest runs in all that could decide a case undecided after `passed` of `runs` (were
    the runs to come all to pass, or all to fail): the `max_runs` it would take; None when it
    is decided, or beyond `limit` runs."""
    more = runs_to_decide([True] * passed + [False] * (runs - passed), alpha, rate, limit)
    return runs + more if more else None


@dataclass(frozen=True)
class SequentialRule:
    """The rule's settings: error rate `alpha` per decision, the pass rate `rate` a case is
    decided against, and at most `max_runs` runs per case."""

    alpha: float = 0.05
    rate: float = 0.5
    max_runs: int = 10

    def __post_init__(self) -> None:
        if not 0.0 < self.alpha < 1.0:
            raise ValueError("decide_alpha must be between 0 and 1")
        if not 0.0 < self.rate < 1.0:
            raise ValueError("decide_rate must be between 0 and 1")
        if self.max_runs < 1:
            raise ValueError("max_runs must be at least 1")

    def more_runs(self, verdicts: Sequence[bool]) -> int:
        """`runs_to_decide` under this rule."""
        return runs_to_decide(verdicts, self.alpha, self.rate, self.max_runs)

    def decisions(self, cases: Sequence[tuple[str, Sequence[bool]]]) -> Decisions:
        """Every case's decision from its runs' verdicts (eval id, verdicts in run order)."""
        return Decisions(alpha=self.alpha, rate=self.rate, max_runs=self.max_runs,
                         cases=[decide(i, v, self.alpha, self.rate) for i, v in cases])


__all__ = ["CaseDecision", "Decision", "Decisions", "SequentialRule", "decide", "runs_that_could_decide",
           "runs_to_decide"]
