"""`mock_tools` on a real ADK agent (scripted model, volatile tools) through the ADK adapter."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("google.adk", reason="google-adk is not installed (pip install 'agenteval[adk]')")

from agenteval.agents.adk import AdkAdapter
from agenteval.agents.mock_tools import MockTools
from agenteval.runner import infer_case
from agenteval.runner.scoring import CaseRun
from agenteval.schema import EvalCase
from tests.agents import volatile_adk
from tests.agents.volatile_adk import CALLS


def _run(case: EvalCase, mock: MockTools | None) -> CaseRun:
    return asyncio.run(infer_case(AdkAdapter(volatile_adk.agent()), case, "volatile", 0,
                                  mock_tools=mock))


def _case(eval_id: str = "ticket_then_quote") -> EvalCase:
    case = volatile_adk.eval_set().case(eval_id)
    assert case is not None
    return case


def _stable(run: CaseRun) -> list[dict[str, Any]]:
    """The recorded invocations without what differs by run (ids, times)."""
    out = []
    for inv in run.actual:
        data = inv.model_dump(mode="json", exclude_none=True,
                              exclude={"invocation_id", "creation_timestamp", "duration",
                                       "model_duration", "tool_duration"})
        for event in data["intermediate_data"]["invocation_events"]:
            for part in event.get("content", {}).get("parts", []):
                for key in ("function_call", "function_response"):
                    if key in part:
                        part[key].pop("id", None)
        out.append(data)
    return out


def _served(run: CaseRun) -> list[list[str]]:
    return [getattr(e, "served", None) for inv in run.actual
            for e in inv.intermediate_data.invocation_events  # type: ignore[union-attr]
            if getattr(e, "served", None) is not None]


def test_expected_responses_make_reruns_identical_and_no_tool_runs() -> None:
    CALLS.clear()
    mock = MockTools.from_setting("expected")
    runs = [_run(_case(), mock) for _ in range(5)]
    assert CALLS == {}  # the tools' own code never ran
    assert all(r.error_message is None for r in runs)
    first = _stable(runs[0])
    assert all(_stable(r) == first for r in runs[1:])
    assert [inv.final_response.text() for inv in runs[0].actual] == [  # type: ignore[union-attr]
        "Ticket 3f9a2c1d opened at 2026-01-05T09:30:00.000000. Fortune favours the bold.",
        "Here is one: Patience is bitter, but its fruit is sweet."]
    assert _served(runs[0]) == [["expected", "expected", "expected"], ["expected"]]


def test_live_runs_differ_and_run_the_tools() -> None:
    CALLS.clear()
    runs = [_run(_case(), None) for _ in range(2)]
    assert CALLS["get_time"] == 2 and CALLS["new_ticket_id"] == 2 and CALLS["random_quote"] == 4
    assert _stable(runs[0]) != _stable(runs[1])  # the clock and the uuid moved
    assert _served(runs[0]) == []  # nothing is marked when nothing is mocked


def test_strict_fails_an_unmatched_call_naming_it() -> None:
    CALLS.clear()
    case = _case()
    assert case.conversation is not None
    # The recording asked for courage; this run asks for patience in the first turn.
    case.conversation[0].user_content.parts[0].text = "Open a ticket and a quote about patience."  # type: ignore[index]
    run = _run(case, MockTools.from_setting("expected", strict=True))
    assert CALLS["random_quote"] == 0
    assert run.error_message is not None
    assert run.error_message.startswith('UnmatchedToolCall: random_quote({"topic": "patience"}) by agent '
                                        "'helpdesk' in invocation 0 matches no expected call")
    assert run.actual == []  # the refused turn is not recorded


def test_unmatched_runs_live_without_strict() -> None:
    CALLS.clear()
    case = _case()
    assert case.conversation is not None
    case.conversation[0].user_content.parts[0].text = "Open a ticket and a quote about patience."  # type: ignore[index]
    run = _run(case, MockTools.from_setting("expected"))
    assert run.error_message is None
    assert CALLS == {"random_quote": 1}  # turn 0's unmatched call only; turn 1 matched
    assert _served(run) == [["expected", "expected", "live"], ["expected"]]


def test_per_tool_modes_leave_a_live_tool_running() -> None:
    CALLS.clear()
    mock = MockTools.from_setting({"get_time": "live", "*": "expected"})
    run = _run(_case(), mock)
    assert CALLS == {"get_time": 1}
    assert _served(run) == [["live", "expected", "expected"], ["expected"]]
    text = run.actual[0].final_response.text()  # type: ignore[union-attr]
    assert "3f9a2c1d" in text and "2026-01-05T09:30" not in text


def test_each_expected_call_serves_once_per_turn() -> None:
    """The quote-only case's one expected call cannot serve the ticket turn's quote twice."""
    CALLS.clear()
    case = _case("quote_only")
    assert case.conversation is not None
    case.conversation.append(case.conversation[0].model_copy(deep=True))
    run = _run(case, MockTools.from_setting("expected"))
    assert CALLS == {}  # each turn has its own expected call
    assert _served(run) == [["expected"], ["expected"]]


def test_a_plugin_of_the_apps_own_that_answers_first_wins_and_is_not_marked() -> None:
    from google.adk.apps import App
    from google.adk.plugins import BasePlugin

    class Quotes(BasePlugin):  # type: ignore[misc]
        async def before_tool_callback(self, *, tool: Any, tool_args: Any,
                                       tool_context: Any) -> dict[str, Any] | None:
            return {"result": "From the plugin."} if tool.name == "random_quote" else None

    CALLS.clear()
    app = App(name="helpdesk", root_agent=volatile_adk.agent(), plugins=[Quotes(name="quotes")])
    run = asyncio.run(infer_case(AdkAdapter(app), _case(), "volatile", 0,
                                 mock_tools=MockTools.from_setting("expected")))
    assert CALLS == {} and run.error_message is None
    assert _served(run) == [["expected", "expected", None]]  # turn 1's quote: never asked, no mark
    assert run.actual[1].final_response.text() == "Here is one: From the plugin."  # type: ignore[union-attr]


def test_an_adk_tree_under_strict_serves_only_the_tools_of_the_world() -> None:
    """Recorded from a live run, the tree's expected calls hold a response for the AgentTool,
    the handoff and the loop exit too. Served, the inner agent would not run, the handoff would
    not happen (the agent asks again, and strict refuses the second ask) and the loop would not
    end. They run, logged live; the tools they lead to are served from the set."""
    from tests.agents import tree_adk

    tree_adk.CALLS.clear()
    case = tree_adk.eval_set().eval_cases[0]
    live = asyncio.run(infer_case(AdkAdapter(tree_adk.app()), case, "tree", 0))
    assert live.error_message is None and tree_adk.CALLS == {"lookup": 2, "book": 1}
    recorded = case.model_copy(update={"conversation": live.actual})
    tree_adk.CALLS.clear()
    run = asyncio.run(infer_case(AdkAdapter(tree_adk.app()), recorded, "tree", 0,
                                 mock_tools=MockTools.from_setting("expected", strict=True)))
    assert run.error_message is None
    assert tree_adk.CALLS == {}
    assert _served(run) == [["expected"], ["expected"], ["live"], ["live"], ["expected"], ["live"]]
    unmarked = _stable(run)
    for inv in unmarked:
        for event in inv["intermediate_data"]["invocation_events"]:
            event.pop("served", None)
    assert unmarked == _stable(live)


def test_agents_calling_one_tool_get_their_own_recorded_responses_in_any_order() -> None:
    """Two agents call `memo()` (the same call), each recorded with its own response; side by
    side (a `ParallelAgent`) they may call in either order. Each gets the response recorded for
    it, not the first one left (which swapped them in 3 of 12 parallel reruns)."""
    from google.adk.agents import LlmAgent, SequentialAgent

    from tests.agents.tree_adk import StepLlm, asks, says

    serial = iter(range(100))

    def memo() -> dict[str, Any]:
        """Reads the agent's memo."""
        return {"memo": next(serial)}

    def app(first: str, second: str) -> SequentialAgent:
        agents = {name: LlmAgent(name=name, tools=[memo], model=StepLlm(script=[asks("memo"), says("ok")]))
                  for name in (first, second)}
        return SequentialAgent(name="side_by_side", sub_agents=[agents[first], agents[second]])

    def memos(run: CaseRun) -> dict[str, Any]:
        data = run.actual[0].intermediate_data
        return {e.author: p.function_response.response for e in data.invocation_events  # type: ignore[union-attr]
                for p in (e.content.parts or [] if e.content else []) if p.function_response}

    case = EvalCase.model_validate({"eval_id": "c", "conversation": [
        {"invocation_id": "i", "user_content": {"role": "user", "parts": [{"text": "go"}]}}]})
    live = asyncio.run(infer_case(AdkAdapter(app("a_agent", "b_agent")), case, "s", 0))
    assert memos(live) == {"a_agent": {"memo": 0}, "b_agent": {"memo": 1}}
    recorded = case.model_copy(update={"conversation": live.actual})
    run = asyncio.run(infer_case(AdkAdapter(app("b_agent", "a_agent")), recorded, "s", 0,
                                 mock_tools=MockTools.from_setting("expected", strict=True)))
    assert run.error_message is None
    assert memos(run) == {"a_agent": {"memo": 0}, "b_agent": {"memo": 1}}


def test_an_agent_tool_whose_agent_the_set_does_not_expect_is_answered_whole() -> None:
    """A set recorded with `inner_tool_calls: exclude` holds the AgentTool's call and response but
    none of its agent's calls: run, its agent's `lookup` would match nothing (strict refused it),
    so the AgentTool is answered from the set as it was recorded, and its agent does not run."""
    from tests.agents import tree_adk

    case = tree_adk.eval_set().eval_cases[0]
    live = asyncio.run(infer_case(AdkAdapter(tree_adk.app(), inner_tool_calls="exclude"), case, "tree", 0))
    assert live.error_message is None
    tree_adk.CALLS.clear()
    recorded = case.model_copy(update={"conversation": live.actual})
    run = asyncio.run(infer_case(AdkAdapter(tree_adk.app(), inner_tool_calls="exclude"), recorded, "tree", 0,
                                 mock_tools=MockTools.from_setting("expected", strict=True)))
    assert run.error_message is None
    assert tree_adk.CALLS == {}
    assert _served(run) == [["expected"], ["expected"], ["live"], ["expected"], ["live"]]
