"""A deterministic ADK agent with volatile tools, for `mock_tools` tests and `bench/bench_mock_tools.py`.

The model (`VolatileLlm`, a scripted `BaseLlm`) decides from the request alone, so the same
tool results always give the same reply: a turn asking for a ticket calls `get_time`,
`new_ticket_id` and `random_quote(topic=...)` at once; another asks for a quote only; once the
turn's tool responses are in the request, it replies with their values. The tools themselves
return the clock, a uuid and a random choice, and count their calls in `CALLS`.
"""

from __future__ import annotations

import random
import uuid
from collections import Counter
from collections.abc import AsyncGenerator
from datetime import datetime
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.genai import types

from agenteval.schema import (
    Content,
    EvalCase,
    EvalSet,
    FunctionCall,
    FunctionResponse,
    Invocation,
    InvocationEvent,
    InvocationEvents,
    Part,
)

CALLS: Counter[str] = Counter()
QUOTES = {
    "courage": ["Fortune favours the bold.", "Courage is grace under pressure.",
                "Do one thing every day that scares you."],
    "patience": ["Patience is bitter, but its fruit is sweet.", "Slow and steady wins the race.",
                 "Rivers know this: there is no hurry."],
}


def get_time() -> str:
    """The current time, ISO 8601."""
    CALLS["get_time"] += 1
    return datetime.now().isoformat(timespec="microseconds")


def new_ticket_id() -> str:
    """A fresh ticket id."""
    CALLS["new_ticket_id"] += 1
    return uuid.uuid4().hex[:8]


def random_quote(topic: str) -> str:
    """A random quote on a topic.

    Args:
        topic: courage or patience.
    """
    CALLS["random_quote"] += 1
    return random.choice(QUOTES.get(topic, ["No quote."]))


def _topic(text: str) -> str:
    return "patience" if "patience" in text.lower() else "courage"


def _result(response: Any) -> str:
    value = response.get("result", response) if isinstance(response, dict) else response
    return str(value)


class VolatileLlm(BaseLlm):
    """Calls the tools a turn needs, then answers with their results (see the module docstring)."""

    model: str = "volatile-scripted"

    async def generate_content_async(self, llm_request: LlmRequest,
                                     stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        contents = list(llm_request.contents or [])
        start = max(i for i, c in enumerate(contents)
                    if c.role == "user" and any(p.text for p in c.parts or []))
        text = "".join(p.text or "" for p in contents[start].parts or [])
        results = {p.function_response.name: _result(p.function_response.response)
                   for c in contents[start + 1:] for p in c.parts or [] if p.function_response}
        prompt = 10 * len(contents)
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=prompt, candidates_token_count=7, total_token_count=prompt + 7)
        if not results:
            calls = [("random_quote", {"topic": _topic(text)})]
            if "ticket" in text.lower():
                calls = [("get_time", {}), ("new_ticket_id", {}), *calls]
            parts = [types.Part(function_call=types.FunctionCall(name=n, args=a)) for n, a in calls]
        elif "new_ticket_id" in results:
            parts = [types.Part(text=f"Ticket {results['new_ticket_id']} opened at "
                                     f"{results['get_time']}. {results['random_quote']}")]
        else:
            parts = [types.Part(text=f"Here is one: {results['random_quote']}")]
        yield LlmResponse(content=types.Content(role="model", parts=parts), usage_metadata=usage,
                          model_version=self.model)


def agent(instruction: str = "Open tickets, share quotes.") -> LlmAgent:
    """The volatile agent (a new one each time: ADK agents belong to one parent)."""
    return LlmAgent(name="helpdesk", model=VolatileLlm(), instruction=instruction,
                    tools=[get_time, new_ticket_id, random_quote])


def _turn(user: str, reply: str, calls: list[tuple[str, dict[str, Any], str]]) -> Invocation:
    ids = [f"exp-{i}" for i in range(len(calls))]
    events = [InvocationEvent(author="helpdesk", content=Content(role="model", parts=[
        Part(function_call=FunctionCall(id=i, name=n, args=a))
        for i, (n, a, _) in zip(ids, calls, strict=True)]))]
    events.append(InvocationEvent(author="helpdesk", content=Content(role="user", parts=[
        Part(function_response=FunctionResponse(id=i, name=n, response={"result": r}))
        for i, (n, _, r) in zip(ids, calls, strict=True)])))
    return Invocation(user_content=Content.from_text(user, role="user"),
                      final_response=Content.from_text(reply),
                      intermediate_data=InvocationEvents(invocation_events=events))


def eval_set() -> EvalSet:
    """Two cases recorded on one morning: a ticket then a quote, and a quote alone."""
    quote = "Patience is bitter, but its fruit is sweet."
    ticket = _turn("Open a ticket and give me a quote about courage.",
                   "Ticket 3f9a2c1d opened at 2026-01-05T09:30:00.000000. Fortune favours the bold.",
                   [("get_time", {}, "2026-01-05T09:30:00.000000"),
                    ("new_ticket_id", {}, "3f9a2c1d"),
                    ("random_quote", {"topic": "courage"}, "Fortune favours the bold.")])
    again = _turn("And one about patience?", f"Here is one: {quote}",
                  [("random_quote", {"topic": "patience"}, quote)])
    return EvalSet(eval_set_id="volatile", eval_cases=[
        EvalCase(eval_id="ticket_then_quote", conversation=[ticket, again]),
        EvalCase(eval_id="quote_only", conversation=[again.model_copy(deep=True)]),
    ])
