"""The google-adk adapter, driven through the runner with a scripted ADK model (no network)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

pytest.importorskip("google.adk", reason="google-adk is not installed (pip install 'agenteval[adk]')")

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models import LlmResponse
from google.adk.plugins import BasePlugin
from google.adk.tools import ToolContext
from google.genai import types

from agenteval.agents import adk as adk_module
from agenteval.agents.adk import AdkAdapter
from agenteval.agents.loader import to_adapter
from agenteval.runner import infer_case
from agenteval.runner.scoring import CaseRun
from agenteval.schema import Content, EvalCase, Invocation, InvocationEvents, SessionInput
from tests.agents.scripted_adk import ScriptedLlm

INSTRUCTION = "You keep the user's shopping cart."


def add_item(item: str, tool_context: ToolContext) -> dict[str, Any]:
    """Adds an item to the shopping cart."""
    time.sleep(0.05)
    cart = [*tool_context.state.get("cart", []), item]
    tool_context.state["cart"] = cart
    return {"cart": cart}


def _usage(prompt: int, out: int) -> types.GenerateContentResponseUsageMetadata:
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt, candidates_token_count=out, total_token_count=prompt + out)


def _script() -> list[Any]:
    call = types.Part(function_call=types.FunctionCall(id="call-1", name="add_item", args={"item": "pear"}))
    answer = [types.Part(text="The user wants a pear.", thought=True), types.Part(text="Added a pear.")]
    return [
        LlmResponse(content=types.Content(role="model", parts=[call]), usage_metadata=_usage(10, 5),
                    model_version="scripted-1"),
        LlmResponse(content=types.Content(role="model", parts=answer), usage_metadata=_usage(20, 4),
                    model_version="scripted-1"),
    ]


def _agent(script: list[Any], delay: float = 0.05) -> LlmAgent:
    return LlmAgent(name="shop_agent", model=ScriptedLlm(script=script, delay=delay),
                    instruction=INSTRUCTION, tools=[add_item])


def _case() -> EvalCase:
    return EvalCase(
        eval_id="add_pear",
        conversation=[Invocation(user_content=Content.from_text("Add a pear", role="user"))],
        session_input=SessionInput(app_name="shop", user_id="u1", state={"cart": ["apple"]}),
    )


def _infer(agent: Any) -> CaseRun:
    return asyncio.run(infer_case(AdkAdapter(agent), _case(), "set", 0))


def _check_turn(run: CaseRun) -> None:
    assert run.error_message is None
    assert run.session_state == {"cart": ["apple", "pear"]}
    (actual,) = run.actual
    assert [(c.id, c.name, c.args) for c in actual.tool_calls()] == [("call-1", "add_item", {"item": "pear"})]
    assert [(r.id, r.name, r.response) for r in actual.tool_responses()] == [
        ("call-1", "add_item", {"cart": ["apple", "pear"]})]
    assert actual.final_response is not None
    assert actual.final_response.text(include_thoughts=False) == "Added a pear."
    assert actual.final_response.parts is not None and actual.final_response.parts[0].thought is True
    assert [(u.prompt_token_count, u.candidates_token_count, u.total_token_count)
            for u in actual.usage()] == [(10, 5, 15), (20, 4, 24)]
    assert actual.model_call_count() == 2
    assert isinstance(actual.intermediate_data, InvocationEvents)
    events = actual.intermediate_data.invocation_events
    assert [e.author for e in events] == ["shop_agent"] * 3
    assert {e.model_version for e in events} == {"scripted-1", None}
    assert events[-1].content is None  # the final answer lives in final_response only
    assert actual.model_duration is not None and actual.model_duration >= 0.09
    assert actual.tool_duration is not None and actual.tool_duration >= 0.04
    assert actual.app_details is not None
    details = actual.app_details.agent_details["shop_agent"]
    assert INSTRUCTION in details.instructions
    declared = [d["name"] for t in details.tool_declarations for d in t["function_declarations"]]
    assert declared == ["add_item"]


def test_tool_call_state_and_final_response() -> None:
    agent = _agent(_script())
    _check_turn(_infer(agent))
    assert isinstance(agent.model, ScriptedLlm)
    assert agent.model.retry_attempts == [7, 7]  # adk eval's default retry options were added


def test_timing_without_adk_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adk_module, "_collect_busy", None)  # the plugin's callback timing instead
    _check_turn(_infer(_agent(_script())))


def test_app_runs_with_its_plugins_left_unchanged() -> None:
    class Marker(BasePlugin):
        def __init__(self) -> None:
            super().__init__(name="marker")
            self.seen = 0

        async def before_model_callback(self, **kwargs: Any) -> None:
            self.seen += 1

    marker = Marker()
    app = App(name="shop_app", root_agent=_agent(_script()), plugins=[marker])
    _check_turn(_infer(app))
    assert marker.seen == 2
    assert app.plugins == [marker]


def test_agent_exception_becomes_error_message() -> None:
    run = _infer(_agent([RuntimeError("model down")], delay=0))
    assert run.error_message is not None
    assert run.error_message.startswith("RuntimeError: model down")
    assert run.actual == []


def test_loader_detects_adk_agents_and_apps() -> None:
    def no_model(name: str) -> Any:
        raise AssertionError(f"an ADK agent needs no model resolution ({name})")

    agent = _agent(_script())
    adapter = to_adapter(agent, no_model)
    assert isinstance(adapter, AdkAdapter) and adapter.name == "shop_agent"
    app_adapter = to_adapter(App(name="shop_app", root_agent=agent), no_model)
    assert isinstance(app_adapter, AdkAdapter) and app_adapter.name == "shop_app"


def test_adk_runs_are_traced_from_adks_own_callbacks() -> None:
    from agenteval.tracing import TraceRecorder, recording

    recorder = TraceRecorder()

    async def traced() -> CaseRun:
        with recording(recorder):
            return await infer_case(AdkAdapter(_agent(_script())), _case(), "set", 0)

    run = asyncio.run(traced())
    _check_turn(run)
    trace = recorder.trace
    (invocation,) = trace.invocations()
    steps = trace.below(invocation.span_id)
    assert [s.kind for s in steps] == ["agent", "llm", "tool", "llm"]
    agent, first, tool, second = steps
    # named after the root agent (not the app or folder), with the turn's message and answer
    assert agent.name == "invoke_agent shop_agent" and first.name == "chat scripted-model"
    assert agent.attributes["gen_ai.agent.name"] == "shop_agent"
    assert agent.attributes["input.value"] == "Add a pear"
    assert agent.attributes["output.value"] == "Added a pear."
    assert all(s.parent_id == agent.span_id for s in (first, tool, second))
    assert INSTRUCTION in str(first.attributes["gen_ai.input.messages"])
    assert first.attributes["gen_ai.request.tools"] == ["add_item"]
    assert '"name": "add_item"' in str(first.attributes["gen_ai.output.messages"])
    assert (first.attributes["gen_ai.usage.input_tokens"], first.attributes["gen_ai.usage.output_tokens"]) \
        == (10, 5)
    assert tool.name == "execute_tool add_item" and tool.attributes["gen_ai.tool.call.id"] == "call-1"
    assert tool.attributes["gen_ai.tool.call.arguments"] == '{"item": "pear"}'
    assert tool.attributes["gen_ai.tool.call.result"] == '{"cart": ["apple", "pear"]}'
    assert second.attributes["output.value"] == "Added a pear."
    assert all(s.end is not None for s in steps)
    (actual,) = run.actual
    assert actual.tool_duration is not None and actual.tool_duration >= 0.05  # the tool sleeps 50 ms
    assert actual.model_duration is not None and actual.model_duration >= 0.1  # two 50 ms calls
