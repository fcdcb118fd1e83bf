import asyncio
from typing import Any

from agenteval.agents import Agent, BuiltinAdapter, SessionSpec, Tool, ToolContext
from agenteval.models import ModelRequest, ScriptedModel, ToolCallRequest
from agenteval.schema import Content


def roll_die(sides: int, tool_context: ToolContext) -> int:
    """Roll a die.

    Args:
        sides: Number of sides.
    """
    tool_context.state["rolls"] = [*tool_context.state.get("rolls", []), sides - 1]
    return sides - 1


async def lookup(city: str, unit: str = "C") -> dict[str, Any]:
    """Weather for a city."""
    return {"city": city, "temp": 21, "unit": unit}


def _send(agent: Agent, model: ScriptedModel, *texts: str, state: dict[str, Any] | None = None):  # type: ignore[no-untyped-def]
    async def go():  # type: ignore[no-untyped-def]
        session = await BuiltinAdapter(agent, model).start_session(
            SessionSpec("app", "u", "s", state if state is not None else {}))
        return [await session.send(Content.from_text(t, role="user")) for t in texts], session

    return asyncio.run(go())


def test_tool_schema_from_signature_and_docstring() -> None:
    spec = Tool(roll_die).spec
    assert spec.name == "roll_die" and spec.description == "Roll a die."
    assert spec.parameters["properties"] == {"sides": {"type": "integer", "description": "Number of sides."}}
    assert spec.parameters["required"] == ["sides"]
    assert "tool_context" not in spec.parameters["properties"]
    assert Tool(lookup).spec.parameters["properties"]["unit"]["default"] == "C"


def test_tool_loop_records_calls_responses_state_and_usage() -> None:
    model = ScriptedModel([
        [ToolCallRequest("roll_die", {"sides": 6}), ToolCallRequest("lookup", {"city": "Oslo"})],
        "You rolled a 5; Oslo is 21 C.",
    ])
    agent = Agent("dice", model, "Roll dice. Rolls so far: {rolls}", tools=[roll_die, lookup])
    (turn,), session = _send(agent, model, "roll a d6 and weather in Oslo", state={"rolls": []})
    assert turn.final_response is not None and turn.final_response.text() == "You rolled a 5; Oslo is 21 C."
    calls = [p.function_call for e in turn.events if e.content for p in e.content.parts or []
             if p.function_call]
    responses = [p.function_response for e in turn.events if e.content for p in e.content.parts or []
                 if p.function_response]
    assert [(c.name, c.args) for c in calls] == [("roll_die", {"sides": 6}), ("lookup", {"city": "Oslo"})]
    assert [r.response for r in responses] == [{"result": 5}, {"city": "Oslo", "temp": 21, "unit": "C"}]
    assert [c.id for c in calls] == [r.id for r in responses]
    assert session.state() == {"rolls": [5]}
    assert sum(1 for e in turn.events if e.usage_metadata) == 2
    assert turn.model_seconds is not None and turn.tool_seconds is not None
    # The instruction is templated from state, and tool results go back as plain user text.
    second: ModelRequest = model.requests[1]
    assert second.messages[0].content.startswith("Roll dice. Rolls so far: [5]")  # live state
    assert "Tool roll_die returned" in second.messages[-1].content


def test_bad_arguments_and_unknown_tools_are_reported_to_the_model() -> None:
    model = ScriptedModel([[ToolCallRequest("roll_die", {"sides": "many"}),
                            ToolCallRequest("nope", {})], "sorry"])
    (turn,), _ = _send(Agent("a", model, tools=[roll_die]), model, "go")
    responses = [p.function_response.response for e in turn.events if e.content
                 for p in e.content.parts or [] if p.function_response]
    assert "invalid arguments for roll_die" in responses[0]["error"]
    assert responses[1] == {"error": "unknown tool 'nope'"}


def test_tool_loop_is_bounded_and_stops_repeated_calls() -> None:
    repeat = ScriptedModel(lambda req: [ToolCallRequest("roll_die", {"sides": 6})] if req.tools else "done")
    (turn,), _ = _send(Agent("a", repeat, tools=[roll_die]), repeat, "go")
    assert turn.final_response is not None and turn.final_response.text() == "done"
    assert len(repeat.requests) == 3  # call, repeated call, final answer without tools

    counter = iter(range(100))
    always = ScriptedModel(lambda req: [ToolCallRequest("roll_die", {"sides": next(counter) + 2})]
                           if req.tools else "gave up")
    (turn,), _ = _send(Agent("a", always, tools=[roll_die], max_tool_rounds=3), always, "go")
    assert turn.final_response is not None and turn.final_response.text() == "gave up"
    assert len(always.requests) == 4


def test_history_carries_across_turns() -> None:
    model = ScriptedModel(["first answer", "second answer"])
    turns, _ = _send(Agent("a", model), model, "one", "two")
    assert [m.content for m in model.requests[1].messages[1:]] == ["one", "first answer", "two"]
    assert len(turns) == 2
