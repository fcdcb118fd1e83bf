"""The scoring phase: criteria over one case's invocations, assembled into an EvalCaseResult.

Errors are data: a criterion that raises, or returns no score, is recorded with its reason in
`metric_errors`, and by default fails the case (ADK would silently report NOT_EVALUATED and
ignore it). The reasons criteria give with their scores go to the case result's `reasons`: every
gating criterion's overall one, and an invocation's where that invocation did not pass.
What a criterion says (its reasons, errors and rubric rationales) may be any text a plugin
made: a lone surrogate in it is written as U+FFFD (`utf8_text`), noted in the case's warnings,
so that one criterion's text can never fail the writing of the result document.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import copysign
from typing import Any, Literal, NamedTuple

from agenteval.criteria.base import TURN_LIMITED, Criterion, CriterionResult, EvalContext, InvocationScore
from agenteval.criteria.judge.certificates import case_note
from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.criteria.spec import ConfiguredMetric
from agenteval.errors import describe
from agenteval.schema import (
    AgentVerdict,
    EvalCase,
    EvalCaseResult,
    EvalMetricResult,
    EvalMetricResultDetails,
    EvalMetricResultPerInvocation,
    EvalStatus,
    Invocation,
    JudgeCertificateNote,
    JudgeRecord,
    MetricError,
    MetricReason,
)
from agenteval.schema.base import maker, trusted, utf8_text
from agenteval.schema.result import FAILED as _FAILED
from agenteval.schema.result import INFORMATIONAL as _INFORMATIONAL
from agenteval.schema.result import NOT_EVALUATED as _NOT_EVALUATED
from agenteval.schema.result import PASSED as _PASSED
from agenteval.schema.trace import Trace

NotEvaluatedPolicy = Literal["fail", "ignore"]

# (The statuses as module names: `schema.result`'s note.)


# How a case run's `warnings` say that the user simulator's turn limit ended its conversation
# (`runner.inference` writes it; a re-scored document keeps it): criteria read it as
# `EvalContext.extras[TURN_LIMITED]`.
TURN_LIMIT_WARNING = "the conversation reached the user simulator's turn limit"


@dataclass
class CaseRun:
    """What one case produced: its actual invocations, or the error that stopped inference."""

    case: EvalCase
    actual: list[Invocation]
    eval_set_id: str
    session_id: str = ""
    user_id: str | None = None
    run_index: int = 0
    error_message: str | None = None
    session_state: dict[str, Any] | None = None
    session_details: dict[str, Any] | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # values the agent gave that lost information
    trace: Trace | None = None  # what happened inside, when it was recorded


def metric_status(metric: ConfiguredMetric, score: float | None) -> EvalStatus:
    """PASSED when score ≥ threshold; NOT_EVALUATED without a score; INFORMATIONAL if so."""
    if metric.spec.informational:
        return _INFORMATIONAL
    if score is None:
        return _NOT_EVALUATED
    return _PASSED if score >= metric.criterion.threshold else _FAILED


def case_status(statuses: Sequence[EvalStatus], policy: NotEvaluatedPolicy) -> EvalStatus:
    """FAILED if a gating metric failed (or, by default, was not evaluated); else PASSED if any
    passed; else NOT_EVALUATED."""
    if _FAILED in statuses:
        return _FAILED
    if policy == "fail" and _NOT_EVALUATED in statuses:
        return _FAILED
    if _PASSED in statuses:
        return _PASSED
    return _NOT_EVALUATED


async def run_criterion(metric: ConfiguredMetric, ctx: EvalContext) -> CriterionResult:
    """Runs one criterion; an exception becomes a result carrying the error."""
    made = _scored(metric, ctx)
    return await _awaited(made, ctx) if isinstance(made, Criterion) else made


def _scored(metric: ConfiguredMetric, ctx: EvalContext) -> CriterionResult | Criterion:
    """`run_criterion`'s result where the metric's criterion does not wait, without a
    coroutine (scoring a case called six); else the criterion built, for `_awaited`."""
    try:
        criterion = metric.build()
        if criterion.is_async:
            return criterion
        result = criterion.score(ctx)
    except (Exception, SystemExit) as e:  # a criterion's failure is recorded, never fatal to the run
        return CriterionResult(None, [], error=describe(e))
    return _checked(result, len(ctx.actual))


async def _awaited(criterion: Criterion, ctx: EvalContext) -> CriterionResult:
    try:
        result = await criterion.ascore(ctx)
    except (Exception, SystemExit) as e:  # as `_scored`
        return CriterionResult(None, [], error=describe(e))
    return _checked(result, len(ctx.actual))


def _checked(result: CriterionResult, n: int) -> CriterionResult:
    if len(result.per_invocation) != n and result.per_invocation:
        return CriterionResult(None, [], error=(
            f"returned {len(result.per_invocation)} per-invocation results for {n} invocations"))
    return result


class _Plan(NamedTuple):
    """What scoring reads of a metric for every case, read once per metric (`_plan`)."""

    name: str
    wire: dict[str, Any]
    informational: bool  # the spec's: no reason stored, never gating
    requires_expected: bool
    threshold: float
    advisory: JudgeCertificateNote | None  # the certificate note when it makes the metric advisory


# Where `_plan` keeps a metric's plan: a key of its `__dict__`, as `ConfiguredMetric.build`
# keeps its criterion (the metric is frozen, and its configuration is not changed once a run
# has read it: `wire_dict` is computed once too).
_PLAN = "_scoring_plan"


def _plan(metric: ConfiguredMetric) -> _Plan:
    plan: _Plan | None = metric.__dict__.get(_PLAN)
    if plan is None:
        note = metric.certification
        plan = metric.__dict__[_PLAN] = _Plan(
            metric.name, metric.wire_dict, metric.spec.informational, metric.spec.requires_expected,
            metric.criterion.threshold, note if note is not None and note.advisory else None)
    return plan


# Shared by every result without details: they are never mutated, and building one per metric
# per invocation was a measurable share of scoring a large run.
_NO_DETAILS = EvalMetricResultDetails()


# Not validated: the wire values were validated when the config was resolved, and these run
# once per metric per invocation (180,000 times for a 10,000-case run). The dicts below are
# written in the models' field order (`wire_dict` is `EvalMetric`'s dump, the result's first
# fields), which `maker` does not check.
_make_metric_result = maker(EvalMetricResult)
_make_reason = maker(MetricReason)
_make_per_invocation = maker(EvalMetricResultPerInvocation)
_make_case_result = maker(EvalCaseResult)


# Metric results without details, shared by the invocations and cases that score alike (a
# metric's count of calls, a trajectory's 0 or 1): results are never mutated (as `_NO_DETAILS`),
# and building one was a tenth of scoring a case. Keyed by the metric's wire dict, held beside
# the result so that its id is not reused; the score is a positive float or zero (`-0.0` is
# written otherwise, an int in a float field too) or None. Emptied when full.
_SHARED: dict[tuple[int, EvalStatus, float | None], tuple[dict[str, Any], EvalMetricResult]] = {}
_SHARED_MAX = 4096


def _metric_result(wire: dict[str, Any], status: EvalStatus, score: float | None,
                   details: EvalMetricResultDetails | None) -> EvalMetricResult:
    if details is None and (score is None or (score.__class__ is float and score >= 0.0
                                              and copysign(1.0, score) == 1.0)):
        key = (id(wire), status, score)
        hit = _SHARED.get(key)
        if hit is not None and hit[0] is wire:
            return hit[1]
        made = _new_metric_result(wire, status, score, _NO_DETAILS)
        if len(_SHARED) >= _SHARED_MAX:
            _SHARED.clear()
        _SHARED[key] = (wire, made)
        return made
    return _new_metric_result(wire, status, score, details if details is not None else _NO_DETAILS)


def _new_metric_result(wire: dict[str, Any], status: EvalStatus, score: float | None,
                       details: EvalMetricResultDetails) -> EvalMetricResult:
    # The wire dict copied and the three fields set: half the cost of `{**wire, ...}`.
    values = wire.copy()
    values["score"], values["eval_status"], values["details"] = score, status, details
    return _make_metric_result(values)


_EXPLAINED = (_FAILED, _NOT_EVALUATED)


def _said(text: str, where: str, notes: list[str]) -> str:
    """A criterion's `text` as a document can hold it; a replacement is noted in `notes`."""
    safe, replaced = utf8_text(text)
    if replaced:
        notes.append(f"{where}: text with an unpaired surrogate; each written as U+FFFD")
    return safe


def _said_details(details: EvalMetricResultDetails, name: str, index: int | None,
                  notes: list[str]) -> EvalMetricResultDetails:
    """`details` with its rubric ids and rationales (its only text) made writable, in place
    (`index`: the invocation's, None for the overall result's)."""
    if details.rubric_scores:
        where = f"{name}: " + ("details" if index is None else f"invocation {index}'s details")
        for i, rubric in enumerate(details.rubric_scores):
            rubric.rubric_id = _said(rubric.rubric_id, f"{where}.rubric_scores[{i}].rubric_id", notes)
            if rubric.rationale is not None:
                rubric.rationale = _said(rubric.rationale, f"{where}.rubric_scores[{i}].rationale", notes)
    return details


def _reason(metric_name: str, index: int | None, reason: str) -> MetricReason:
    # Not validated: built from a criterion's strings, once per metric per invocation.
    return _make_reason({"metric_name": metric_name, "invocation_index": index, "reason": reason})


def _no_score(expected: Sequence[Invocation] | None, turns: int) -> str:
    """Why a criterion gave no score and said nothing (a NOT_EVALUATED is never silent)."""
    if expected is not None and not expected:
        return "the case has no turns: its conversation is empty"
    if not turns:
        return "the run has no turns"
    return "the criterion produced no score"


def _verdicts(metric_name: str, index: int, agents: dict[str, str | None]) -> list[AgentVerdict]:
    return [trusted(AgentVerdict, {
        "metric_name": metric_name, "invocation_index": index, "agent": agent,
        "passed": miss is None, "reason": miss}) for agent, miss in agents.items()]


async def score_case(run: CaseRun, metrics: Sequence[ConfiguredMetric],
                     policy: NotEvaluatedPolicy = "fail",
                     judge: JudgeService | None = None) -> EvalCaseResult:
    """Scores one case run with every configured metric."""
    expected = run.case.conversation
    n = len(run.actual)
    overall: list[EvalMetricResult] = []
    per_inv: list[list[EvalMetricResult]] = [[] for _ in range(n)]
    errors: list[MetricError] = []
    statuses: list[EvalStatus] = []
    records: list[JudgeRecord] = []
    reasons: list[MetricReason] = []
    notes: list[str] = []  # what was made writable of what criteria said
    agent_verdicts: list[AgentVerdict] = []
    certificates = [m.certification for m in metrics if m.certification is not None]
    if run.error_message is None:
        # Positionally, in field order (keyword arguments to a dataclass's `__init__` cost more).
        extras = run.extras
        if any(w.startswith(TURN_LIMIT_WARNING) for w in run.warnings):  # (kept by a re-score too)
            extras = {**extras, TURN_LIMITED: True}
        ctx = EvalContext(run.actual, expected, run.case.conversation_scenario, run.session_state,
                          run.case.rubrics or (), judge, extras, run.trace)
        for metric in metrics:
            name, wire, informational, requires_expected, threshold, note = _plan(metric)
            if requires_expected and expected is None:
                result = CriterionResult(None, [], error="needs expected invocations, but the case "
                                         "is a conversation_scenario")
            elif isinstance(made := _scored(metric, ctx), Criterion):
                result = await _awaited(made, ctx)
            else:
                result = made
            if result.records:
                records += result.records
            score = result.score
            status = result.status or (_INFORMATIONAL if informational else
                                       _NOT_EVALUATED if score is None else
                                       _PASSED if score >= threshold else _FAILED)  # `metric_status`
            if result.error or status == _NOT_EVALUATED:
                errors.append(MetricError(metric_name=name, message=(
                    _said(result.error, f"{name}: error", notes) if result.error
                    else _no_score(expected, n))))
            scores = result.per_invocation or [InvocationScore(None) for _ in range(n)]
            if metric.rubric_certifications:
                # A certificate naming its rubrics applies to a case judged on those alone; the
                # case's own rubrics are known only here.
                mine = case_note(metric, ctx)
                certificates = [k for c in certificates
                                if (k := mine if c.metric_name == name else c) is not None]
                note = mine if mine is not None and mine.advisory else None
            if informational and note is None:
                # Never gating, never explained (an informational metric's reason restates its
                # value: not stored, which keeps a large run's document a third smaller in
                # reasons; a criterion may make it when it is read, so it is not read).
                overall.append(_metric_result(wire, status, score, d if (d := result.details) is None
                                              else _said_details(d, name, None, notes)))
                for i, inv_score in enumerate(scores):
                    if inv_score.error:
                        errors.append(MetricError(metric_name=name, invocation_index=i, message=_said(
                            inv_score.error, f"{name}: invocation {i}'s error", notes)))
                    per_inv[i].append(_metric_result(wire, _INFORMATIONAL, inv_score.score,
                                                     d if (d := inv_score.details) is None
                                                     else _said_details(d, name, i, notes)))
                    if inv_score.agents is not None:
                        agent_verdicts += _verdicts(name, i, inv_score.agents)
                continue
            # A judge without a good enough certificate, where one is required, does not gate:
            # scored and explained as usual, reported as informational with the reason why.
            advisory = note is not None
            if note is not None:
                result.reason = (f"advisory, not gating ({note.text})"
                                 + (f": {result.reason}" if result.reason else ""))
            overall.append(_metric_result(wire, _INFORMATIONAL if advisory else status, score,
                                          d if (d := result.details) is None
                                          else _said_details(d, name, None, notes)))
            if not advisory:
                statuses.append(status)
            # A reason is read only where it is stored: a criterion may make it when it is read.
            if not informational and (why := result.reason) is not None:
                reasons.append(_reason(name, None, _said(why, f"{name}: reason", notes)))
            for i, inv_score in enumerate(scores):
                if inv_score.error:
                    errors.append(MetricError(metric_name=name, invocation_index=i, message=_said(
                        inv_score.error, f"{name}: invocation {i}'s error", notes)))
                score = inv_score.score
                # As `metric_status`, with the metric's constants read once.
                inv_status = (_INFORMATIONAL if informational or advisory else
                              _NOT_EVALUATED if score is None else
                              _PASSED if score >= threshold else _FAILED)
                per_inv[i].append(_metric_result(wire, inv_status, score, d if (d := inv_score.details)
                                                 is None else _said_details(d, name, i, notes)))
                # An invocation's reason is kept where it did not pass (a passing one's adds
                # little to its score, and a large run has hundreds of thousands of them).
                explained = inv_status in _EXPLAINED or (advisory and (score is None or score < threshold))
                if explained and (why := inv_score.reason) is not None:
                    reasons.append(_reason(name, i, _said(why, f"{name}: invocation {i}'s reason", notes)))
                if inv_score.agents is not None:
                    agent_verdicts += _verdicts(name, i, inv_score.agents)
        final = case_status(statuses, policy)
    else:
        final = _FAILED
    per_invocation = [
        _make_per_invocation({
            "actual_invocation": inv,
            "expected_invocation": (expected[i] if expected is not None and i < len(expected)
                                    else None),
            "eval_metric_results": per_inv[i],
        })
        for i, inv in enumerate(run.actual)
    ]
    if (not records and run.trace is None and run.session_details is None and not run.warnings
            and not notes and run.user_id is None and run.error_message is None
            and run.case.eval_id.__class__ is str
            and run.eval_set_id.__class__ is str and run.session_id.__class__ is str
            and run.run_index.__class__ is int):
        # A recorded run's result (`score`), every value of its declared type: made without
        # validation, which was a twelfth of scoring a case with the default criteria. Every
        # field is set, so the result's fields-set differs from a validated one's (nothing
        # reads it: results are never dumped with `exclude_unset`).
        return _make_case_result({
            "eval_set_file": run.eval_set_id, "eval_set_id": run.eval_set_id,
            "eval_id": run.case.eval_id, "final_eval_status": final, "eval_metric_results": None,
            "overall_eval_metric_results": overall,
            "eval_metric_result_per_invocation": per_invocation, "session_id": run.session_id,
            "session_details": None, "user_id": None, "error_message": None,
            "metric_errors": errors, "reasons": reasons, "judge_records": records,
            "agent_verdicts": agent_verdicts, "judge_certificates": certificates,
            "run_index": run.run_index, "warnings": [], "trace": None,
        })
    return EvalCaseResult(
        eval_set_file=run.eval_set_id,
        eval_set_id=run.eval_set_id,
        eval_id=run.case.eval_id,
        final_eval_status=final,
        overall_eval_metric_results=overall,
        eval_metric_result_per_invocation=per_invocation,
        session_id=run.session_id,
        session_details=run.session_details,
        user_id=run.user_id,
        error_message=run.error_message,
        metric_errors=errors,
        reasons=reasons,
        judge_records=records,
        agent_verdicts=agent_verdicts,
        judge_certificates=certificates,
        run_index=run.run_index,
        warnings=run.warnings + notes if notes else run.warnings,
        trace=run.trace,
    )
