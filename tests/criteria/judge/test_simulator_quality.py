"""`per_turn_user_simulator_quality_v1` with a scripted judge."""

import asyncio
import json

from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.models import ModelRequest, ScriptedModel
from agenteval.runner import CaseRun, score_case
from agenteval.schema import ConversationScenario, EvalCase, EvalStatus
from tests.helpers import inv

SCENARIO = ConversationScenario(starting_prompt="Book a table for two.",
                                conversation_plan="Book a table for two at 7pm, then confirm and stop.",
                                user_persona="NOVICE")


def _judge(fail_if: str = "<never>", stop: str = "valid") -> tuple[JudgeService, ScriptedModel]:
    def reply(req: ModelRequest) -> str:
        question = req.messages[-1].content
        if "ended the conversation here" in question:
            return json.dumps({"verdict": stop, "rationale": "stop check"})
        message = question.split("The simulated user's next message:", 1)[1].split("\n", 1)[0]
        verdict = "invalid" if fail_if in message else "valid"
        return json.dumps({"verdict": verdict, "rationale": "turn check"})

    model = ScriptedModel(reply)
    return JudgeService(lambda name: model), model


def _score(turns: list[str], judge: JudgeService, scenario: ConversationScenario | None = SCENARIO):  # type: ignore[no-untyped-def]
    metric = default_registry().configure("per_turn_user_simulator_quality_v1", {
        "threshold": 0.5, "judge_model_options": {"num_samples": 1}})
    actual = [inv(t, f"agent reply {i}") for i, t in enumerate(turns)]
    case = (EvalCase(eval_id="c", conversation_scenario=scenario) if scenario
            else EvalCase(eval_id="c", conversation=actual))
    return asyncio.run(score_case(CaseRun(case, actual, "s"), [metric], judge=judge))


def _per_turn(result) -> list[float | None]:  # type: ignore[no-untyped-def]
    return [p.eval_metric_results[0].score for p in result.eval_metric_result_per_invocation]


def test_every_turn_follows_the_plan() -> None:
    judge, model = _judge()
    result = _score(["Book a table for two.", "At 7pm please.", "Thanks, confirmed."], judge)
    assert result.overall_eval_metric_results[0].score == 1.0 and _per_turn(result) == [1.0, 1.0, 1.0]
    prompts = [r.messages[-1].content for r in model.requests]
    assert len(prompts) == 3  # turns 2 and 3, and the stop check
    assert "Persona NOVICE" in prompts[0] and "Book a table for two at 7pm" in prompts[0]
    assert '"At 7pm please."' in prompts[0] and "agent reply 0" in prompts[0]
    assert {r.item for r in result.judge_records} == {"turn 2", "turn 3", "stop"}


def test_a_wrong_first_turn_a_bad_turn_and_a_bad_stop() -> None:
    judge, _ = _judge(fail_if="Also my whole life story")
    result = _score(["Hello!", "Also my whole life story", "ok"], judge)
    assert _per_turn(result) == [0.0, 0.0, 1.0]
    judge, _ = _judge(stop="invalid")
    result = _score(["Book a table for two.", "At 7pm please."], judge)
    assert _per_turn(result) == [1.0, 0.0]  # stopping before confirming fails the last turn
    assert result.overall_eval_metric_results[0].score == 0.5


def test_a_static_case_is_an_error_not_a_silent_skip() -> None:
    judge, _ = _judge()
    result = _score(["hi"], judge, scenario=None)
    assert result.overall_eval_metric_results[0].eval_status == EvalStatus.NOT_EVALUATED
    assert "needs a conversation_scenario case" in result.metric_errors[0].message


def test_a_conversation_the_turn_limit_ended_is_not_asked_about_as_if_the_user_stopped() -> None:
    # The stop question said "the simulated user ended the conversation here" when the
    # simulator's turn limit had ended it: a judge told so fails a user that was right to go on.
    from agenteval.runner.scoring import TURN_LIMIT_WARNING

    asked: list[str] = []

    def reply(req: ModelRequest) -> str:
        asked.append(req.messages[-1].content)
        return json.dumps({"verdict": "valid", "rationale": "ok"})

    model = ScriptedModel(reply)
    metric = default_registry().configure("per_turn_user_simulator_quality_v1", {
        "threshold": 0.5, "judge_model_options": {"num_samples": 1}})
    actual = [inv(t, f"agent reply {i}") for i, t in enumerate(["Book a table for two.", "At 7pm?"])]
    run = CaseRun(EvalCase(eval_id="c", conversation_scenario=SCENARIO), actual, "s",
                  warnings=[f"{TURN_LIMIT_WARNING} (max_allowed_invocations: 2) before the simulated "
                            "user said it was done"])
    result = asyncio.run(score_case(run, [metric], judge=JudgeService(lambda name: model)))
    stop = next(r for r in result.judge_records if r.item == "stop")
    assert "ended the conversation here" not in stop.prompt and not any(
        "ended the conversation here" in q for q in asked)
    assert "A limit on the number of turns cut the conversation off here" in stop.prompt
    assert _per_turn(result) == [1.0, 1.0]
