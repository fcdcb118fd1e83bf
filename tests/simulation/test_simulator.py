"""The LLM-backed user simulator: what it asks its model for."""

import asyncio

from agenteval.models import ScriptedModel
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
