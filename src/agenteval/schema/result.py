"""The result document: one `EvalSetResult` per run, in ADK's EvalSetResult layout.

Fields ADK lacks are extensions on `EvalCaseResult` and `EvalSetResult`, whose ADK models ignore
unknown keys, so ADK tooling can still read the document. ADK's metric-result models
(`EvalMetricResult`, `EvalMetricResultPerInvocation`, the details) forbid unknown keys, so
nothing is added inside them: why a metric scored as it did (`MetricReason`) lives beside them,
in the case result's `reasons`.
"""


from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Literal

from pydantic import ConfigDict, Field

from agenteval.schema.base import WireModel
from agenteval.schema.invocation import Invocation
from agenteval.schema.rubric import RubricScore
from agenteval.schema.run import RunSpec
from agenteval.schema.trace import Trace


class EvalStatus(IntEnum):
    """Outcome of a metric or case; serialised as ADK's integers."""

    PASSED = 1
    FAILED = 2
    NOT_EVALUATED = 3
    INFORMATIONAL = 4

# The members as module names, for code that reads them per case: reading a member off an enum
# class goes through `EnumType.__getattr__`'s slow attribute hook (≈ 0.3 µs a read in CPython
# 3.11, ten times a global's), and scoring and summarising a case read them about forty times.
PASSED, FAILED = EvalStatus.PASSED, EvalStatus.FAILED
NOT_EVALUATED, INFORMATIONAL = EvalStatus.NOT_EVALUATED, EvalStatus.INFORMATIONAL


class TokenUsageDetails(WireModel):
    """Token counts behind `token_usage_v1`; None where no model call reported a count."""

    model_config = ConfigDict(defer_build=True)

    total_tokens: float | None = None
    input_tokens: float | None = None
    prompt_tokens: float | None = None
    cached_tokens: float | None = None
    tool_use_tokens: float | None = None
    output_tokens: float | None = None
    candidates_tokens: float | None = None
    reasoning_tokens: float | None = None


class DurationDetails(WireModel):
    """Seconds behind `invocation_duration_v1`: total = model + tool + framework."""

    model_config = ConfigDict(defer_build=True)

    total_seconds: float | None = None
    model_seconds: float | None = None
    tool_seconds: float | None = None
    framework_seconds: float | None = None


class EvalMetricResultDetails(WireModel):
    """Per-rubric scores and usage breakdowns attached to a metric result."""

    rubric_scores: list[RubricScore] | None = None
    token_usage_details: TokenUsageDetails | None = None
    duration_details: DurationDetails | None = None


class EvalMetric(WireModel):
    """A metric as configured: name, threshold and the full criterion."""

    metric_name: str
    threshold: float | None = None
    criterion: dict[str, Any] | None = None
    custom_function_path: str | None = None


class EvalMetricResult(EvalMetric):
    """A metric's score and status for a case or an invocation."""

    model_config = ConfigDict(defer_build=True)

    score: float | None = None
    eval_status: EvalStatus
    details: EvalMetricResultDetails = Field(default_factory=EvalMetricResultDetails)


class EvalMetricResultPerInvocation(WireModel):
    """Every metric's result for one actual invocation, beside the expected one."""

    model_config = ConfigDict(defer_build=True)

    actual_invocation: Invocation
    expected_invocation: Invocation | None = None
    eval_metric_results: list[EvalMetricResult] = Field(default_factory=list)


class MetricError(WireModel):
    """Why a metric could not be evaluated (agenteval extension: ADK drops the reason)."""

    model_config = ConfigDict(defer_build=True)

    metric_name: str
    message: str
    invocation_index: int | None = None


class MetricReason(WireModel):
    """Why a metric scored as it did, in words made by the criterion where it decided
    (agenteval extension): for an invocation (`invocation_index`, 0-based) or, with
    `invocation_index` None, for the whole case run (the overall result, naming the invocation
    that decided it and the threshold it was held to)."""

    model_config = ConfigDict(defer_build=True)

    metric_name: str
    invocation_index: int | None = None
    reason: str


class AgentVerdict(WireModel):
    """One agent's calls in one invocation, matched on their own by a criterion that matches
    per agent (agenteval extension; `tool_trajectory_avg_score` when the expected events name
    two authors or more): whether they matched and, when not, why."""

    model_config = ConfigDict(defer_build=True)

    metric_name: str
    invocation_index: int
    agent: str
    passed: bool
    reason: str | None = None


class JudgeCertificateNote(WireModel):
    """The calibration certificate that applies to a judged criterion in this run (agenteval
    extension; see `agenteval.criteria.judge.certificates`): `certified` (a certificate binds
    this judge model, prompt and rubric, and meets the floors), `below_floor` (one applies,
    under `min_kappa` / `min_agreement` / `min_labels`) or `uncalibrated` (none applies);
    `advisory`: the criterion did not gate the case (`judge_certificates.require`).
    `text` is what reports show beside the judged score."""

    model_config = ConfigDict(defer_build=True)

    metric_name: str
    status: Literal["certified", "below_floor", "uncalibrated"]
    text: str
    advisory: bool = False
    certificate: str | None = None  # the certificate file's name
    kappa: float | None = None
    agreement: float | None = None
    coverage: float | None = None
    labels: int | None = None


class JudgeRecord(WireModel):
    """One judged question, kept for audit (agenteval extension): the question the judge saw
    (after the system prompt and solved examples of `prompt_version`), each sample's raw reply
    and reading, the voted verdict and its rationale."""

    model_config = ConfigDict(defer_build=True)

    metric_name: str
    invocation_index: int | None = None
    item: str | None = None  # rubric id, sentence number, ...
    judge_model: str
    step: str | None = None  # a preparatory call (no verdict): "requirement"; None for a verdict
    prompt_version: str | None = None  # of the criterion's prompts (system prompt and examples)
    prompt: str
    replies: list[str] = Field(default_factory=list)
    verdicts: list[str | None] = Field(default_factory=list)
    verdict: str | None = None
    score: float | None = None
    rationale: str | None = None
    error: str | None = None
    prompt_tokens: int = 0
    cached: bool = False
    screened: list[str] = Field(default_factory=list)  # judge-directed text cut from the agent's answer
    # Judge-directed text found in the question's other quoted material (the user's turns, tool
    # results, the reference), left in as quoted data (criteria.judge.prompting.injection).
    flagged: list[str] = Field(default_factory=list)
    span_id: str | None = None  # the judge span of this call in the case's trace
    # How sure the judge was of the verdict's side: its probability at the verdict token where
    # the backend gave log-probabilities ("logprobs"), else the share of the samples agreeing
    # with it ("samples"; None with one sample). `label_probs`: each label's probability.
    confidence: float | None = None
    confidence_source: Literal["logprobs", "samples"] | None = None
    label_probs: dict[str, float] | None = None
    uncertain: bool = False  # below the criterion's min_confidence (escalated, or not evaluated)
    escalated: "JudgeRecord | None" = None  # the stronger judge's answer to the same question


class EvalCaseResult(WireModel):
    """A case's final status, per-metric results, and per-invocation results."""

    model_config = ConfigDict(extra="ignore")

    eval_set_file: str | None = None
    eval_set_id: str = ""
    eval_id: str = ""
    final_eval_status: EvalStatus
    eval_metric_results: list[Any] | None = None
    overall_eval_metric_results: list[EvalMetricResult]
    eval_metric_result_per_invocation: list[EvalMetricResultPerInvocation]
    session_id: str
    session_details: dict[str, Any] | None = None
    user_id: str | None = None
    # agenteval extensions
    error_message: str | None = None
    metric_errors: list[MetricError] = Field(default_factory=list)
    # Why each metric scored as it did, overall and per invocation (absent in documents written
    # before reasons were recorded, and for results that carry none: see `reason`).
    reasons: list[MetricReason] = Field(default_factory=list)
    judge_records: list[JudgeRecord] = Field(default_factory=list)
    agent_verdicts: list[AgentVerdict] = Field(default_factory=list)  # per-agent matches, if any
    # The calibration certificate of each judged criterion (or that it has none).
    judge_certificates: list[JudgeCertificateNote] = Field(default_factory=list)
    run_index: int = 0
    warnings: list[str] = Field(default_factory=list)  # e.g. a value of the agent's written as its repr
    trace: Trace | None = None  # the case run's spans (see agenteval.schema.trace)

    def certificate(self, metric_name: str) -> JudgeCertificateNote | None:
        """The certificate note of a judged criterion; None for others (and older documents)."""
        return next((c for c in self.judge_certificates if c.metric_name == metric_name), None)

    def reason(self, metric_name: str, invocation_index: int | None = None) -> str | None:
        """The recorded reason of a metric's overall result (`invocation_index` None) or of its
        result for one invocation; None when none was recorded."""
        for r in self.reasons:
            if r.metric_name == metric_name and r.invocation_index == invocation_index:
                return r.reason
        return None


class MetricSummary(WireModel):
    """A criterion's results over the repeated runs of one case (agenteval extension).

    `mean`/`std` are over runs of the case-level score; `ci_low`/`ci_high` a 95% t-interval of
    the mean; `pass_at_k`/`pass_pow_k` the chance that at least one / all of k runs drawn from
    these would pass (k = number of runs).
    """

    model_config = ConfigDict(defer_build=True)

    metric_name: str
    threshold: float | None = None
    runs: int
    scored_runs: int
    passed_runs: int
    mean: float | None = None
    std: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    pass_at_k: float | None = None
    pass_pow_k: float | None = None
    eval_status: EvalStatus
    # Why the criterion got this verdict over the runs: with one run, that run's overall reason
    # when it did not pass (a passing run's is only in the run's `reasons`); with several, the
    # mean against the threshold under the gating rule and the runs passed. None for
    # informational criteria, and when no run recorded a reason (older documents).
    reason: str | None = None


class CaseSummary(WireModel):
    """A case's verdict over its runs, by the configured gating rule (agenteval extension)."""

    eval_id: str
    runs: int
    final_eval_status: EvalStatus
    metrics: list[MetricSummary] = Field(default_factory=list)


class EvalSetResult(WireModel):
    """All case results of one run over one eval set."""

    model_config = ConfigDict(extra="ignore")

    eval_set_result_id: str
    eval_set_result_name: str | None = None
    eval_set_id: str
    eval_case_results: list[EvalCaseResult] = Field(default_factory=list)
    creation_timestamp: float = 0.0
    # agenteval extensions
    summary: list[CaseSummary] = Field(default_factory=list)
    gating: str = "mean"
    run: RunSpec | None = None  # the header of the run that wrote this document
    metadata: dict[str, Any] = Field(default_factory=dict)


@dataclass
class Run:
    """One run of the runner: its header and one result document per eval set (in selection
    order), each document carrying the same header as `run`."""

    spec: RunSpec
    results: list[EvalSetResult]

    @property
    def run_id(self) -> str:
        return self.spec.run_id
