"""An ADK agent (no model) whose every turn is scripted per run, for the AgentEvaluator
differential test: `SCRIPT[prompt][k]` is what the agent does the k-th time it hears `prompt`
(its tool calls, each answered, then its final text), so run k of a case gets the k-th entry of
each of its turns when runs go one after another."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.genai import types

SCRIPT: dict[str, list[dict[str, Any]]] = {}
HEARD: dict[str, int] = {}


class ScriptedRuns(BaseAgent):
    """Plays `SCRIPT`, counting in `HEARD` how often each prompt was heard."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        parts = ctx.user_content.parts if ctx.user_content and ctx.user_content.parts else []
        prompt = "".join(p.text or "" for p in parts)
        k = HEARD.get(prompt, 0)
        HEARD[prompt] = k + 1
        turn = SCRIPT[prompt][k % len(SCRIPT[prompt])]
        for name, args in turn["calls"]:
            call = types.Part(function_call=types.FunctionCall(name=name, args=args))
            yield Event(author=self.name, invocation_id=ctx.invocation_id,
                        content=types.Content(role="model", parts=[call]))
            reply = types.Part(function_response=types.FunctionResponse(name=name, response={"ok": True}))
            yield Event(author=self.name, invocation_id=ctx.invocation_id,
                        content=types.Content(role="user", parts=[reply]))
        yield Event(author=self.name, invocation_id=ctx.invocation_id,
                    content=types.Content(role="model", parts=[types.Part(text=turn["text"])]))


root_agent = ScriptedRuns(name="scripted_runs")
agent = __import__("sys").modules[__name__]  # ADK's AgentEvaluator looks for `<module>.agent.root_agent`
