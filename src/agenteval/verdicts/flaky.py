"""Flaky cases: those whose verdicts flip across the run history.

A case's history is its run verdicts (pass / fail) in the order they were made: the stored runs
oldest first, each run's repeats in run order. A case is flaky when it both passed and failed
somewhere in that history. For each: its pass rate, its flip rate (the share of consecutive
verdicts that differ: near 0 for a case that changed once and stayed, near 1 for one that
alternates), and pass@k / pass^k over all its runs (k capped at its runs). Flaky cases are listed
most uncertain first (pass rate nearest 1/2), then by flip rate.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agenteval.verdicts.aggregate import pass_at_k, pass_pow_k
from agenteval.verdicts.paired import Runs


@dataclass(frozen=True)
class FlakyCase:
    """One case's verdicts over the history."""

    eval_set_id: str
    eval_id: str
    runs: int  # case runs seen (over every stored run and its repeats)
    passed: int
    flips: int  # consecutive verdicts that differ
    stored_runs: int  # stored runs the case appears in

    @property
    def pass_rate(self) -> float:
        return self.passed / self.runs

    @property
    def flip_rate(self) -> float:
        return self.flips / (self.runs - 1) if self.runs > 1 else 0.0

    def pass_k(self, k: int) -> tuple[float, float]:
        """(pass@k, pass^k) with k capped at the runs seen."""
        kk = min(k, self.runs)
        return pass_at_k(self.runs, self.passed, kk), pass_pow_k(self.runs, self.passed, kk)


def flaky_cases(history: Iterable[tuple[str, Runs]], min_runs: int = 2) -> list[FlakyCase]:
    """The flaky cases of `history` (each stored run's eval set id and case runs, oldest run
    first) with at least `min_runs` case runs, most uncertain first."""
    verdicts: dict[tuple[str, str], list[bool]] = {}
    seen: dict[tuple[str, str], int] = {}
    for eval_set_id, runs in history:
        for eval_id, by_index in runs.items():
            key = (eval_set_id, eval_id)
            verdicts.setdefault(key, []).extend(by_index[j].passed for j in sorted(by_index))
            seen[key] = seen.get(key, 0) + 1
    out = []
    for (set_id, eval_id), v in verdicts.items():
        passed = sum(v)
        if len(v) >= min_runs and 0 < passed < len(v):
            out.append(FlakyCase(set_id, eval_id, len(v), passed, _flips(v), seen[(set_id, eval_id)]))
    return sorted(out, key=lambda c: (abs(c.pass_rate - 0.5), -c.flip_rate, c.eval_set_id, c.eval_id))


def _flips(v: Sequence[bool]) -> int:
    return sum(1 for a, b in itertools.pairwise(v) if a != b)


__all__ = ["FlakyCase", "flaky_cases"]
