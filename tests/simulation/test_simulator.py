"""The LLM-backed user simulator: what it asks its model for."""

import asyncio

import pytest

from agenteval.errors import describe
from agenteval.models import ScriptedModel
from agenteval.models.base import ModelError
from agenteval.schema import ConversationScenario
from agenteval.simulation import LlmUserSimulator, parse_simulator_config

SCENARIO = ConversationScenario(starting_prompt="hi", conversation_plan="Ask for a d6 roll.")


def _second_turn_request(raw: dict[str, object]) -> tuple[float, int]:
    model = ScriptedModel(["roll a d6"])
    simulator = LlmUserSimulator(SCENARIO, model, parse_simulator_config(raw))
    simulator.record("user", "hi")
    asyncio.run(simulator.next_turn(1))
    (request,) = model.requests
    return request.temperature, request.max_tokens


def test_adks_model_configuration_sets_temperature_and_reply_length() -> None:
    # ADK's `model_configuration` was accepted and ignored: 0.7 and 200 tokens whatever it said.
    assert _second_turn_request({"model_configuration": {"temperature": 0.1, "max_output_tokens": 64}}) \
        == (0.1, 64)
    thinking = {"thinkingConfig": {"thinking_budget": 0}}
    assert _second_turn_request({"modelConfiguration": {"maxOutputTokens": 32, **thinking}}) == (0.7, 32)
    assert _second_turn_request({"temperature": 0.3}) == (0.3, 200)
    assert _second_turn_request({}) == (0.7, 200)


def test_custom_instructions_without_the_persona_refuse_a_scenario_with_one() -> None:
    # As ADK refuses it: the persona would never reach the simulated user.
    template = "{{ conversation_plan }} {{ conversation_history }} {{ stop_signal }}"
    with_persona = ConversationScenario(starting_prompt="hi", conversation_plan="p", user_persona="NOVICE")
    hidden = parse_simulator_config({"custom_instructions": template})
    with pytest.raises(ValueError, match=r"custom_instructions: no \{\{ persona \}\}"):
        LlmUserSimulator(with_persona, ScriptedModel([]), hidden)
    LlmUserSimulator(SCENARIO, ScriptedModel([]), hidden)
    shown = parse_simulator_config({"custom_instructions": template + " {{ persona }}"})
    LlmUserSimulator(with_persona, ScriptedModel([]), shown)


def test_an_empty_simulator_reply_names_the_model_and_the_turn() -> None:
    # It said "the user simulator produced an empty message": which model, which turn, unsaid.
    model = ScriptedModel(["  \n "], name="stub-user")
    simulator = LlmUserSimulator(SCENARIO, model, parse_simulator_config({}))
    simulator.record("user", "hi")
    with pytest.raises(ModelError) as raised:
        asyncio.run(simulator.next_turn(1))
    # as the case's error says it: what to act on, not agenteval's own line that raised it
    assert describe(raised.value) == ("ModelError: the user simulator's model stub-user replied with no "
                                      "text for user turn 2")
