"""What an executor is: something that runs (case, run) units and streams their results back.

A unit is one run of one case, inferred and then scored. The driver (`run_evaluation`) plans
the units, hands the ones still to do to an executor, and is told of each result as it is
known; it alone journals results, reports progress and assembles the documents. Where the
units run (this process, a Ray cluster) is the executor's business.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from agenteval.criteria.spec import ConfiguredMetric
from agenteval.errors import AgentEvalError
from agenteval.runner.job import EvalJob
from agenteval.runner.scoring import NotEvaluatedPolicy
from agenteval.runner.services import Services
from agenteval.schema import EvalCase, EvalCaseResult


@dataclass(frozen=True)
class Unit:
    """One (case, run) to infer and score: `index` is its place in the run's plan, `metrics`
    and `policy` those of its eval set."""

    index: int
    eval_set_id: str
    case: EvalCase
    run_index: int
    metrics: Sequence[ConfiguredMetric]
    policy: NotEvaluatedPolicy = "fail"


Done = Callable[[Unit, EvalCaseResult, float], None]
"""Told of one finished unit: the unit, its result and the seconds it took."""


class Executor(Protocol):
    """Runs units and streams their results back."""

    async def execute(self, units: Sequence[Unit], done: Done) -> None:
        """Runs every unit and calls `done` (in the caller's thread, one call at a time) with
        each result as soon as it is known, in whatever order they finish. A unit's failure
        (the agent's error, a judge's) is its result, not an exception; returns when every unit
        has been reported. An executor may retry a unit whose worker was lost, so the caller
        keeps the first result it gets for a unit."""
        ...


def require_by_path(job: EvalJob, services: Services, where: str, otherwise: str) -> None:
    """An AgentEvalError unless the agent and models can be loaded `where` (another process):
    the agent by its path, models by name (objects handed to `Services` live here only)."""
    if job.agent_path is None:
        raise AgentEvalError(f"{where} loads the agent from its path (EvalJob.agent_path); an agent "
                             f"given only as an object {otherwise}")
    if services.provided:
        raise AgentEvalError(f"{where} resolves models by name; models handed to Services "
                             f"({', '.join(sorted(services.provided))}) live in this process only")


__all__ = ["Done", "Executor", "Unit", "require_by_path"]
