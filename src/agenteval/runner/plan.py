"""`RunPlan`: a run as resolved before any case runs, handed to every step and executor.

A job (`EvalJob`, `ScoreJob`) says what was asked for; `prepare` resolves it once, against the
run's services: the metrics (judges overridden), the settings of every endpoint, the case
timeout in force, the user simulator's config, and it checks every judge (and the simulator's
model) so that a bad name fails before any work. The plan is frozen and picklable: the local,
process and Ray executors receive it and read their settings from it instead of resolving them
again, so a run's steps cannot disagree about what the run is. `describe` gives it as JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from agenteval.agents.mock_tools import MockTools
from agenteval.criteria import ConfiguredMetric
from agenteval.criteria.judge.certificates import (
    CertificateBook,
    certificate_folders,
    certify,
    rubric_certifications,
)
from agenteval.errors import DataError
from agenteval.runner.job import EvalJob, JobOptions
from agenteval.runner.judges import check_judges
from agenteval.runner.mocking import tool_mocking
from agenteval.runner.scoring import NotEvaluatedPolicy
from agenteval.runner.services import Services
from agenteval.schema import EndpointOptions
from agenteval.simulation import LlmBackedUserSimulatorConfig, parse_simulator_config


@dataclass(frozen=True)
class RunPlan:
    """What a run does, resolved once (see `prepare`). `endpoints` holds each endpoint's
    settings by canonical model name (copied out by `endpoint_settings`, so no step can change
    another's); the fields after it are an `EvalJob`'s and keep their defaults for re-scoring."""

    metrics: tuple[ConfiguredMetric, ...]
    endpoints: tuple[tuple[str, EndpointOptions], ...]
    config_source: str | None = None
    not_evaluated: NotEvaluatedPolicy = "fail"
    repeat_gating: str = "mean"
    simulator: LlmBackedUserSimulatorConfig | None = None  # None: the config has none
    num_runs: int = 1
    parallelism: int = 4
    case_timeout: float | None = None  # seconds per case run in force (None: no limit)
    isolation: str = "none"  # "none" or "process" (checked by `executor_for`)
    inner_tool_calls: Literal["include", "exclude"] = "include"
    traces: bool = True
    mock_tools: MockTools | None = None  # tool calls served from the eval set (None: all live)

    def endpoint_settings(self) -> dict[str, EndpointOptions]:
        """Settings per endpoint: a new dict, the caller's to change."""
        return dict(self.endpoints)

    def simulator_config(self) -> LlmBackedUserSimulatorConfig:
        """The user simulator's config (the defaults when the config sets none)."""
        return self.simulator if self.simulator is not None else parse_simulator_config(None)

    def describe(self) -> dict[str, Any]:
        """The plan as JSON: metric names with their criteria, endpoint settings, and the rest."""
        return {
            "criteria": {m.name: m.criterion.model_dump(mode="json", exclude_none=True)
                         for m in self.metrics},
            "endpoints": {n: e.model_dump(mode="json", exclude_none=True) for n, e in self.endpoints},
            "config_source": self.config_source, "not_evaluated": self.not_evaluated,
            "repeat_gating": self.repeat_gating,
            "simulator": None if self.simulator is None else self.simulator.model_dump(mode="json"),
            "num_runs": self.num_runs, "parallelism": self.parallelism, "case_timeout": self.case_timeout,
            "isolation": self.isolation, "inner_tool_calls": self.inner_tool_calls, "traces": self.traces,
            "mock_tools": None if self.mock_tools is None else {
                "modes": dict(self.mock_tools.modes), "strict": self.mock_tools.strict},
        }


def certified(metrics: Sequence[ConfiguredMetric], job: JobOptions) -> list[ConfiguredMetric]:
    """The metrics with their calibration certificates (`criteria.judge.certificates`): looked
    up beside the agent and the config, in the working directory, then among the shipped ones;
    a bad certificate file is a DataError naming it."""
    book = CertificateBook.load(certificate_folders(
        getattr(job, "agent_path", None), job.config_source))
    policy = job.config.judge_certificates
    return [replace(m, certification=certify(m, book, policy),
                    rubric_certifications=rubric_certifications(m, book, policy)) for m in metrics]


def prepare(job: JobOptions, services: Services) -> RunPlan:
    """The job resolved against its services: its metrics resolved once and every judge (and
    the user simulator's model) checked (`check_judges`: a bad name or a missing key is a
    DataError naming where it came from), before any eval set or agent needs loading."""
    metrics: Sequence[ConfiguredMetric] = job.metrics()
    check_judges(metrics, job, services)
    config = job.config
    metrics = certified(metrics, job)
    simulator = None
    if config.user_simulator_config is not None:
        simulator = parse_simulator_config(config.user_simulator_config, job.config_source)
    if not config.criteria:  # every case would fail (ADK's NOT_EVALUATED) with no reason to show
        raise DataError(job.config_source or "", "criteria",
                        "no criterion: name at least one to score the cases by")
    common: dict[str, Any] = {
        "metrics": tuple(metrics), "endpoints": tuple(job.endpoint_settings(metrics).items()),
        "config_source": job.config_source, "not_evaluated": config.not_evaluated,
        "repeat_gating": config.repeat_gating, "simulator": simulator,
        "parallelism": job.concurrency.cases, "inner_tool_calls": config.inner_tool_calls,
        "mock_tools": tool_mocking(config, metrics),
    }
    if not isinstance(job, EvalJob):
        return RunPlan(**common)
    return RunPlan(**common, num_runs=job.num_runs, case_timeout=job.case_timeout_in_force(),
                   isolation=job.isolation or config.isolation, traces=job.traces)


__all__ = ["RunPlan", "prepare"]
