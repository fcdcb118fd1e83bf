"""A run records, per case run, what the agent did: the tree and its figures."""

import asyncio
import json

from agenteval.agents import Agent
from agenteval.models import ScriptedModel, ToolCallRequest
from agenteval.runner import EvalJob, Selection, Services, run
from agenteval.schema import EvalConfig
from tests.helpers import call, eval_set, inv


def roll_die(sides: int) -> int:
    """Roll a die.

    Args:
        sides: The number of sides.
    """
    if sides > 100:
        raise ValueError("too many sides")
    return 4


def _run(script: list[object], turns: list[str], traces: bool = True):  # type: ignore[no-untyped-def]
    model = ScriptedModel(script, latency=0.01)
    agent = Agent("dice", "m", tools=[roll_die])
    s = eval_set("s", {"c": [inv(t, "You rolled 4", [call("roll_die", sides=6)]) for t in turns]})
    job = EvalJob(agent=agent, selections=[Selection(None, s)], traces=traces,
                  config=EvalConfig(criteria={"tool_trajectory_avg_score": 1.0}))
    done = asyncio.run(run(job, Services.create({}, models={"m": model})))
    return done.results[0].eval_case_results[0]


def test_the_trace_holds_each_step_with_its_payloads_and_the_figures_come_from_it() -> None:
    case = _run([[ToolCallRequest("roll_die", {"sides": 6})], "You rolled 4",
                 [ToolCallRequest("roll_die", {"sides": 1000})], "Too many sides."],
                ["Roll a d6", "Roll a d1000"])
    trace = case.trace
    assert trace is not None
    kinds = [(s.kind, s.name) for s in trace.spans]
    assert kinds[0] == ("case", "case c")
    invocations = trace.invocations()
    assert [s.attributes["input.value"] for s in invocations] == ["Roll a d6", "Roll a d1000"]
    first = trace.below(invocations[0].span_id)
    assert [s.kind for s in first] == ["agent", "llm", "tool", "llm"]
    agent, llm, tool, _ = first
    assert agent.name == "invoke_agent dice" and llm.name == "chat scripted"
    assert json.loads(str(tool.attributes["gen_ai.tool.call.arguments"])) == {"sides": 6}
    assert tool.attributes["gen_ai.tool.call.result"] == json.dumps({"result": 4})
    tokens = llm.attributes["gen_ai.usage.input_tokens"]
    assert isinstance(tokens, int) and tokens > 0
    assert "Roll a d6" in str(llm.attributes["gen_ai.input.messages"])
    failed_tool = next(s for s in trace.below(invocations[1].span_id) if s.kind == "tool")
    assert failed_tool.status == "error" and "too many sides" in (failed_tool.error or "")
    assert [s.kind for s in trace.spans if s.parent_id == trace.spans[0].span_id][-1] == "scoring"
    # The invocation's figures in the document are the trace's
    actual = case.eval_metric_result_per_invocation[0].actual_invocation
    assert all(s.duration is not None for s in trace.spans)
    model_seconds = sum(s.duration or 0.0 for s in first if s.kind == "llm")  # they do not overlap here
    assert actual.model_duration == round(model_seconds, 3)
    assert actual.tool_duration == round(tool.duration or -1, 3)
    assert actual.duration == round(invocations[0].duration or -1, 3)


def test_traces_can_be_turned_off() -> None:
    case = _run([[ToolCallRequest("roll_die", {"sides": 6})], "You rolled 4"], ["Roll a d6"], traces=False)
    assert case.trace is None
    assert case.eval_metric_result_per_invocation[0].actual_invocation.duration is not None
