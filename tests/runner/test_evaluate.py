import asyncio
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from agenteval.agents import Agent, BuiltinAdapter, CallableAdapter
from agenteval.criteria import resolve_metrics
from agenteval.models import ScriptedModel, ToolCallRequest
from agenteval.runner import EvalSetRequest, run_evaluation
from agenteval.runner.driver import Journaled, Sinks, Written
from agenteval.runner.durable import Finished
from agenteval.schema import ConversationScenario, EvalCase, EvalConfig, EvalSet, EvalStatus, SessionInput
from agenteval.schema.run import RunSpec
from agenteval.simulation import LlmBackedUserSimulatorConfig, LlmUserSimulator
from agenteval.store import kept_copy
from agenteval.store.db import RunStore
from agenteval.store.journal import Journal
from tests.helpers import call, eval_set, inv

METRICS = resolve_metrics(EvalConfig(criteria={"tool_trajectory_avg_score": 1.0}))


def echo(text: str, state: dict[str, Any]) -> dict[str, Any]:
    if text == "boom":
        raise RuntimeError("agent exploded")
    state["seen"] = [*state.get("seen", []), text]
    return {"response": f"echo {text}", "tool_calls": [{"name": "echo", "args": {"t": text}, "response": 1}]}


def test_runs_cases_and_runs_in_order_records_errors_and_goes_on() -> None:
    s = eval_set("s", {
        "ok": [inv("a", calls=[call("echo", t="a")]), inv("b", calls=[call("echo", t="b")])],
        "bad": [inv("boom")],
        "wrong": [inv("c", calls=[call("other")])],
    })
    s.eval_cases[0].session_input = SessionInput(app_name="app", user_id="u", state={"seen": ["x"]})
    (result,) = asyncio.run(run_evaluation(CallableAdapter(echo), [EvalSetRequest(s, METRICS)], num_runs=2,
                                           parallelism=3))
    got = [(c.eval_id, c.run_index, c.final_eval_status) for c in result.eval_case_results]
    assert got == [("ok", 0, EvalStatus.PASSED), ("ok", 1, EvalStatus.PASSED),
                   ("bad", 0, EvalStatus.FAILED), ("bad", 1, EvalStatus.FAILED),
                   ("wrong", 0, EvalStatus.FAILED), ("wrong", 1, EvalStatus.FAILED)]
    ok = result.eval_case_results[0]
    assert ok.session_details is not None and ok.session_details["state"] == {"seen": ["x", "a", "b"]}
    assert ok.user_id == "u" and ok.session_id != result.eval_case_results[1].session_id
    assert s.eval_cases[0].session_input.state == {"seen": ["x"]}  # each run gets a fresh copy
    bad = result.eval_case_results[2]
    assert bad.error_message is not None and bad.error_message.startswith("RuntimeError: agent exploded")
    per = ok.eval_metric_result_per_invocation[0]
    assert per.actual_invocation.duration is not None
    assert per.expected_invocation is not None and per.expected_invocation.user_content.text() == "a"


def test_cases_proceed_in_parallel_under_the_limit() -> None:
    model = ScriptedModel(lambda req: "hi", latency=0.2)
    agent = Agent("a", model)
    s = eval_set("s", {f"c{i}": [inv("x", calls=[])] for i in range(8)})
    started = asyncio.run(_timed(run_evaluation(BuiltinAdapter(agent, model), [EvalSetRequest(s, METRICS)],
                                                parallelism=4)))
    assert model.max_in_flight == 4
    assert started < 8 * 0.2  # serial would take 1.6 s


async def _timed(coro: Any) -> float:
    import time

    t = time.perf_counter()
    await coro
    return time.perf_counter() - t


def test_scenario_cases_are_simulated_until_stop_signal() -> None:
    user_model = ScriptedModel(["Now roll a d20", "</finished>"])
    agent_model = ScriptedModel([[ToolCallRequest("roll", {"sides": 6})], "rolled 3", "rolled 17"])

    def roll(sides: int) -> int:
        """Roll."""
        return 3

    scenario = ConversationScenario(starting_prompt="Roll a d6", conversation_plan="Roll a d6 then a d20.")
    s = EvalSet(eval_set_id="sim", eval_cases=[EvalCase(eval_id="sc", conversation_scenario=scenario)])
    config = LlmBackedUserSimulatorConfig()
    (result,) = asyncio.run(run_evaluation(
        BuiltinAdapter(Agent("a", agent_model, tools=[roll]), agent_model),
        [EvalSetRequest(s, resolve_metrics(EvalConfig(criteria={})))],
        simulator=lambda sc: LlmUserSimulator(sc, user_model, config)))
    (case,) = result.eval_case_results
    prompts = [p.actual_invocation.user_content.text() for p in case.eval_metric_result_per_invocation]
    assert prompts == ["Roll a d6", "Now roll a d20"]
    system, turn = user_model.requests[0].messages
    assert system.role == "system" and "Roll a d6 then a d20." in system.content
    assert turn.role == "user" and "agent: rolled 3" in turn.content
    # The second turn's prompt begins with the first's up to the end of its conversation (so
    # an engine's prompt cache serves it), and the system message is the same.
    second = user_model.requests[1].messages
    assert second[0] == system
    assert second[1].content.startswith(turn.content.rsplit("\n\n", 1)[0])


def test_custom_simulator_instructions_are_one_user_message() -> None:
    """ADK's form: `custom_instructions` filled in (either placeholder style) as one user message."""
    scenario = ConversationScenario(starting_prompt="hi", conversation_plan="Say hi.")
    config = LlmBackedUserSimulatorConfig(
        custom_instructions="Plan: {{ conversation_plan }}\nSo far: {conversation_history}\n"
                            "{x} {{stop_signal}}")
    simulator = LlmUserSimulator(scenario, ScriptedModel([]), config)
    simulator.record("user", "hi")
    (message,) = simulator.messages()
    assert message.role == "user"
    assert message.content == "Plan: Say hi.\nSo far: user: hi\n{x} </finished>"


def test_scenario_without_simulator_is_a_case_error() -> None:
    scenario = ConversationScenario(starting_prompt="hi", conversation_plan="p")
    s = EvalSet(eval_set_id="sim", eval_cases=[EvalCase(eval_id="sc", conversation_scenario=scenario)])
    (result,) = asyncio.run(run_evaluation(CallableAdapter(echo), [EvalSetRequest(s, METRICS)]))
    assert "needs a user simulator" in (result.eval_case_results[0].error_message or "")


def test_bad_settings() -> None:
    with pytest.raises(ValueError):
        asyncio.run(run_evaluation(CallableAdapter(echo), [], num_runs=0))


@pytest.mark.parametrize("include", [False, True])
def test_the_simulated_user_reads_the_agents_tool_calls_when_configured(include: bool) -> None:
    # `include_function_calls` was accepted and ignored: the simulator never saw a tool call.
    user_model = ScriptedModel(["</finished>"])
    agent_model = ScriptedModel([[ToolCallRequest("roll", {"sides": 6})], "rolled 3"])

    def roll(sides: int) -> int:
        """Roll."""
        return 3

    scenario = ConversationScenario(starting_prompt="Roll a d6", conversation_plan="Roll a d6.")
    s = EvalSet(eval_set_id="sim", eval_cases=[EvalCase(eval_id="sc", conversation_scenario=scenario)])
    config = LlmBackedUserSimulatorConfig(include_function_calls=include)
    asyncio.run(run_evaluation(
        BuiltinAdapter(Agent("a", agent_model, tools=[roll]), agent_model),
        [EvalSetRequest(s, resolve_metrics(EvalConfig(criteria={})))],
        simulator=lambda sc: LlmUserSimulator(sc, user_model, config)))
    _, turn = user_model.requests[0].messages
    calls = 'agent: [calls roll({"sides": 6})]\ntool: [roll returned {"result": 3}]\n'
    assert (calls + "agent: rolled 3" in turn.content) == include
    assert "agent: rolled 3" in turn.content


def test_a_conversation_cut_at_the_turn_limit_says_so() -> None:
    # It passed as if the simulated user had ended it: nothing said the plan was left unfinished.
    user_model = ScriptedModel(lambda req: "and one more thing")
    scenario = ConversationScenario(starting_prompt="hi", conversation_plan="Chat forever.")
    s = EvalSet(eval_set_id="sim", eval_cases=[EvalCase(eval_id="sc", conversation_scenario=scenario)])
    config = LlmBackedUserSimulatorConfig(max_allowed_invocations=3)
    no_criteria = [EvalSetRequest(s, resolve_metrics(EvalConfig(criteria={})))]
    (result,) = asyncio.run(run_evaluation(CallableAdapter(lambda text: f"echo {text}"), no_criteria,
                                           simulator=lambda sc: LlmUserSimulator(sc, user_model, config)))
    (case,) = result.eval_case_results
    assert len(case.eval_metric_result_per_invocation) == 3
    assert case.warnings == ["the conversation reached the user simulator's turn limit "
                             "(max_allowed_invocations: 3) before the simulated user said it was done"]
    done = ScriptedModel(["</finished>"])
    (result,) = asyncio.run(run_evaluation(CallableAdapter(lambda text: f"echo {text}"), no_criteria,
                                           simulator=lambda sc: LlmUserSimulator(sc, done, config)))
    assert result.eval_case_results[0].warnings == []


def _copies_alive() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "agenteval-history-copy"]


def test_a_journaled_run_never_recorded_leaves_no_stage_thread_polling_its_journal(tmp_path: Path) -> None:
    """A library run with a journal and a history stages its told cases as it goes
    (`store.kept_copy`); nobody records it here, yet once it returns its stage thread stages the
    rest and ends (it used to poll the journal, a connection each pause, until the process
    exited), and the stage is there for a recording or a resume."""
    s = eval_set("s", {f"c{i}": [inv(f"q{i}", calls=[call("echo", t=f"q{i}")])] for i in range(6)})
    journal = Journal(tmp_path)
    spec = RunSpec(run_id="20260101-000000-aaaaaa", command="eval")
    sink = Sinks([Journaled(journal, "{}", 6)])
    sink.on_start(spec, 6)
    before = len(_copies_alive())
    (doc,) = asyncio.run(run_evaluation(CallableAdapter(echo), [EvalSetRequest(s, METRICS)], num_runs=1,
                                        parallelism=2, sink=sink, finished=Finished(journal, spec.run_id),
                                        documents=lambda shell: Written([tmp_path / "doc.json"], shell),
                                        end=lambda: journal.flush(spec.run_id)))  # (as `runner.run`'s)
    deadline = time.monotonic() + 30  # (a bound, not a timing: it ends at once when it ends at all)
    while len(_copies_alive()) > before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(_copies_alive()) == before and not kept_copy._copies
    assert RunStore(tmp_path).staged_document(spec.run_id, "s") == doc.eval_set_result_id
    with closing(sqlite3.connect(RunStore(tmp_path).path)) as conn:  # every case staged, unseen
        assert conn.execute("SELECT count(*) FROM cases").fetchone() == (6,)
        assert conn.execute("SELECT count(*) FROM runs").fetchone() == (0,)
    journal.close()
