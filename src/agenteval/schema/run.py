"""The run header: what one run was (agenteval extension, written into every result document of
the run as `run`; ADK's reader ignores the key).

A run is one call of the runner: every eval set it covered shares its `run_id`, and each
set's result document carries the same header. The run history records the header as it is,
so `agenteval runs show` and the document say the same thing.
"""


from typing import Any, Literal

from pydantic import ConfigDict, Field

from agenteval.schema.base import WireModel
from agenteval.schema.endpoint import EndpointOptions

RunCommand = Literal["eval", "score", "AgentEvaluator", "pytest", "web", "api"]


class EvalSetRef(WireModel):
    """An eval set a run covered: its id, the file it came from (None when built in memory),
    the sha256 of that file's bytes (its version), and the selected case ids (None: all)."""

    eval_set_id: str
    file: str | None = None
    sha256: str | None = None
    case_ids: list[str] | None = None
    cases: int = 0  # cases selected (before repeats)


class ModelRoles(WireModel):
    """Every model the run used, by role (canonical model names; None when the role was not
    played, e.g. no agent model for a re-scoring or an agent that brings its own)."""

    agent: str | None = None
    judge: list[str] = Field(default_factory=list)
    user_simulator: str | None = None


class Concurrency(WireModel):
    """How much ran at once: `cases` (case runs in flight) and `model_calls` (calls in flight
    per model endpoint, by canonical model name; endpoints not listed use their backend's
    default: the embedded model's slots, or the larger of 4 and `cases` for HTTP)."""

    cases: int = Field(default=4, ge=1)
    model_calls: dict[str, int] = Field(default_factory=dict)


class RunTotals(WireModel):
    """Totals over the whole run (every eval set)."""

    cases: int = 0  # eval ids, over all sets
    case_runs: int = 0  # (case, run) pairs
    passed: int = 0
    failed: int = 0
    not_evaluated: int = 0
    agent_errors: int = 0  # case runs whose inference failed
    metric_errors: int = 0
    agent_seconds: float | None = None  # summed invocation durations
    agent_tokens: float | None = None
    judge_calls: int = 0  # model calls made by judges (cache hits excluded)
    judge_prompt_tokens: int = 0
    judge_uncertain: int = 0  # verdicts below min_confidence that nobody decided (not evaluated)
    judge_escalated: int = 0  # uncertain verdicts a stronger judge decided


class AgentInfo(WireModel):
    """The agent under test: its name (the app name results use), where it was loaded from,
    and the kind of adapter that ran it."""

    name: str | None = None
    path: str | None = None
    kind: str | None = None  # builtin, callable, adk, adapter


class ReplayInfo(WireModel):
    """What a replayed run replayed (`agenteval eval --replay RUN`): the reference given, the
    recorded run's id when its document has one, and what happened after a divergence."""

    model_config = ConfigDict(defer_build=True)

    source: str
    run_id: str | None = None
    then: Literal["stop", "live"] = "stop"


class RunSpec(WireModel):
    """The header of one run."""

    run_id: str
    command: RunCommand
    argv: list[str] | None = None
    eval_sets: list[EvalSetRef] = Field(default_factory=list)
    config: dict[str, Any] = Field(default_factory=dict)
    config_file: str | None = None
    agent: AgentInfo | None = None
    actual_file: str | None = None  # re-scoring: what the agent did
    models: ModelRoles = Field(default_factory=ModelRoles)
    concurrency: Concurrency = Field(default_factory=Concurrency)
    endpoints: dict[str, EndpointOptions] = Field(default_factory=dict)  # settings given, by model
    num_runs: int = 1
    gating: str = "mean"
    not_evaluated: str = "fail"
    agenteval_version: str = ""
    started: float = 0.0
    ended: float | None = None
    duration_seconds: float | None = None
    totals: RunTotals = Field(default_factory=RunTotals)
    replay: ReplayInfo | None = None  # a replay of a recorded run (None: a live run)
    # What was pinned so reruns give the same bytes, by model (e.g. the embedded model's seed,
    # sampling, calls in flight, prompt cache, llama.cpp build; see models.local.pinning).
    pinned: dict[str, dict[str, Any]] | None = None
