"""A case's figures over its runs: `runs_duration` and `runs_tokens`, which a `score` worker
calls without an outcome, are `CaseOutcome.duration` and `.tokens`."""

from __future__ import annotations

from agenteval.schema import EvalCaseResult, EvalStatus, Invocation
from agenteval.verdicts.aggregate import summarise_case
from agenteval.verdicts.outcome import CaseOutcome, invocation_tokens, runs_duration, runs_tokens


def _inv(duration: float | None, usage: dict[str, int] | None) -> Invocation:
    return Invocation.model_validate({
        "user_content": {"role": "user", "parts": [{"text": "q"}]}, "duration": duration,
        "intermediate_data": {"invocation_events": [{"author": "a", "usage_metadata": usage}]}})


def _run(index: int, *invocations: Invocation) -> EvalCaseResult:
    return EvalCaseResult.model_validate({
        "eval_set_id": "s", "eval_id": "c", "run_index": index, "session_id": "x",
        "final_eval_status": EvalStatus.PASSED, "overall_eval_metric_results": [],
        "eval_metric_result_per_invocation": [{"actual_invocation": i} for i in invocations]})


def test_a_cases_seconds_and_tokens_are_summed_over_its_runs_timed_invocations() -> None:
    runs = [_run(0, _inv(1.5, {"prompt_token_count": 3, "candidates_token_count": 4}), _inv(None, None)),
            _run(1, _inv(0.25, {"thoughts_token_count": 2}))]
    outcome = CaseOutcome("s", "mean", summarise_case("c", runs, "mean", False), runs)
    assert runs_duration(runs) == outcome.duration() == 1.75
    assert runs_tokens(runs) == outcome.tokens() == 9.0
    assert invocation_tokens(runs[0].eval_metric_result_per_invocation[1].actual_invocation) is None
    untimed = [_run(0, _inv(None, None))]
    assert runs_duration(untimed) is None and runs_tokens(untimed) is None
