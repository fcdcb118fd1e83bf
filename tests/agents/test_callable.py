"""A plain callable's reply: what it reports is checked, a mistake fails its case with a message
that says what the callable returned wrong."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agenteval.agents.base import TurnResult
from agenteval.agents.callable import CallableAdapter
from agenteval.reporting.agent_tree import case_agents, multi_agent
from agenteval.runner import EvalJob, Selection, Services, infer_case, run
from agenteval.schema import (
    Content,
    EvalCase,
    EvalConfig,
    FunctionCall,
    FunctionResponse,
    Invocation,
    InvocationEvent,
    Part,
)
from tests.helpers import eval_set, inv


def _error(reply: Any) -> str | None:
    case = EvalCase(eval_id="c", conversation=[Invocation(user_content=Content.from_text("hi"))])
    run = asyncio.run(infer_case(CallableAdapter(lambda text: reply, "agent"), case, "s", 0))
    return run.error_message


@pytest.mark.parametrize(("reply", "message"), [
    ({"response": "x", "tool_calls": "nope"},
     "TypeError: the agent's reply: tool_calls: expected a list of calls, got str"),
    ({"response": "x", "tool_calls": [{"name": "a"}, "b"]},
     "TypeError: the agent's reply: tool_calls[1]: expected a call {name, args, response?}, got str"),
    ({"response": "x", "tool_calls": [{"args": {}}]},
     "TypeError: the agent's reply: tool_calls[0].name: expected the tool's name (a string), got nothing"),
    ({"response": "x", "tool_calls": [{"name": 3}]},
     "TypeError: the agent's reply: tool_calls[0].name: expected the tool's name (a string), got int"),
    ({"response": "x", "tool_calls": [{"name": "a", "args": [1]}]},
     "TypeError: the agent's reply: tool_calls[0].args: expected an object, got list"),
    ({"answer": "x"},  # not an empty answer
     "TypeError: the agent's reply: response: expected the answer (a string), got nothing "
     "(its keys: answer)"),
    ({"response": None, "tool_calls": []},
     "TypeError: the agent's reply: response: expected the answer (a string), got nothing"),
])
def test_a_malformed_tool_call_report_fails_the_case_saying_what_is_wrong(reply: Any, message: str) -> None:
    error = _error(reply)
    assert error is not None and error.startswith(message), error
    assert "\n" not in error


def test_a_well_formed_reply_is_taken() -> None:
    assert _error({"response": "x", "tool_calls": [{"name": "a", "args": {"k": 1}, "response": 2}]}) is None
    assert _error({"response": "x"}) is None


def _two_agent_reply(text: str) -> TurnResult:
    """A planner that hands a booker the table to book (authors as an agent tree records them)."""
    def said(author: str, part: Part, role: str = "model") -> InvocationEvent:
        return InvocationEvent(author=author, content=Content(role=role, parts=[part]))

    return TurnResult(final_response=Content.from_text("Booked."), events=[
        said("planner", Part(function_call=FunctionCall(id="1", name="find_table", args={"city": "Paris"}))),
        said("planner", Part(function_response=FunctionResponse(id="1", name="find_table",
                                                                response={"table": 4})), "user"),
        said("planner", Part(function_call=FunctionCall(id="2", name="transfer_to_agent",
                                                        args={"agent_name": "booker"}))),
        said("booker", Part(function_call=FunctionCall(id="3", name="book", args={"table": 4}))),
        said("booker", Part(text="Booked table 4.")),
    ])


def test_a_callables_authored_events_are_its_agent_tree_in_the_trace() -> None:
    s = eval_set("s", {"c": [inv("Book Paris", "Booked.")]})
    job = EvalJob(agent=CallableAdapter(_two_agent_reply, "app"), selections=[Selection(None, s)],
                  config=EvalConfig(criteria={"tool_trajectory_avg_score": 1.0}))
    case = asyncio.run(run(job, Services.create({}))).results[0].eval_case_results[0]
    (turn,) = case_agents(case)
    (app,) = turn.roots
    assert app.agent == "app" and [k.agent for k in app.children] == ["planner"]
    (planner,) = app.children
    assert planner.tools == [("find_table", 1), ("transfer_to_agent", 1)]
    (booker,) = planner.children
    assert (booker.agent, booker.via, booker.tools) == ("booker", "handoff", [("book", 1)])
    assert booker.figures.duration is None  # reported after the fact: no time of its own
    assert multi_agent([turn])


class _AsyncCallable:
    async def __call__(self, text: str, state: dict[str, Any]) -> str:
        state["seen"] = text
        return "async " + text


def _reply(fn: Any) -> tuple[str | None, str | None]:
    case = EvalCase(eval_id="c", conversation=[Invocation(user_content=Content.from_text("hi"))])
    done = asyncio.run(infer_case(CallableAdapter(fn, "agent"), case, "s", 0))
    final = done.actual[0].final_response if done.actual else None
    return (final.text() if final else None), done.error_message


def _sync_wrapper(text: str) -> Any:
    async def inner() -> str:
        return "awaited " + text
    return inner()


def _keywords(text: str, **options: Any) -> str:
    return "kw " + text


@pytest.mark.parametrize(("fn", "reply"), [
    # Each failed its case: "returned coroutine" (twice), "takes 1 positional argument but 2 were given".
    (_AsyncCallable(), "async hi"),
    (_sync_wrapper, "awaited hi"),
    (_keywords, "kw hi"),
])
def test_every_kind_of_callable_the_docs_allow_is_run(fn: Any, reply: str) -> None:
    assert _reply(fn) == (reply, None)


def _none_reply(text: str) -> None:
    return None


def test_a_wrong_reply_is_placed_at_the_callable_not_in_agenteval() -> None:
    # It ended "(at .../agenteval/agents/callable.py:69)", agenteval's line, not the agent's.
    _, error = _reply(_none_reply)
    line = _none_reply.__code__.co_firstlineno
    assert error == ("TypeError: an agent callable returned NoneType; expected str, dict or "
                     f"TurnResult ({__file__}:{line})")
