"""Jobs: what a front end asks the runner to do, as data.

`EvalJob` runs an agent over eval sets; `ScoreJob` scores what an agent already did (an eval set
of actual conversations, or a result document) against an expected eval set. Both carry the
config, the judge model override and the concurrency; `runner.run` and `runner.rescore` take
them with the run's `Services`. Nothing here prints or reads `os.environ`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenteval.criteria import ConfiguredMetric, resolve_metrics
from agenteval.errors import DataError
from agenteval.models import ModelUnavailable, parse_model_name
from agenteval.runner.selection import Selection
from agenteval.schema import (
    Concurrency,
    EndpointOptions,
    EvalConfig,
    EvalSet,
    EvalSetResult,
    LlmAsAJudgeCriterion,
)
from agenteval.schema.run import RunCommand

if TYPE_CHECKING:  # (field types only: `score` of a recorded eval set uses neither module)
    from agenteval.tracing.ingest import TraceConversations
    from agenteval.verdicts.sequential import SequentialRule


def with_judge_model(metrics: Sequence[ConfiguredMetric], judge_model: str | None,
                     escalate_to: str | None = None,
                     rationales: str | None = None) -> list[ConfiguredMetric]:
    """Points every LLM-judged criterion at `judge_model` (and its uncertain verdicts at
    `escalate_to`), and sets which of its verdicts get a rationale (`rationales`), where given."""
    update = {k: v for k, v in (("judge_model", judge_model), ("escalate_to", escalate_to),
                                ("rationales", rationales)) if v}
    if not update:
        return list(metrics)
    out = []
    for m in metrics:
        c = m.criterion
        if isinstance(c, LlmAsAJudgeCriterion):
            options = c.judge_model_options.model_copy(update=update)
            c = c.model_copy(update={"judge_model_options": options})
        out.append(ConfiguredMetric(m.spec, c))
    return out


def judge_models(metrics: Sequence[ConfiguredMetric]) -> list[str]:
    """The judge model names the metrics use, in first-use order."""
    names = [name for m in metrics if isinstance(m.criterion, LlmAsAJudgeCriterion)
             for name in (m.criterion.judge_model_options.judge_model,
                          m.criterion.judge_model_options.escalate_to) if name]
    return list(dict.fromkeys(names))


def weak_judges(metrics: Sequence[ConfiguredMetric]) -> list[str]:
    """Names of the metrics judged by the embedded model on questions where it was measured to
    be weak (`WEAK_ON_EMBEDDED`): verdicts a user should not rely on."""
    out = []
    for m in metrics:
        c = m.criterion
        if isinstance(c, LlmAsAJudgeCriterion):
            # (imported here: a run that judges nothing starts without the judge's criteria)
            from agenteval.criteria.judge.base import WEAK_ON_EMBEDDED

            backend = parse_model_name(c.judge_model_options.judge_model).backend
            if m.name in WEAK_ON_EMBEDDED and backend == "local":
                out.append(m.name)
    return out


@dataclass
class JobOptions:
    """What every job has: the config (and where it came from), a judge model replacing the
    config's, concurrency, endpoint settings, and who asked (`command`, `argv`) for the run
    header. `judge_timeout` / `judge_attempts`, when set, apply to every judge endpoint."""

    config: EvalConfig = field(default_factory=EvalConfig)
    config_source: str | None = None
    judge_model: str | None = None
    escalate_judge_model: str | None = None  # where every judged criterion's uncertain verdicts go
    # Which verdicts of every judged criterion get a rationale ("negative", "always", "never").
    judge_rationales: str | None = None
    concurrency: Concurrency = field(default_factory=Concurrency)
    endpoints: dict[str, EndpointOptions] = field(default_factory=dict)
    judge_timeout: float | None = None
    judge_attempts: int | None = None
    command: RunCommand = "api"
    argv: list[str] | None = None
    # (what they were resolved from, the metrics): see `metrics`. The config object is held by
    # the key's id only while this job holds the config, so the id cannot be reused meanwhile.
    _resolved: tuple[tuple[int, str | None, str | None, str | None, str | None],
                     list[ConfiguredMetric]] | None = field(
        default=None, repr=False, compare=False)

    def _canonical(self, name: str) -> str:
        try:
            return parse_model_name(name).name
        except ModelUnavailable as e:
            raise DataError(self.config_source, f"endpoints.{name}", str(e)) from None

    def model_limits(self) -> dict[str, int]:
        """Calls in flight per endpoint: the config's `endpoints.*.max_concurrency`, with the
        command line's (`concurrency.model_calls`) over them."""
        limits = {self._canonical(n): e.max_concurrency for n, e in (self.config.endpoints or {}).items()
                  if e.max_concurrency is not None}
        return {**limits, **self.concurrency.model_calls}

    def metrics(self) -> list[ConfiguredMetric]:
        """The config's metrics (informational ones included), judges overridden: resolved once
        per (config, source, judge overrides), so every step of a run (checks, header, scoring,
        the executors) works from the same list; a changed config is resolved again."""
        key = (id(self.config), self.config_source, self.judge_model, self.escalate_judge_model,
               self.judge_rationales)
        if self._resolved is None or self._resolved[0] != key:
            resolved = with_judge_model(resolve_metrics(self.config, self.config_source), self.judge_model,
                                        self.escalate_judge_model, self.judge_rationales)
            self._resolved = (key, resolved)
        return list(self._resolved[1])

    def endpoint_settings(self, metrics: Sequence[ConfiguredMetric]) -> dict[str, EndpointOptions]:
        """Settings per endpoint (canonical model names): the config's `endpoints`, then
        `endpoints`, with the judge timeout and attempts laid over those of every judge model
        the metrics use. A model name no backend understands names the config key."""
        out: dict[str, EndpointOptions] = {}
        for name, given in (self.config.endpoints or {}).items():
            fields = given.model_dump(exclude_none=True, exclude={"max_concurrency"})
            out[self._canonical(name)] = EndpointOptions(**fields)
        out.update(self.endpoints)
        update = {k: v for k, v in (("timeout", self.judge_timeout),
                                    ("attempts", self.judge_attempts)) if v is not None}
        if update:
            for name in judge_models(metrics):
                out[name] = out.get(name, EndpointOptions()).model_copy(update=update)
        return out


@dataclass
class EvalJob(JobOptions):
    """Run `agent` over the selected eval sets, `num_runs` times each case."""

    agent: Any = None  # a loaded root_agent, Agent, callable, ADK agent or AgentAdapter
    selections: Sequence[Selection] = ()
    num_runs: int = 1
    agent_model: str | None = None
    app_name: str | None = None
    agent_path: str | None = None
    traces: bool = True  # record each case run's spans into its result
    case_timeout: float | None = None  # seconds per case run (else the config's case_timeout)
    resume: str | None = None  # a journaled run to finish: only what it lacks is run
    retry_errors: bool = False  # with `resume`: also run again what ended in an error
    executor: str = "local"  # where case runs go: "local" (this process) or "ray" (runner.executors)
    ray_address: str | None = None  # with "ray": the cluster (auto, ray://HOST:PORT); None: local
    # Where the agent's turns run: "none" (this process) or "process" (a worker process per case
    # run in flight, killed at the case timeout: runner.executors.process); None: the config's.
    isolation: str | None = None
    # Rerun rounds until each case is decided (`verdicts.sequential`); None: `num_runs` each.
    until_decided: SequentialRule | None = None

    def case_timeout_in_force(self) -> float | None:
        """Seconds per case run: the command line's, else the config's (None: no limit)."""
        return self.case_timeout or self.config.case_timeout


@dataclass
class ScoreJob(JobOptions):
    """Score `actual` (what an agent did) against the expected eval set."""

    expected: Selection | None = None
    actual: EvalSet | EvalSetResult | TraceConversations | None = None
    actual_source: str | Path | None = None


__all__ = ["EvalJob", "JobOptions", "ScoreJob", "judge_models", "weak_judges", "with_judge_model"]
