"""Choosing a run's executor from its job (`EvalJob.executor`)."""

from __future__ import annotations

from agenteval.criteria.judge.service import JudgeService
from agenteval.errors import AgentEvalError
from agenteval.runner.executors.base import Executor
from agenteval.runner.job import EvalJob
from agenteval.runner.services import Services
from agenteval.schema.progress import Listener

EXECUTORS = ("local", "ray")


def executor_for(job: EvalJob, services: Services, judge: JudgeService,
                 listener: Listener | None = None) -> Executor | None:
    """The executor `job.executor` names: None for "local" (`run_evaluation` builds its own),
    a `RayExecutor` for "ray" (an AgentEvalError now if Ray is not installed, or the job cannot
    run there); an unknown name, or a Ray address for the local executor, is an AgentEvalError."""
    if job.executor == "local":
        if job.ray_address:
            raise AgentEvalError(f"a Ray address ({job.ray_address}) is for the Ray executor: add "
                                 "--executor ray (EvalJob.executor='ray')")
        return None
    if job.executor == "ray":
        from agenteval.runner.executors.ray_executor import RayExecutor

        return RayExecutor(job, services, judge, listener)
    raise AgentEvalError(f"unknown executor {job.executor!r}; choose one of {', '.join(EXECUTORS)}")


__all__ = ["EXECUTORS", "executor_for"]
