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


def test_efficiency_metrics_come_from_the_trace_and_judges_are_linked_to_their_spans() -> None:
    model = ScriptedModel([[ToolCallRequest("roll_die", {"sides": 6})], "You rolled 4"], latency=0.01)
    judge = ScriptedModel(lambda req: json.dumps({"rationale": "same answer", "verdict": "valid"}))
    s = eval_set("s", {"c": [inv("Roll a d6", "You rolled 4", [call("roll_die", sides=6)])]})
    config = EvalConfig(criteria={"final_response_match_v2": {
        "threshold": 0.5, "judge_model_options": {"judge_model": "j", "num_samples": 1}}})
    job = EvalJob(agent=Agent("dice", "m", tools=[roll_die]), selections=[Selection(None, s)], config=config)
    case = asyncio.run(run(job, Services.create({}, models={"m": model, "j": judge}))).results[0] \
        .eval_case_results[0]
    assert case.trace is not None
    metrics = {m.metric_name: m for m in case.overall_eval_metric_results}
    llm = [sp for sp in case.trace.spans if sp.kind == "llm"]
    assert metrics["inference_call_count_v1"].score == len(llm) == 2
    assert metrics["tool_call_count_v1"].score == 1
    tokens = sum(int(sp.attributes["gen_ai.usage.input_tokens"])
                 + int(sp.attributes["gen_ai.usage.output_tokens"]) for sp in llm)
    assert metrics["token_usage_v1"].score == tokens
    (record,) = case.judge_records
    (judge_span,) = [sp for sp in case.trace.spans if sp.kind == "judge"]
    assert record.span_id == judge_span.span_id and judge_span.name == "judge final_response_match_v2"
    assert judge_span.attributes["agenteval.verdict"] == "valid"
    assert judge_span.attributes["agenteval.invocation_index"] == 0
    scoring = next(sp for sp in case.trace.spans if sp.kind == "scoring")
    assert judge_span.parent_id == scoring.span_id


def test_a_reply_holding_a_lone_surrogate_is_traced_as_a_document_can_hold_it() -> None:
    # The reply's text is made safe in the invocation; its copies in the trace were not, and
    # writing the result failed for the whole run (a traceback, no document).
    case = _run([[ToolCallRequest("roll_die", {"sides": 6})], "You rolled \ud800 4"], ["Roll \udc00 a d6"])
    trace = case.trace
    assert trace is not None
    texts = [str(v) for s in trace.spans for v in s.attributes.values()]
    assert any("\ufffd" in t for t in texts)
    assert not any(0xD800 <= ord(c) <= 0xDFFF for t in texts for c in t)
    case.model_dump_json()  # writable, with its trace
    assert any("unpaired surrogate" in w for w in case.warnings)
