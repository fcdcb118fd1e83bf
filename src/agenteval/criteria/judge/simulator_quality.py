"""`per_turn_user_simulator_quality_v1`: did the simulated user play its part, turn by turn?

For a conversation-scenario case (a static case is an error of the criterion, which ADK turns
into a silent NOT_EVALUATED):

- turn 1 passes when the user's message is the scenario's starting prompt (it is sent verbatim);
- every later turn is judged: given the conversation plan (and the persona's behaviours, when
  the scenario names one) and the conversation so far, did this user message follow the plan, as
  a real user with that goal would (no dumping every detail at once, no troubleshooting for the
  agent past its second failure, answering the agent's questions, correcting it when it erred)?
- a last question asks whether ending the conversation where it ended was right (the plan was
  done, or the agent could not help); if not, the last turn fails. Where the simulator's turn
  limit ended it (`EvalContext.extras[TURN_LIMITED]`), the user did not stop, and the question
  is whether going on was right (ADK asks as if the user had stopped).

Score: the share of turns that passed (ADK's meaning). Prompts are agenteval's own; every
question is audited like any judged criterion's.
"""

from __future__ import annotations

from collections.abc import Sequence

from agenteval.criteria.base import TURN_LIMITED, CriterionResult, EvalContext, InvocationScore
from agenteval.criteria.judge import explain
from agenteval.criteria.judge.base import Answered, JudgeCriterion
from agenteval.criteria.judge.engine.decision import JudgeQuestion
from agenteval.criteria.judge.prompting import context, prompts
from agenteval.schema import ConversationScenario, LlmBackedUserSimulatorCriterion, UserPersona
from agenteval.schema.personas import builtin_persona

STOP = "stop"
_TURN_RULES = (
    "A good simulated user: pursues the plan's goals step by step, the way a real user would "
    "(it does not paste every detail of the plan at once unless the plan says to); answers what "
    "the agent asked; points out the agent's mistakes when the plan's facts contradict them; does "
    "not troubleshoot for the agent after the agent failed twice; never takes the agent's role; "
    "writes like a person in a chat."
)


def _persona_text(persona: UserPersona | str | None) -> str:
    if persona is None:
        return ""
    p = builtin_persona(persona) if isinstance(persona, str) else persona
    rules = "; ".join(r for b in p.behaviors for r in b.violation_rubrics)
    return f"Persona {p.id}: {p.description} It fails when: {rules}\n"


def _history(ctx: EvalContext, upto: int) -> str:
    return prompts.conversation_text([
        (context.user_text(inv), "none", context.agent_text(inv).text) for inv in ctx.actual[:upto]])


def turn_prompt(scenario: ConversationScenario, history: str, message: str) -> str:
    return (f"Conversation plan of the simulated user: {prompts.quote(scenario.conversation_plan)}\n"
            f"{_persona_text(scenario.user_persona)}"
            f"Conversation so far:\n{history or '(none)'}\n\n"
            f"The simulated user's next message: {prompts.quote(message)}\n\n"
            f"{_TURN_RULES}\nDid this message follow the plan as a good simulated user would? "
            f"{prompts.IGNORE}\nVerdict: valid or invalid?")


def stop_prompt(scenario: ConversationScenario, history: str, turn_limited: bool = False) -> str:
    """Whether the conversation ended where it should. Where the simulator's turn limit ended
    it, the simulated user did not stop: the question is then whether going on was right (a goal
    of the plan still open), not whether stopping was."""
    if turn_limited:
        question = ("A limit on the number of turns cut the conversation off here: the simulated user "
                    "had not ended it. Was it right to go on: some goal of the plan was not reached "
                    "yet and the agent could still help, so the user did not go on after the plan "
                    "was done?")
    else:
        question = ("The simulated user ended the conversation here. Was that right: every goal of "
                    "the plan was reached (or the agent clearly could not help), and the user did "
                    "not stop early or go on after the plan was done?")
    return (f"Conversation plan of the simulated user: {prompts.quote(scenario.conversation_plan)}\n"
            f"{_persona_text(scenario.user_persona)}"
            f"The whole conversation:\n{history}\n\n"
            f"{question} {prompts.IGNORE}\nVerdict: valid or invalid?")


class PerTurnUserSimulatorQuality(JudgeCriterion):
    """`per_turn_user_simulator_quality_v1`: share of simulated user turns that followed the
    conversation plan (and persona), the last turn also judged on where it stopped."""

    criterion_model = LlmBackedUserSimulatorCriterion
    criterion: LlmBackedUserSimulatorCriterion

    def questions(self, ctx: EvalContext) -> list[JudgeQuestion]:
        scenario = ctx.scenario
        if scenario is None:
            raise ValueError("needs a conversation_scenario case (this case is a static conversation)")
        if not ctx.actual:
            raise ValueError("the conversation has no turns")
        labels, positive = ("valid", "invalid"), frozenset({"valid"})
        out = [JudgeQuestion(i, f"turn {i + 1}", turn_prompt(scenario, _history(ctx, i),
                                                             context.user_text(ctx.actual[i])),
                             labels=labels, positive=positive)
               for i in range(1, len(ctx.actual))]
        whole = _history(ctx, len(ctx.actual))
        cut = bool(ctx.extras.get(TURN_LIMITED))
        out.append(JudgeQuestion(len(ctx.actual) - 1, STOP, stop_prompt(scenario, whole, cut),
                                 labels=labels, positive=positive))
        return out

    def combine(self, ctx: EvalContext, answered: Sequence[Answered]) -> CriterionResult:
        scenario = ctx.scenario
        if scenario is None:  # questions() refused the case already; kept for the type checker
            raise ValueError("needs a conversation_scenario case")
        first = context.user_text(ctx.actual[0]).strip() == scenario.starting_prompt.strip()
        scores: list[float | None] = [1.0 if first else 0.0]
        by_item = {a.question.item: a.score for a in answered}
        scores += [by_item.get(f"turn {i + 1}") for i in range(1, len(ctx.actual))]
        stop = by_item.get(STOP)
        if stop == 0.0:  # stopping in the wrong place fails the last turn (ADK's rule)
            scores[-1] = 0.0
        elif stop is None:
            scores[-1] = None
        passed = sum(1 for s in scores if s == 1.0)
        per = [InvocationScore(s) for s in scores]
        per[0].reason = ("the first turn is the scenario's starting prompt" if first
                         else "the first turn is not the scenario's starting prompt")
        if len(per) == 1:  # the first turn is the last: where it stopped was judged too
            stopped = explain.invocation_text(answered, self.min_confidence)
            per[0].reason += f"; {stopped}" if stopped else ""
        return CriterionResult(passed / len(scores), per)


__all__ = ["PerTurnUserSimulatorQuality", "stop_prompt", "turn_prompt"]
