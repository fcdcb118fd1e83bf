"""A judge that knows when it is unsure: confidence per verdict, abstention, escalation."""

import asyncio
import json

from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.models import ScriptedModel
from agenteval.runner import CaseRun, score_case
from agenteval.schema import EvalCase, EvalStatus
from tests.helpers import inv


def _score(options: dict[str, object], weak: ScriptedModel,  # type: ignore[no-untyped-def]
           strong: ScriptedModel | None = None):
    models = {"weak": weak, **({"strong": strong} if strong else {})}
    judge = JudgeService(lambda name: models[name])
    metric = default_registry().configure("final_response_match_v2", {
        "threshold": 0.5, "judge_model_options": {"judge_model": "weak", "num_samples": 5, **options}})
    run = CaseRun(EvalCase(eval_id="c", conversation=[inv("capital?", "Paris")]),
                  [inv("capital?", "Paris.")], "s")
    return asyncio.run(score_case(run, [metric], judge=judge))


def _model(labels: tuple[str, ...]) -> ScriptedModel:
    """A judge whose samples answer `labels` in order (one sample each)."""
    return ScriptedModel([json.dumps({"rationale": f"sample {i}", "verdict": v})
                          for i, v in enumerate(labels)])


def test_every_verdict_carries_its_confidence() -> None:
    # The first three samples disagree, so all five are drawn (no early stop).
    result = _score({}, _model(("valid", "valid", "invalid", "valid", "valid")))
    (record,) = result.judge_records
    assert record.verdict == "valid" and record.confidence == 0.8 and not record.uncertain


def test_an_uncertain_verdict_is_never_a_pass() -> None:
    result = _score({"min_confidence": 0.8}, _model(("valid", "valid", "valid", "invalid", "invalid")))
    (record,) = result.judge_records
    assert record.uncertain and record.confidence == 0.6 and record.score is None
    (metric,) = [m for m in result.overall_eval_metric_results if m.metric_name == "final_response_match_v2"]
    assert metric.eval_status == EvalStatus.NOT_EVALUATED and result.final_eval_status == EvalStatus.FAILED
    (error,) = [e for e in result.metric_errors if e.metric_name == "final_response_match_v2"]
    assert "judge uncertain: valid with confidence 0.60, below min_confidence 0.8" in error.message
    assert error.message.startswith("judge uncertain on 1 of 1 question(s)"), error.message  # (not "error")


def test_uncertain_items_and_only_those_are_escalated() -> None:
    weak = _model(("valid", "invalid", "valid", "invalid", "valid"))
    strong = _model(("invalid",) * 5)
    result = _score({"min_confidence": 0.8, "escalate_to": "strong"}, weak, strong)
    (record,) = result.judge_records
    assert record.uncertain and record.escalated is not None
    assert record.escalated.judge_model == "strong" and record.escalated.verdict == "invalid"
    assert record.verdicts == ["valid", "invalid", "valid", "invalid", "valid"]  # the weak judge's, kept
    # One question for the strong judge: its first sample (asked with log-probabilities, which a
    # scripted model does not give), then the other four in one request.
    assert record.score == 0.0 and [r.n for r in strong.requests] == [1, 4]
    unused = _model(("invalid",))
    confident = _score({"min_confidence": 0.8, "escalate_to": "strong"}, _model(("valid",) * 5), unused)
    assert confident.judge_records[0].escalated is None and unused.requests == []
    assert confident.judge_records[0].confidence == 1.0
