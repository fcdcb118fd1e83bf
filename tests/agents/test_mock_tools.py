"""`mock_tools`: the serving rule, the built-in agent and the plain-callable hook."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agenteval.agents import Agent, BuiltinAdapter
from agenteval.agents.callable import CallableAdapter
from agenteval.agents.mock_tools import MockTools, ToolCalls, UnmatchedToolCall
from agenteval.criteria.args_match import ArgsComparer
from agenteval.models import ScriptedModel, ToolCallRequest
from agenteval.runner import infer_case
from agenteval.runner.scoring import CaseRun
from agenteval.schema import (
    Content,
    EvalCase,
    FunctionCall,
    FunctionResponse,
    IntermediateData,
    Invocation,
)
from agenteval.tracing import TraceRecorder, recording

RAN: list[str] = []


def lookup(city: str) -> dict[str, Any]:
    """Weather for a city."""
    RAN.append(city)
    return {"city": city, "temp": 30}


def _expected(*calls: tuple[str, dict[str, Any], Any], reply: str = "ok") -> Invocation:
    return Invocation(
        user_content=Content.from_text("weather?", role="user"),
        final_response=Content.from_text(reply),
        intermediate_data=IntermediateData(
            tool_uses=[FunctionCall(id=f"e{i}", name=n, args=a) for i, (n, a, _) in enumerate(calls)],
            tool_responses=[FunctionResponse(id=f"e{i}", name=n, response=r)
                            for i, (n, _, r) in enumerate(calls) if r is not None]))


def _case(*turns: Invocation) -> EvalCase:
    return EvalCase(eval_id="c", conversation=list(turns))


def _served(run: CaseRun) -> list[Any]:
    return [getattr(e, "served", None) for inv in run.actual
            for e in inv.intermediate_data.invocation_events  # type: ignore[union-attr]
            if getattr(e, "served", None) is not None]


# The rule -----------------------------------------------------------------------------------

def _server(*calls: tuple[str, dict[str, Any], Any], **settings: Any):  # type: ignore[no-untyped-def]
    mock = MockTools.from_setting(settings.pop("mode", "expected"), **settings)
    assert mock is not None
    server = mock.for_case(_case(_expected(*calls)))
    server.begin_turn(0)
    return server


def test_first_unused_match_serves_in_recorded_order() -> None:
    server = _server(("lookup", {"city": "Oslo"}, {"temp": 1}), ("lookup", {"city": "Oslo"}, {"temp": 2}))
    assert server.serve("lookup", {"city": "Oslo"}) == {"temp": 1}
    assert server.serve("lookup", {"city": "Oslo"}) == {"temp": 2}
    assert server.serve("lookup", {"city": "Oslo"}) is None  # used up: runs live
    assert [e.served for e in server.log] == ["expected", "expected", "live"]
    assert [e.expected_index for e in server.log] == [0, 1, None]


def test_arguments_compare_under_the_runs_matching() -> None:
    exact = _server(("lookup", {"city": "Oslo"}, {"temp": 1}))
    assert exact.serve("lookup", {"city": "oslo"}) is None
    text = _server(("lookup", {"city": "Oslo"}, {"temp": 1}),
                   equal=ArgsComparer({"lookup": {"city": "text"}}).equal)
    assert text.serve("lookup", {"city": " OSLO "}) == {"temp": 1}


def test_a_call_without_a_recorded_response_never_serves() -> None:
    server = _server(("lookup", {"city": "Oslo"}, None), strict=True)
    with pytest.raises(UnmatchedToolCall, match=r'lookup\(\{"city": "Oslo"\}\) in invocation 0'):
        server.serve("lookup", {"city": "Oslo"})
    assert server.refused is not None


def test_a_strict_refusal_names_its_agent_and_the_first_one_stays_the_cases() -> None:
    """Agents side by side, both refused: the case's error (`refused`) is the first agent's
    call, named with its agent; the later refusal is raised to its own agent only."""
    server = _server(("lookup", {"city": "Oslo"}, {"temp": 1}), strict=True)
    with pytest.raises(UnmatchedToolCall, match=r'lookup\(\{"city": "Rome"\}\) by agent \'a_agent\''):
        server.serve("lookup", {"city": "Rome"}, agent="a_agent")
    with pytest.raises(UnmatchedToolCall, match="by agent 'b_agent'"):
        server.serve("lookup", {"city": "Paris"}, agent="b_agent")
    assert server.refused is not None and "Rome" in str(server.refused) and "a_agent" in str(server.refused)


def test_modes_per_tool_and_settings() -> None:
    assert MockTools.from_setting(None) is None
    assert MockTools.from_setting("live") is None  # nothing served: no server at all
    mock = MockTools.from_setting({"lookup": "expected"})
    assert mock is not None and mock.mode("lookup") == "expected" and mock.mode("other") == "live"
    with pytest.raises(ValueError, match="expected or live"):
        MockTools.from_setting({"lookup": "mock"})
    server = _server(("lookup", {"city": "Oslo"}, {"temp": 1}), mode={"*": "expected", "lookup": "live"},
                     strict=True)
    assert server.serve("lookup", {"city": "Oslo"}) is None  # live even under strict


def test_a_string_result_is_served_as_the_tool_returned_it() -> None:
    server = _server(("clock", {}, {"result": "09:30"}))
    hook = ToolCalls(server)
    assert hook.call("clock", {}, lambda: "now") == "09:30"
    assert hook.calls == [("clock", {}, "tool_call_1", {"result": "09:30"})]


# The built-in agent ---------------------------------------------------------------------------

def _builtin(model: ScriptedModel) -> BuiltinAdapter:
    return BuiltinAdapter(Agent("weather", model, "Answer about weather.", tools=[lookup]), model)


def test_builtin_agent_gets_the_expected_response_and_the_tool_does_not_run() -> None:
    RAN.clear()
    model = ScriptedModel([[ToolCallRequest("lookup", {"city": "Oslo"})], "Oslo: 12 C."])
    case = _case(_expected(("lookup", {"city": "Oslo"}, {"city": "Oslo", "temp": 12})))
    recorder = TraceRecorder()
    with recording(recorder):
        run = asyncio.run(infer_case(_builtin(model), case, "s", 0,
                                     mock_tools=MockTools.from_setting("expected")))
    assert run.error_message is None and RAN == []
    assert [s.attributes.get("agenteval.served") for s in recorder.trace.spans
            if s.name.startswith("execute_tool")] == ["expected"]
    assert run.actual[0].tool_responses()[0].response == {"city": "Oslo", "temp": 12}
    assert '"temp": 12' in model.requests[1].messages[-1].content  # the model saw the served result
    assert _served(run) == [["expected"]]


def test_builtin_agent_strict_refusal_fails_the_case() -> None:
    RAN.clear()
    model = ScriptedModel([[ToolCallRequest("lookup", {"city": "Bergen"})], "never"])
    case = _case(_expected(("lookup", {"city": "Oslo"}, {"temp": 12})))
    run = asyncio.run(infer_case(_builtin(model), case, "s", 0,
                                 mock_tools=MockTools.from_setting("expected", strict=True)))
    assert RAN == [] and len(model.requests) == 1  # the model never saw a result
    assert run.error_message is not None
    assert run.error_message.startswith('UnmatchedToolCall: lookup({"city": "Bergen"}) in invocation 0')


# Plain callables: the `tools` hook ------------------------------------------------------------

def sync_agent(text: str, tools: ToolCalls) -> str:
    weather = tools.call("lookup", {"city": "Oslo"}, lookup)
    return f"{weather['city']}: {weather['temp']} C"


async def async_agent(text: str, state: dict[str, Any], tools: ToolCalls) -> str:
    weather = await tools.acall("lookup", {"city": "Oslo"}, lookup)
    state["asked"] = True
    return f"{weather['city']}: {weather['temp']} C"


@pytest.mark.parametrize("fn", [sync_agent, async_agent])
def test_callable_hook_serves_and_records_calls(fn: Any) -> None:
    case = _case(_expected(("lookup", {"city": "Oslo"}, {"city": "Oslo", "temp": 12})))
    RAN.clear()
    run = asyncio.run(infer_case(CallableAdapter(fn), case, "s", 0,
                                 mock_tools=MockTools.from_setting("expected")))
    assert RAN == [] and run.error_message is None
    inv = run.actual[0]
    assert inv.final_response is not None and inv.final_response.text() == "Oslo: 12 C"
    assert [(c.name, c.args) for c in inv.tool_calls()] == [("lookup", {"city": "Oslo"})]
    assert _served(run) == [["expected"]]
    live = asyncio.run(infer_case(CallableAdapter(fn), case, "s", 0))  # no mocking: runs, recorded
    assert RAN == ["Oslo"] and live.actual[0].final_response.text() == "Oslo: 30 C"  # type: ignore[union-attr]
    assert [r.response for r in live.actual[0].tool_responses()] == [{"city": "Oslo", "temp": 30}]


def test_callable_that_swallows_a_refusal_still_fails() -> None:
    def stubborn(text: str, tools: ToolCalls) -> str:
        try:
            tools.call("lookup", {"city": "Bergen"}, lookup)
        except Exception:
            return "no weather"
        return "weather"

    case = _case(_expected(("lookup", {"city": "Oslo"}, {"temp": 12})))
    run = asyncio.run(infer_case(CallableAdapter(stubborn), case, "s", 0,
                                 mock_tools=MockTools.from_setting("expected", strict=True)))
    assert run.error_message is not None and "UnmatchedToolCall: lookup" in run.error_message
