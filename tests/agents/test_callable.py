"""A plain callable's reply: what it reports is checked, a mistake fails its case with a message
that says what the callable returned wrong."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agenteval.agents.callable import CallableAdapter
from agenteval.runner import infer_case
from agenteval.schema import Content, EvalCase, Invocation


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
