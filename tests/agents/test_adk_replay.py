"""Replaying a recorded run of a real ADK agent (scripted `BaseLlm`, volatile tools) through the
ADK adapter: the replay plugin answers every model call and tool call from the recording, so
neither the model nor the tools run, and the clock, uuid and random quote come back as recorded."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from rich.console import Console

pytest.importorskip("google.adk", reason="google-adk is not installed (pip install 'agenteval[adk]')")

from google.adk.agents import LlmAgent
from google.adk.models import LlmRequest, LlmResponse

from agenteval.agents import to_adapter
from agenteval.agents.replay import for_replay
from agenteval.cli.replay import report_divergences
from agenteval.criteria import resolve_metrics
from agenteval.models.replay import Recording, replaying
from agenteval.runner.evaluate import EvalSetRequest, run_evaluation
from agenteval.schema import EvalConfig, EvalSetResult, InvocationEvents
from tests.agents import volatile_adk
from tests.agents.volatile_adk import CALLS

MODEL_CALLS: Counter[str] = Counter()
pytestmark = pytest.mark.filterwarnings("ignore:.*is deprecated in favor of Workflow:DeprecationWarning",
                                        "ignore:The `plugins` argument is deprecated:DeprecationWarning")


class CountingLlm(volatile_adk.VolatileLlm):
    """The volatile agent's model, counting its calls."""

    async def generate_content_async(self, llm_request: LlmRequest,
                                     stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        MODEL_CALLS["calls"] += 1
        async for response in super().generate_content_async(llm_request, stream):
            yield response


def _agent(instruction: str = "Open tickets, share quotes.") -> LlmAgent:
    return LlmAgent(name="helpdesk", model=CountingLlm(), instruction=instruction,
                    tools=[volatile_adk.get_time, volatile_adk.new_ticket_id, volatile_adk.random_quote])


def _no_model(name: str) -> Any:
    raise AssertionError(f"an ADK agent resolves no model ({name})")


def _evaluate(agent: Any) -> EvalSetResult:
    request = EvalSetRequest(volatile_adk.eval_set(), resolve_metrics(EvalConfig(), None))
    return asyncio.run(run_evaluation(to_adapter(agent, _no_model), [request], parallelism=2))[0]


def _said(doc: EvalSetResult) -> list[list[tuple[str, list[dict[str, Any] | None]]]]:
    """Each invocation's final response and the tool responses the model was given."""
    return [[(inv.actual_invocation.final_response.text() if inv.actual_invocation.final_response else "",
              [r.response for r in inv.actual_invocation.tool_responses()])
             for inv in r.eval_metric_result_per_invocation] for r in doc.eval_case_results]


def test_an_adk_run_replays_without_calling_the_model_or_the_tools() -> None:
    CALLS.clear()
    MODEL_CALLS.clear()
    recorded = _evaluate(_agent())
    assert MODEL_CALLS["calls"] == 6 and sum(CALLS.values()) == 5  # 3 turns: 2 model calls each
    CALLS.clear()
    MODEL_CALLS.clear()
    recording = Recording([recorded], "recorded.json")
    with replaying(recording):
        replayed = _evaluate(for_replay(_agent(), _no_model))
    assert MODEL_CALLS == {} and CALLS == {}
    assert recording.divergences() == []
    assert sum(c.served_model for c in recording.cassettes) == 6
    assert sum(c.served_tools for c in recording.cassettes) == 5
    assert [r.error_message for r in replayed.eval_case_results] == [None, None]
    # the volatile values (time, ticket id, random quote) are the recorded ones, to the byte
    assert _said(replayed) == _said(recorded)
    assert ([(m.metric_name, m.score) for r in replayed.eval_case_results
             for m in r.overall_eval_metric_results if m.metric_name != "invocation_duration_v1"]
            == [(m.metric_name, m.score) for r in recorded.eval_case_results
                for m in r.overall_eval_metric_results if m.metric_name != "invocation_duration_v1"])


def test_a_changed_adk_instruction_is_a_divergence_at_the_first_model_call() -> None:
    recorded = _evaluate(_agent())
    CALLS.clear()
    MODEL_CALLS.clear()
    recording = Recording([recorded], "recorded.json")
    with replaying(recording):
        replayed = _evaluate(for_replay(_agent("Open tickets, share quotes, kindly."), _no_model))
    assert MODEL_CALLS == {} and CALLS == {}
    errors = [r.error_message or "" for r in replayed.eval_case_results]
    assert all("invocation 0, step 0 (model call by agent 'helpdesk'): message 0 (system) differs" in e
               for e in errors), errors
    assert "kindly" in errors[0]
    assert len(recording.divergences()) == 2


def test_after_an_adk_divergence_live_runs_the_model_and_tools() -> None:
    recorded = _evaluate(_agent())
    CALLS.clear()
    MODEL_CALLS.clear()
    recording = Recording([recorded], "recorded.json", then="live")
    with replaying(recording):
        replayed = _evaluate(for_replay(_agent("Open tickets, share quotes, kindly."), _no_model))
    assert MODEL_CALLS["calls"] == 6 and sum(CALLS.values()) == 5
    assert [r.error_message for r in replayed.eval_case_results] == [None, None]
    assert all(any("carried on live" in w for w in r.warnings) for r in replayed.eval_case_results)


def _calls_by_agent(doc: EvalSetResult) -> list[tuple[str, str, dict[str, Any]]]:
    calls = []
    for r in doc.eval_case_results:
        for i in r.eval_metric_result_per_invocation:
            data = i.actual_invocation.intermediate_data
            assert isinstance(data, InvocationEvents)
            calls += [(e.author, p.function_call.name, dict(p.function_call.args or {}))
                      for e in data.invocation_events for p in (e.content.parts if e.content else [])
                      if p.function_call is not None]
    return calls


def test_an_adk_tree_replays_its_agent_tools_handoffs_and_loop_exits() -> None:
    """An AgentTool, `transfer_to_agent` and `exit_loop` act on the app, not the world: served
    from the recording, the inner agent would not run (its recorded calls left over), the handoff
    would not happen and the loop would not end. They run; everything they lead to is served."""
    from tests.agents import tree_adk

    def evaluate(replay: bool = False) -> EvalSetResult:
        request = EvalSetRequest(tree_adk.eval_set(), resolve_metrics(EvalConfig(), None))
        agent = for_replay(tree_adk.app(), _no_model) if replay else tree_adk.app()
        return asyncio.run(run_evaluation(to_adapter(agent, _no_model), [request]))[0]

    tree_adk.CALLS.clear()
    recorded = evaluate()
    assert tree_adk.CALLS == {"lookup": 2, "book": 1}
    tree_adk.CALLS.clear()
    recording = Recording([recorded], "recorded.json")
    with replaying(recording):
        replayed = evaluate(replay=True)
    assert [str(d) for d in recording.divergences()] == []
    assert [r.error_message for r in replayed.eval_case_results] == [None]
    assert tree_adk.CALLS == {}
    assert sum(c.served_tools for c in recording.cassettes) == 3  # lookup twice, book
    ran = sum(c.run_tools for c in recording.cassettes)
    said = Console(record=True, width=500)
    report_divergences(said, recording)  # (it counted the served calls only)
    assert ran > 0 and (f"3 tool results served from the recording, {ran} recorded call(s) of tools "
                        "acting on the app run again") in said.export_text()
    assert _calls_by_agent(replayed) == _calls_by_agent(recorded)
    assert ("research_agent", "lookup", {"city": "Rome"}) in _calls_by_agent(replayed)
    assert _said(replayed) == _said(recorded)


def forget(topic: str) -> None:
    """Forgets a topic (returns nothing)."""
    CALLS["forget"] += 1


def test_an_adk_tool_that_returns_nothing_replays() -> None:
    """ADK sends `{"result": None}` for it; the recording kept no result, so the replay could
    only diverge ("the recording of forget's result is missing")."""
    from tests.agents.tree_adk import StepLlm, asks, says

    def evaluate(replay: bool = False) -> EvalSetResult:
        agent = LlmAgent(name="forgetful", tools=[forget],
                         model=StepLlm(script=[asks("forget", topic="rain"), says("Forgotten.")]))
        request = EvalSetRequest(volatile_adk.eval_set(), resolve_metrics(EvalConfig(), None))
        adapter = to_adapter(for_replay(agent, _no_model) if replay else agent, _no_model)
        return asyncio.run(run_evaluation(adapter, [request]))[0]

    CALLS.clear()
    recorded = evaluate()
    assert CALLS == {"forget": 3}
    CALLS.clear()
    recording = Recording([recorded], "recorded.json")
    with replaying(recording):
        replayed = evaluate(replay=True)
    assert [str(d) for d in recording.divergences()] == []
    assert CALLS == {}
    assert sum(c.served_tools for c in recording.cassettes) == 3
    assert _said(replayed) == _said(recorded)


def test_agents_side_by_side_replay_their_own_tool_results() -> None:
    """Two branches of a `ParallelAgent` call `memo()` (the same call); recorded, `a_agent`'s
    model was the slower, so `b_agent` called first. Replayed, the models answer at once and
    `a_agent` calls first: it is served its own recorded result, not `b_agent`'s (which made its
    next request differ from the recorded one: a divergence of a run that did the same)."""
    from google.adk.agents import ParallelAgent

    from tests.agents.tree_adk import StepLlm, asks, says

    serial = iter(range(100))

    def memo() -> dict[str, Any]:
        """Reads the agent's memo."""
        return {"memo": next(serial)}

    class SlowLlm(StepLlm):
        async def generate_content_async(self, llm_request: LlmRequest,
                                         stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
            await asyncio.sleep(0.2)
            async for response in super().generate_content_async(llm_request, stream):
                yield response

    def evaluate(replay: bool = False) -> EvalSetResult:
        a = LlmAgent(name="a_agent", tools=[memo], model=SlowLlm(script=[asks("memo"), says("a")]))
        b = LlmAgent(name="b_agent", tools=[memo], model=StepLlm(script=[asks("memo"), says("b")]))
        agent = ParallelAgent(name="side_by_side", sub_agents=[a, b])
        request = EvalSetRequest(volatile_adk.eval_set().model_copy(update={"eval_cases": [
            volatile_adk.eval_set().eval_cases[1]]}), resolve_metrics(EvalConfig(), None))
        adapter = to_adapter(for_replay(agent, _no_model) if replay else agent, _no_model)
        return asyncio.run(run_evaluation(adapter, [request]))[0]

    def memos(doc: EvalSetResult) -> dict[str, Any]:
        turn = doc.eval_case_results[0].eval_metric_result_per_invocation[0]
        data = turn.actual_invocation.intermediate_data
        assert isinstance(data, InvocationEvents)
        return {e.author: p.function_response.response for e in data.invocation_events
                for p in (e.content.parts or [] if e.content else []) if p.function_response}

    recorded = evaluate()
    assert memos(recorded) == {"b_agent": {"memo": 0}, "a_agent": {"memo": 1}}
    recording = Recording([recorded], "recorded.json")
    with replaying(recording):
        replayed = evaluate(replay=True)
    assert [str(d) for d in recording.divergences()] == []
    assert memos(replayed) == memos(recorded)
