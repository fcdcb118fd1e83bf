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


def executor_for(job: EvalJob, plan: RunPlan, services: Services, judge: JudgeService,
                 listener: Listener | None = None) -> Executor | None:
    """The executor `job.executor` names: for "local", None (`run_evaluation` builds its own)
    or, with process isolation (`plan.isolation`), a `ProcessExecutor`; a
    `RayExecutor` for "ray" (an AgentEvalError now if Ray is not installed, or the job cannot
    run there). An unknown name, a Ray address for the local executor, or process isolation on
    Ray is an AgentEvalError."""
    isolation = plan.isolation
    if isolation not in ISOLATIONS:
        raise AgentEvalError(f"unknown isolation {isolation!r}; choose one of {', '.join(ISOLATIONS)}")
    if job.executor == "local":
        if job.ray_address:
            raise AgentEvalError(f"a Ray address ({job.ray_address}) is for the Ray executor: add "
                                 "--executor ray (EvalJob.executor='ray')")
        if isolation == "process":
            from agenteval.runner.executors.process import ProcessExecutor

            return ProcessExecutor(job, plan, services, judge, listener)
        return None
    if job.executor == "ray":
        if isolation == "process":
            raise AgentEvalError("--isolation process runs case runs in worker processes of this "
                                 "machine: it works with the local executor, not with --executor ray")
        from agenteval.runner.executors.ray_executor import RayExecutor

        return RayExecutor(job, plan, services, judge, listener)
    raise AgentEvalError(f"unknown executor {job.executor!r}; choose one of {', '.join(EXECUTORS)}")


__all__ = ["EXECUTORS", "ISOLATIONS", "executor_for"]
