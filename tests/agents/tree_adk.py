"""An ADK agent tree for the replay and `mock_tools` tests (no network): `triage_agent` calls
`lookup`, asks `research_agent` through an `AgentTool` (which calls `lookup` too) and hands off to
`booking_agent` (`transfer_to_agent`), which books; then a `LoopAgent` whose one agent ends it
with `exit_loop`. The models reply by the state of the request, so a fresh app replays; the
tools count their calls in `CALLS`."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent, LoopAgent, SequentialAgent
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.tools import exit_loop
from google.adk.tools.agent_tool import AgentTool
from google.genai import types

from agenteval.schema import EvalCase, EvalSet, Invocation
from agenteval.schema.content import Content

CALLS: Counter[str] = Counter()
_SERIAL = iter(range(10**9))


def lookup(city: str) -> dict[str, Any]:
    """Looks a city up."""
    CALLS["lookup"] += 1
    return {"city": city, "serial": next(_SERIAL)}  # differs on every call, as a live service's


def book(city: str) -> dict[str, Any]:
    """Books a table."""
    CALLS["book"] += 1
    return {"booked": city, "ref": next(_SERIAL)}


def asks(name: str, **args: Any) -> LlmResponse:
    part = types.Part(function_call=types.FunctionCall(name=name, args=args))
    return LlmResponse(content=types.Content(role="model", parts=[part]))


def says(text: str) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


class StepLlm(BaseLlm):
    """Replies with `script[n]`, n the function responses since the request's last user text."""

    model: str = "step"
    script: list[LlmResponse]

    async def generate_content_async(self, llm_request: LlmRequest,
                                     stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        n = 0
        for content in llm_request.contents:
            for part in content.parts or []:
                if part.text and content.role == "user":
                    n = 0
                n += part.function_response is not None
        yield self.script[min(n, len(self.script) - 1)]


def app() -> SequentialAgent:
    """A fresh tree (ADK agents have one parent each)."""
    research = LlmAgent(name="research_agent", tools=[lookup],
                        model=StepLlm(script=[asks("lookup", city="Rome"), says("Rome ok")]))
    booking = LlmAgent(name="booking_agent", tools=[book],
                       model=StepLlm(script=[asks("book", city="Paris"), says("Booked Paris.")]))
    triage = LlmAgent(name="triage_agent", tools=[lookup, AgentTool(research)], sub_agents=[booking],
                      model=StepLlm(script=[asks("lookup", city="Paris"),
                                            asks("research_agent", request="Rome"),
                                            asks("transfer_to_agent", agent_name="booking_agent")]))
    closer = LlmAgent(name="closer_agent", tools=[exit_loop],
                      model=StepLlm(script=[asks("exit_loop"), says("Closed.")]))
    return SequentialAgent(name="desk", sub_agents=[triage, LoopAgent(name="closing", sub_agents=[closer],
                                                                           max_iterations=3)])


def eval_set() -> EvalSet:
    """One case of one turn, without expectations (record them with a live run)."""
    turn = Invocation(invocation_id="i0", user_content=Content.from_text("Book Paris.", role="user"))
    return EvalSet(eval_set_id="tree", eval_cases=[EvalCase(eval_id="book", conversation=[turn])])
