"""A case run's digest: what a resumed run needs of a kept case run besides its document bytes.

A resumed run copies each kept case run into its streamed document as the journal row holds it
(`store.output.remember_json`); everything else the run does with a case run reads a small part
of it: the case summary (the overall metric results, their overall reasons, the agent error),
the totals and the history's rows (durations and agent tokens per turn, metric errors, judge
models, prompt tokens and uncertain or escalated verdicts), the console table and the JUnit and
Markdown reports (those, certificates, judge verdicts and rationales). The journal keeps that
part beside each row (`digest_json`), so a resumed run rebuilds it (`from_digest`) in
microseconds instead of parsing kilobytes of result.

What a digest leaves out (the turns' content and events, the expected turns, per-invocation
metric results and reasons, the trace, session details, per-agent verdicts, each criterion's
configuration and details, the judges' prompts, replies, samples and screened text) is only in
the document; a digest rebuilt is thus a result whose sinks give what the full result gives
(`tests/store/test_digest.py` checks each), not a result to write anywhere.

Format: a JSON array of `VERSION`, the run's turns as `[seconds, agent tokens]` (each turn's
`Invocation.duration` and `invocation_tokens`, turns with neither left out); its eval set file,
eval set id, eval id, session id, user id, run index and warnings; its status; its agent error;
its overall metric results as `[name, threshold, score, status]`; its metric errors as `[name,
message, invocation index]`; its overall reasons as `[name, reason]`; its judge records (their
fields the reports read, escalations nested) and its judge certificates, as objects.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from agenteval.schema import (
    Content,
    EvalCaseResult,
    EvalMetricResult,
    EvalMetricResultPerInvocation,
    EvalStatus,
    Invocation,
    JudgeCertificateNote,
    JudgeRecord,
    MetricError,
)
from agenteval.schema.base import trusted
from agenteval.schema.invocation import InvocationEvent, InvocationEvents
from agenteval.schema.result import EvalMetricResultDetails, MetricReason
from agenteval.verdicts.outcome import invocation_tokens

VERSION = 1
"""The digest format's version, its first item: another version is not read (`from_digest`
raises ValueError, and the journal row is parsed whole instead)."""
_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode  # (`json.dumps`
# with separators builds an encoder each call)
_NO_DETAILS = EvalMetricResultDetails()
_NO_CONTENT = Content()
# What a judge record keeps in a digest: what the reports, the totals and the history read.
_RECORD_KEEP = ("metric_name", "invocation_index", "item", "judge_model", "step", "prompt_version",
                "verdict", "score", "rationale", "error", "prompt_tokens", "cached", "confidence",
                "confidence_source", "uncertain")


def _record(r: JudgeRecord) -> dict[str, Any]:
    kept = {k: getattr(r, k) for k in _RECORD_KEEP}
    kept["prompt"] = ""  # (a required field)
    if r.escalated is not None:
        kept["escalated"] = _record(r.escalated)
    return kept


def digest_json(result: EvalCaseResult) -> str:
    """The digest of a case run (see the module docstring). Made from the result's fields with
    `json.dumps`: serialising a trimmed copy of the result through pydantic cost more than the
    result's own JSON, on every case run of every journaled run."""
    turns: list[list[float | None]] = []
    for per in result.eval_metric_result_per_invocation:
        tokens = invocation_tokens(per.actual_invocation)
        if per.actual_invocation.duration is not None or tokens is not None:
            turns.append([per.actual_invocation.duration, tokens])
    r = result
    return _encode([
        VERSION, turns,
        [r.eval_set_file, r.eval_set_id, r.eval_id, r.session_id, r.user_id, r.run_index, r.warnings],
        int(r.final_eval_status), r.error_message,
        [[m.metric_name, m.threshold, m.score, int(m.eval_status)] for m in r.overall_eval_metric_results],
        [[e.metric_name, e.message, e.invocation_index] for e in r.metric_errors],
        [[x.metric_name, x.reason] for x in r.reasons if x.invocation_index is None],
        [_record(j) for j in r.judge_records],
        [c.model_dump(mode="json") for c in r.judge_certificates]])


@lru_cache(maxsize=1024)
def _usage(tokens: int) -> InvocationEvents:
    """Events whose usage counts `tokens` (shared: nobody changes a digest's turns)."""
    return InvocationEvents.model_validate({"invocation_events": [
        InvocationEvent.model_validate({"author": "", "usage_metadata": {"prompt_token_count": tokens}})]})


_NO_EVENTS = InvocationEvents()


def _turn(seconds: float | None, tokens: float | None) -> EvalMetricResultPerInvocation:
    """A turn that gives `seconds` and `tokens` as `CaseOutcome.duration` / `tokens` read them."""
    invocation = trusted(Invocation, {
        "invocation_id": "", "user_content": _NO_CONTENT, "final_response": None,
        "intermediate_data": _NO_EVENTS if tokens is None else _usage(int(tokens)),
        "creation_timestamp": 0.0, "duration": seconds, "model_duration": None, "tool_duration": None,
        "rubrics": None, "app_details": None})
    return trusted(EvalMetricResultPerInvocation, {"actual_invocation": invocation,
                                                   "expected_invocation": None, "eval_metric_results": []})


def from_digest(digest: str) -> EvalCaseResult:
    """The case run a digest holds (see the module docstring). Built without validation from
    what `digest_json` wrote (a field added to the result schema makes this fail loudly, in
    `trusted`, rather than go missing); ValueError for a digest of another format."""
    items = json.loads(digest)
    if not isinstance(items, list) or len(items) != 10 or items[0] != VERSION:
        raise ValueError("not a digest of this version")
    _, turns, head, status, error, metrics, errors, reasons, records, certificates = items
    set_file, set_id, eval_id, session_id, user_id, run_index, warnings = head
    return trusted(EvalCaseResult, {
        "eval_set_file": set_file, "eval_set_id": set_id, "eval_id": eval_id,
        "final_eval_status": EvalStatus(status), "eval_metric_results": None,
        "overall_eval_metric_results": [trusted(EvalMetricResult, {
            "metric_name": name, "threshold": threshold, "criterion": None, "custom_function_path": None,
            "score": score, "eval_status": EvalStatus(st), "details": _NO_DETAILS})
            for name, threshold, score, st in metrics],
        "eval_metric_result_per_invocation": [_turn(s, t) for s, t in turns],
        "session_id": session_id, "session_details": None, "user_id": user_id, "error_message": error,
        "metric_errors": [trusted(MetricError, {"metric_name": n, "message": m, "invocation_index": i})
                          for n, m, i in errors],
        "reasons": [trusted(MetricReason, {"metric_name": n, "invocation_index": None, "reason": why})
                    for n, why in reasons],
        "judge_records": [JudgeRecord.model_validate(j) for j in records], "agent_verdicts": [],
        "judge_certificates": [JudgeCertificateNote.model_validate(c) for c in certificates],
        "run_index": run_index, "warnings": warnings, "trace": None})


__all__ = ["VERSION", "digest_json", "from_digest"]
