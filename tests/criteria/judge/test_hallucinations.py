"""`hallucinations_v1` combines its sentence verdicts as ADK 2.13.0 does: per text (step), the
share supported; per invocation, the mean over its steps; overall, the mean over invocations,
both with `statistics.mean` (exactly rounded), so scores and edge-threshold verdicts are ADK's."""

import asyncio
import json
import statistics

from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.models import ModelRequest, ScriptedModel
from agenteval.runner import CaseRun, score_case
from agenteval.schema import (
    Content,
    EvalCase,
    EvalStatus,
    Invocation,
    InvocationEvent,
    InvocationEvents,
    Part,
)
from tests.helpers import inv


def _script(req: ModelRequest) -> str:
    """Sentences containing "yes" are supported (and confirmed by the cross-check)."""
    prompt = req.messages[-1].content
    if "sentence_says" in prompt:
        return json.dumps({"sentence_says": "x", "context_says": "x", "verdict": "same"})
    sentence = prompt.split("Sentence written by the agent:")[1].splitlines()[0]
    return json.dumps({"rationale": "r", "verdict": "supported" if "yes" in sentence else "unsupported"})


def _score(actual: list[Invocation], threshold: float, intermediate: bool = False):  # type: ignore[no-untyped-def]
    model = ScriptedModel(_script)
    metric = default_registry().configure("hallucinations_v1", {
        "threshold": threshold, "evaluate_intermediate_nl_responses": intermediate,
        "judge_model_options": {"num_samples": 1}})
    run = CaseRun(EvalCase(eval_id="c", conversation=actual), actual, "s")
    result = asyncio.run(score_case(run, [metric], judge=JudgeService(lambda name: model, None)))
    overall = result.overall_eval_metric_results[0]
    per = [p.eval_metric_results[0].score for p in result.eval_metric_result_per_invocation]
    return overall.score, overall.eval_status, per


def _sentences(supported: int, total: int) -> str:
    return " ".join(f"Fact {'yes' if k < supported else 'no'} {k}." for k in range(total))


def test_overall_is_the_exactly_rounded_mean_of_the_invocations() -> None:
    # Invocation scores 0, 1/7 and 1/6: a left-to-right sum divided by 3 gives
    # 0.10317460317460318, ADK's statistics.mean 0.10317460317460317.
    actual = [inv("q", _sentences(0, 1)), inv("q", _sentences(1, 7)), inv("q", _sentences(1, 6))]
    want = statistics.mean([0.0, 1 / 7, 1 / 6])
    assert want == 0.10317460317460317
    score, status, per = _score(actual, threshold=want)
    assert per == [0.0, 1 / 7, 1 / 6]
    assert score == want and status == EvalStatus.PASSED


def test_intermediate_texts_are_steps_averaged_with_the_final_response() -> None:
    # One intermediate text (1 of 1 sentence supported) and the final response (1 of 3):
    # ADK scores each text on its own and averages the steps, (1 + 1/3) / 2; pooling the
    # sentences would give 2/4.
    turn = inv("q", _sentences(1, 3))
    turn.intermediate_data = InvocationEvents(invocation_events=[InvocationEvent(
        author="agent", content=Content(role="model", parts=[Part(text="Fact yes first.")]))])
    score, status, per = _score([turn], threshold=0.6, intermediate=True)
    assert per == [statistics.mean([1.0, 1 / 3])] and score == per[0]
    assert status == EvalStatus.PASSED
    # Each text part of an event is its own step, as in ADK.
    turn.intermediate_data = InvocationEvents(invocation_events=[InvocationEvent(
        author="agent", content=Content(role="model", parts=[
            Part(text="Fact yes a."), Part(text="Fact no b.")]))])
    _, _, per = _score([turn], threshold=0.6, intermediate=True)
    assert per == [statistics.mean([1.0, 0.0, 1 / 3])]
