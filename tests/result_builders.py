"""Builders for hand-made result documents used by the reporting, store and history tests."""

from __future__ import annotations

from collections.abc import Sequence

from agenteval.schema import (
    Content,
    EvalCaseResult,
    EvalMetricResult,
    EvalMetricResultPerInvocation,
    EvalSetResult,
    EvalStatus,
    FunctionCall,
    IntermediateData,
    Invocation,
    InvocationEvent,
    InvocationEvents,
    JudgeRecord,
    MetricError,
    Part,
    UsageMetadata,
)
from agenteval.verdicts.aggregate import summarise

THRESHOLD = 0.5


def metric(name: str, score: float | None, threshold: float = THRESHOLD) -> EvalMetricResult:
    status = (EvalStatus.NOT_EVALUATED if score is None
              else EvalStatus.PASSED if score >= threshold else EvalStatus.FAILED)
    return EvalMetricResult(metric_name=name, threshold=threshold, score=score, eval_status=status)


def invocation(prompt: str = "hi", response: str = "ok", calls: Sequence[FunctionCall] = (),
               duration: float | None = None, tokens: int | None = None) -> Invocation:
    data: IntermediateData | InvocationEvents = IntermediateData(tool_uses=list(calls))
    if tokens is not None:
        data = InvocationEvents(invocation_events=[InvocationEvent(
            author="agent", content=Content(role="model", parts=[Part(function_call=c) for c in calls]),
            usage_metadata=UsageMetadata(prompt_token_count=tokens - 1, candidates_token_count=1))])
    return Invocation(user_content=Content.from_text(prompt, role="user"),
                      final_response=Content.from_text(response), intermediate_data=data,
                      duration=duration)


def case(eval_id: str, scores: dict[str, float | None], *, run_index: int = 0, response: str = "ok",
         expected_response: str = "ok", calls: Sequence[FunctionCall] = (),
         expected_calls: Sequence[FunctionCall] = (), error: str | None = None,
         metric_errors: Sequence[MetricError] = (), judge_records: Sequence[JudgeRecord] = (),
         duration: float | None = None, tokens: int | None = None) -> EvalCaseResult:
    """One case run with one invocation; its status follows from the scores (or the error)."""
    metrics = [] if error else [metric(n, s) for n, s in scores.items()]
    statuses = [m.eval_status for m in metrics]
    failed = error or EvalStatus.FAILED in statuses or EvalStatus.NOT_EVALUATED in statuses
    per = [] if error else [EvalMetricResultPerInvocation(
        actual_invocation=invocation("prompt " + eval_id, response, calls, duration, tokens),
        expected_invocation=invocation("prompt " + eval_id, expected_response, expected_calls),
        eval_metric_results=metrics)]
    return EvalCaseResult(eval_set_id="s", eval_id=eval_id, run_index=run_index, session_id="sess",
                          final_eval_status=EvalStatus.FAILED if failed else EvalStatus.PASSED,
                          overall_eval_metric_results=metrics, eval_metric_result_per_invocation=per,
                          error_message=error, metric_errors=list(metric_errors),
                          judge_records=list(judge_records))


def result(cases: Sequence[EvalCaseResult], result_id: str = "s_1", set_id: str = "s",
           created: float = 1_700_000_000.0, gating: str = "mean",
           ignore_not_evaluated: bool = False) -> EvalSetResult:
    """A result document with its summaries filled in."""
    doc = EvalSetResult(eval_set_result_id=result_id, eval_set_id=set_id,
                        eval_case_results=list(cases), creation_timestamp=created)
    return summarise(doc, gating, ignore_not_evaluated)


def judge(metric_name: str, score: float | None, rationale: str, item: str | None = None,
          verdict: str | None = None, error: str | None = None) -> JudgeRecord:
    return JudgeRecord(metric_name=metric_name, invocation_index=0, item=item, judge_model="scripted:j",
                       prompt="judge prompt", replies=['{"verdict": "x"}'], verdict=verdict,
                       score=score, rationale=rationale, error=error, prompt_tokens=7)
