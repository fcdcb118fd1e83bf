"""`models.replay`: what counts as the same request (ids and times masked), what cannot be
replayed (a cut reply, a missing case), and where a replay that changed shape diverges (other
tools offered, an invocation ended early, a tool call the recording lacks), on the built-in
agent over a scripted model through the runner."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from tests.helpers import eval_set, inv

from agenteval.agents import Agent, to_adapter
from agenteval.agents.replay import for_replay
from agenteval.criteria import resolve_metrics
from agenteval.models import ScriptedModel, ToolCallRequest
from agenteval.models.base import LLM, ModelRequest
from agenteval.models.replay import AttributeText, Recording, ReplayDiverged, normalise, replaying
from agenteval.runner.evaluate import EvalSetRequest, run_evaluation
from agenteval.schema import EvalConfig, EvalSetResult
from agenteval.tracing.recorder import bounded

RUNS: list[str] = []


def lookup(query: str, limit: int = 3) -> dict[str, Any]:
    """Looks a query up."""
    RUNS.append(query)
    return {"answer": f"{limit} hits for {query}", "id": str(uuid.uuid4())}


def other(query: str) -> str:
    """Another tool."""
    return query


def _script(answer: str = "Done.", query: str = "x") -> Any:
    def reply(request: ModelRequest) -> Any:
        if request.tools and "returned:" not in request.messages[-1].content:
            return [ToolCallRequest("lookup", {"query": query})]
        return answer
    return reply


def _agent(model: LLM, tools: list[Any] | None = None, instruction: str = "Help.") -> Agent:
    return Agent(name="helper", model=model, instruction=instruction,
                 tools=[lookup] if tools is None else tools)


def _evaluate(agent: Any, cases: int = 1) -> EvalSetResult:
    s = eval_set("s", {f"c{i}": [inv("find x", "Done."), inv("and y", "Done.")] for i in range(cases)})
    request = EvalSetRequest(s, resolve_metrics(EvalConfig(), None))
    return asyncio.run(run_evaluation(to_adapter(agent, lambda n: ScriptedModel([])), [request]))[0]


def _replay(recorded: EvalSetResult, agent: Agent, then: str = "stop") -> tuple[Recording, EvalSetResult]:
    recording = Recording([recorded], "rec", "live" if then == "live" else "stop")
    with replaying(recording):
        return recording, _evaluate(for_replay(agent, lambda n: ScriptedModel([])))


def test_ids_and_times_are_masked_and_a_cut_attribute_compares_by_head_and_tail() -> None:
    a = normalise('{"id": "3f1c2b9e-1111-4a2b-9c3d-abcdefabcdef", "at": "2026-01-05T09:30:00.123Z", '
                  '"t": 1764106000.5, "session": "agenteval-session-0123456789ab"}')
    b = normalise('{"id": "00000000-2222-4a2b-9c3d-abcdefabcdef", "at": "2026-11-25T22:00:01+01:00", '
                  '"t": 1764109999, "session": "agenteval-session-ba9876543210"}')
    assert a == b and "<id>" in a and "<time>" in a
    assert normalise("order 12, page 3, words") == "order 12, page 3, words"
    long = "x" * 1500 + "MIDDLE" + "y" * 1500
    cut = AttributeText(bounded(long)[0], True)
    assert cut.differs_from(long) is None
    assert cut.differs_from("z" + long[1:]) is not None
    assert cut.differs_from(long[:-1] + "z") is not None


def test_the_same_agent_replays_with_no_call_and_other_tools_diverge_at_step_0() -> None:
    RUNS.clear()
    live = ScriptedModel(_script())
    recorded = _evaluate(_agent(live))
    assert len(live.requests) == 4 and RUNS == ["x", "x"]
    again = ScriptedModel(_script())
    recording, replayed = _replay(recorded, _agent(again))
    assert again.requests == [] and RUNS == ["x", "x"] and recording.divergences() == []
    # the served result is the recorded one, uuid and all (the tool's default `limit` counts as sent)
    def responses(doc: EvalSetResult) -> list[Any]:
        first = doc.eval_case_results[0].eval_metric_result_per_invocation[0].actual_invocation
        return [r.response for r in first.tool_responses()]

    assert responses(replayed) == responses(recorded)
    _, other_tools = _replay(recorded, _agent(ScriptedModel(_script()), [lookup, other]))
    error = other_tools.eval_case_results[0].error_message or ""
    assert ("invocation 0, step 0 (model call by agent 'helper'): the tools offered differ: recorded "
            "['lookup'], now ['lookup', 'other']") in error


def test_a_tool_call_the_recording_lacks_and_an_early_end_are_divergences() -> None:
    recorded = _evaluate(_agent(ScriptedModel(_script())))
    cassette = Recording([recorded], "rec").cassette("s", "c0", 0)
    cassette.begin(0)
    with pytest.raises(ReplayDiverged, match=r"invocation 0, step 1 \(tool call\): lookup\(\{\"query\": "
                       r"\"zzz\"\}\) is not among the recorded calls left "
                       r"\(lookup\(\{\"query\": \"x\"\}\)\)"):
        cassette.tool_step("lookup", {"query": "zzz"})
    live = Recording([recorded], "rec", "live").cassette("s", "c0", 0)
    live.begin(0)
    assert live.tool_step("lookup", {"query": "zzz"}) is None and live.live  # goes to the real tool
    ended = Recording([recorded], "rec").cassette("s", "c0", 0)
    ended.begin(0)
    ended.begin(1)  # the agent moved on without asking for anything
    assert ended.divergence is not None and "invocation 0, step 0 (model call): the agent ended the " \
        "invocation; the recording has 3 more step(s), next 'chat scripted'" in str(ended.divergence)


def test_a_cut_reply_and_a_case_the_recording_lacks_cannot_be_replayed() -> None:
    recorded = _evaluate(_agent(ScriptedModel(_script(answer="w " * 1500))))
    _, replayed = _replay(recorded, _agent(ScriptedModel(_script(answer="w " * 1500))))
    error = replayed.eval_case_results[0].error_message or ""
    assert "invocation 0, step 2 (model call by agent 'helper'): the recording of this reply is cut" in error
    recorded = _evaluate(_agent(ScriptedModel(_script())))
    recording = Recording([recorded], "rec")
    with replaying(recording):
        two = _evaluate(for_replay(_agent(ScriptedModel(_script())), lambda n: ScriptedModel([])), cases=2)
    assert two.eval_case_results[0].error_message is None
    assert "the recorded run rec has no run 0 of case 'c1' in eval set 's'" in (
        two.eval_case_results[1].error_message or "")


def test_a_scenario_case_replays_the_user_simulator_turns_too() -> None:
    from agenteval.schema import ConversationScenario, EvalCase, EvalSet
    from agenteval.simulation import LlmUserSimulator
    from agenteval.simulation.config import LlmBackedUserSimulatorConfig

    scenario = ConversationScenario(starting_prompt="find x", conversation_plan="x, y, stop.")
    s = EvalSet(eval_set_id="s", eval_cases=[EvalCase(eval_id="c0", conversation_scenario=scenario)])
    config = LlmBackedUserSimulatorConfig(max_allowed_invocations=5)

    def evaluate(agent: Any, user: ScriptedModel) -> EvalSetResult:
        request = EvalSetRequest(s, resolve_metrics(EvalConfig(criteria={}), None))
        return asyncio.run(run_evaluation(to_adapter(agent, lambda n: ScriptedModel([])), [request],
                                          simulator=lambda sc: LlmUserSimulator(sc, user, config)))[0]

    user = ScriptedModel(["now y, id 7b0c5d2e-1111-4a2b-9c3d-abcdefabcdef", "</finished>"])
    recorded = evaluate(_agent(ScriptedModel(_script())), user)
    assert len(user.requests) == 2
    turns = recorded.eval_case_results[0].eval_metric_result_per_invocation
    assert [t.actual_invocation.user_content.text() for t in turns] == [
        "find x", "now y, id 7b0c5d2e-1111-4a2b-9c3d-abcdefabcdef"]
    again, agent_model = ScriptedModel([]), ScriptedModel([])
    recording = Recording([recorded], "rec")
    with replaying(recording):
        replayed = evaluate(for_replay(_agent(agent_model), lambda n: ScriptedModel([])), again)
    assert again.requests == [] and agent_model.requests == [] and recording.divergences() == []
    assert [t.actual_invocation.user_content.text()
            for t in replayed.eval_case_results[0].eval_metric_result_per_invocation] == [
        "find x", "now y, id 7b0c5d2e-1111-4a2b-9c3d-abcdefabcdef"]


def test_calls_of_agents_side_by_side_are_served_in_whatever_order_they_come() -> None:
    from agenteval.schema import EvalCaseResult, EvalStatus
    from agenteval.schema.trace import Span, Trace

    def llm(span_id: str, start: float, asked: str, answer: str) -> Span:
        return Span(span_id=span_id, parent_id="i0", name="chat m", kind="llm", start=start, attributes={
            "gen_ai.input.messages": f'[{{"role": "user", "content": "{asked}"}}]',
            "gen_ai.output.messages": f'[{{"role": "assistant", "content": "{answer}"}}]'})

    trace = Trace(trace_id="0" * 32, spans=[
        Span(span_id="i0", name="invocation 0", kind="invocation", start=0.0,
             attributes={"agenteval.invocation_index": 0}),
        llm("a", 1.0, "branch a", "from a"), llm("b", 2.0, "branch b", "from b")])
    result = EvalCaseResult(eval_set_id="s", eval_id="c", final_eval_status=EvalStatus.PASSED,
                            overall_eval_metric_results=[], eval_metric_result_per_invocation=[],
                            session_id="x", trace=trace)
    cassette = Recording([EvalSetResult(eval_set_result_id="r", eval_set_id="s",
                                        eval_case_results=[result])], "rec").cassette("s", "c", 0)
    cassette.begin(0)
    first = cassette.model_step([{"role": "user", "content": "branch b"}], [])
    second = cassette.model_step([{"role": "user", "content": "branch a"}], [])
    assert first is not None and first.text == "from b" and second is not None and second.text == "from a"
    with pytest.raises(ReplayDiverged, match="a model call the recording does not have here"):
        cassette.model_step([{"role": "user", "content": "branch c"}], [])


def _side_by_side_cassette() -> Any:
    """A recorded invocation where `a_agent` and `b_agent` (branches side by side) each made a
    model call and then a `memo` tool call; `a_agent`'s come first."""
    from agenteval.schema import EvalCaseResult, EvalStatus
    from agenteval.schema.trace import Span, Trace

    def agent(span_id: str, name: str) -> Span:
        return Span(span_id=span_id, parent_id="i0", name=f"invoke_agent {name}", kind="agent", start=0.5,
                    attributes={"gen_ai.agent.name": name})

    def llm(span_id: str, parent: str, start: float, asked: str) -> Span:
        return Span(span_id=span_id, parent_id=parent, name="chat m", kind="llm", start=start, attributes={
            "gen_ai.input.messages": f'[{{"role": "user", "content": "{asked}"}}]',
            "gen_ai.output.messages": '[{"role": "assistant", "content": "ok"}]'})

    def tool(span_id: str, parent: str, start: float, arg: str) -> Span:
        return Span(span_id=span_id, parent_id=parent, name="execute_tool memo", kind="tool", start=start,
                    attributes={"gen_ai.tool.name": "memo",
                                "gen_ai.tool.call.arguments": f'{{"who": "{arg}"}}',
                                "gen_ai.tool.call.result": '{"memo": 1}'})

    trace = Trace(trace_id="0" * 32, spans=[
        Span(span_id="i0", name="invocation 0", kind="invocation", start=0.0,
             attributes={"agenteval.invocation_index": 0}),
        agent("A", "a_agent"), agent("B", "b_agent"),
        llm("a1", "A", 1.0, "question for a"), llm("b1", "B", 2.0, "question for b"),
        tool("a2", "A", 3.0, "a"), tool("b2", "B", 4.0, "b")])
    result = EvalCaseResult(eval_set_id="s", eval_id="c", final_eval_status=EvalStatus.PASSED,
                            overall_eval_metric_results=[], eval_metric_result_per_invocation=[],
                            session_id="x", trace=trace)
    cassette = Recording([EvalSetResult(eval_set_result_id="r", eval_set_id="s",
                                        eval_case_results=[result])], "rec").cassette("s", "c", 0)
    cassette.begin(0)
    return cassette


def test_a_side_by_side_model_call_that_diverges_names_its_agent_and_its_own_recorded_request() -> None:
    """`b_agent` asks something else: the divergence names `b_agent` and quotes its own recorded
    request, never `a_agent`'s (which is the first unserved model call of the invocation)."""
    cassette = _side_by_side_cassette()
    with pytest.raises(ReplayDiverged) as raised:
        cassette.model_step([{"role": "user", "content": "question for b, changed"}], [], agent="b_agent")
    said = str(raised.value)
    assert "agent 'b_agent'" in said and "question for b" in said and "question for a" not in said, said
    assert cassette.divergence is not None and cassette.divergence.agent == "b_agent"
    assert cassette.divergence.step == 1  # b_agent's recorded model call, not a_agent's (step 0)


def test_a_side_by_side_tool_call_that_diverges_names_its_agent_and_lists_its_own_recorded_calls() -> None:
    cassette = _side_by_side_cassette()
    assert cassette.model_step([{"role": "user", "content": "question for a"}], [], agent="a_agent")
    assert cassette.model_step([{"role": "user", "content": "question for b"}], [], agent="b_agent")
    with pytest.raises(ReplayDiverged) as raised:
        cassette.tool_step("memo", {"who": "b, changed"}, agent="b_agent")
    said = str(raised.value)
    assert "agent 'b_agent'" in said and 'memo({"who": "b, changed"})' in said, said
    assert '"who": "b"}' in said and '"who": "a"}' not in said, said
    assert cassette.divergence is not None and cassette.divergence.step == 3
