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

Format: a line of JSON, the run's turns as `[seconds, agent tokens]` (each turn's
`Invocation.duration` and `invocation_tokens`, turns with neither left out), a newline, and the
compact JSON of the result without what is left out.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

from agenteval.schema import EvalCaseResult, EvalMetricResult, EvalMetricResultPerInvocation, JudgeRecord
from agenteval.schema.base import trusted
from agenteval.schema.result import EvalMetricResultDetails
from agenteval.verdicts.outcome import invocation_tokens

_NO_DETAILS = EvalMetricResultDetails()


def _metric(m: EvalMetricResult) -> EvalMetricResult:
    return trusted(EvalMetricResult, {**m.__dict__, "criterion": None, "details": _NO_DETAILS})


def _record(r: JudgeRecord) -> JudgeRecord:
    return trusted(JudgeRecord, {**r.__dict__, "prompt": "", "replies": [], "verdicts": [], "screened": [],
                                 "flagged": [], "label_probs": None, "span_id": None,
                                 "escalated": None if r.escalated is None else _record(r.escalated)})


def digest_json(result: EvalCaseResult) -> str:
    """The digest of a case run (see the module docstring)."""
    turns: list[list[float | None]] = []
    for per in result.eval_metric_result_per_invocation:
        tokens = invocation_tokens(per.actual_invocation)
        if per.actual_invocation.duration is not None or tokens is not None:
            turns.append([per.actual_invocation.duration, tokens])
    skeleton = trusted(EvalCaseResult, {
        **result.__dict__, "eval_metric_results": None, "session_details": None, "trace": None,
        "overall_eval_metric_results": [_metric(m) for m in result.overall_eval_metric_results],
        "eval_metric_result_per_invocation": [], "agent_verdicts": [],
        "reasons": [r for r in result.reasons if r.invocation_index is None],
        "judge_records": [_record(r) for r in result.judge_records]})
    # Compact (no raw newline), defaults left out (validation puts them back).
    body: bytes = skeleton.__pydantic_serializer__.to_json(skeleton, exclude_defaults=True)
    return json.dumps(turns, separators=(",", ":")) + "\n" + body.decode()


_TURNS = TypeAdapter(list[EvalMetricResultPerInvocation])


def _turn(seconds: float | None, tokens: float | None) -> dict[str, Any]:
    """A turn that gives `seconds` and `tokens` as `CaseOutcome.duration` / `tokens` read them."""
    events = [] if tokens is None else [{"author": "", "usage_metadata": {"prompt_token_count": int(tokens)}}]
    return {"actual_invocation": {"user_content": {}, "duration": seconds,
                                  "intermediate_data": {"invocation_events": events}}}


def from_digest(digest: str) -> EvalCaseResult:
    """The case run a digest holds (see the module docstring): validated as a result is."""
    head, _, body = digest.partition("\n")
    result = EvalCaseResult.model_validate_json(body)
    if turns := json.loads(head):
        # (Validated, not `model_construct`ed: that resolves every default factory's signature,
        # a millisecond a turn.)
        result.eval_metric_result_per_invocation = _TURNS.validate_python([_turn(s, t) for s, t in turns])
    return result


__all__ = ["digest_json", "from_digest"]
