"""Choosing a run's executor from its job (`EvalJob.executor`)."""

from __future__ import annotations

from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.errors import AgentEvalError
from agenteval.runner.executors.base import Executor
from agenteval.runner.job import EvalJob
from agenteval.runner.plan import RunPlan
from agenteval.runner.services import Services
from agenteval.schema.progress import Listener

EXECUTORS = ("local", "ray")
ISOLATIONS = ("none", "process")


def check_executor(job: EvalJob, isolation: str) -> None:
    """An AgentEvalError when `job` cannot run as asked: an unknown executor or isolation, a
    Ray address for the local executor, or process isolation on Ray (what `executor_for`
    refuses, for a front end to say before it starts anything)."""
    if isolation not in ISOLATIONS:
        raise AgentEvalError(f"unknown isolation {isolation!r}; choose one of {', '.join(ISOLATIONS)}")
    if job.executor not in EXECUTORS:
        raise AgentEvalError(f"unknown executor {job.executor!r}; choose one of {', '.join(EXECUTORS)}")
    if job.executor == "local" and job.ray_address:
        raise AgentEvalError(f"a Ray address ({job.ray_address}) is for the Ray executor: add "
                             "--executor ray (EvalJob.executor='ray')")
    if job.executor == "ray" and isolation == "process":
        raise AgentEvalError("--isolation process runs case runs in worker processes of this "
                             "machine: it works with the local executor, not with --executor ray")


def executor_for(job: EvalJob, plan: RunPlan, services: Services, judge: JudgeService,
                 listener: Listener | None = None) -> Executor | None:
    """The executor `job.executor` names: for "local", None (`run_evaluation` builds its own)
    or, with process isolation (`plan.isolation`), a `ProcessExecutor`; a
    `RayExecutor` for "ray" (an AgentEvalError now if Ray is not installed, or the job cannot
    run there). What `check_executor` refuses is an AgentEvalError."""
    check_executor(job, plan.isolation)
    if job.executor == "local":
        if plan.isolation == "process":
            from agenteval.runner.executors.process import ProcessExecutor

            return ProcessExecutor(job, plan, services, judge, listener)
        return None
    from agenteval.runner.executors.ray_executor import RayExecutor

    return RayExecutor(job, plan, services, judge, listener)


__all__ = ["EXECUTORS", "ISOLATIONS", "check_executor", "executor_for"]
