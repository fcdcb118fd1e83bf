"""The built-in tool-calling agent: a model, an instruction and Python functions as tools.

The tool loop suits small local models as well as hosted ones. Tools are declared to the model
(backends parse native tool calls, or JSON calls written as text), and each round's tool results
go back to the model as a plain user message rather than `role: tool` messages: small models such
as the embedded Qwen tend to repeat a call when fed `role: tool` messages with tools still
declared, while a plain-text result makes them answer. The loop is bounded, and a call repeated
verbatim within a turn ends the loop with one last request made without tools.

Streaming: a turn sent inside `models.base.streaming_to(on_chunk)` streams its replies' text to
`on_chunk` as the model writes it (where the backend streams). A reply that starts like a
written tool call (`{`, `[`, a fence or a tag) is held back, so the calls' JSON is never shown as
a reply (a call written after some prose is streamed with it; the turn's steps then show it
as the call it is). Tools run outside the stream. With
`mock_tools`, each call is first offered to the session's tool server (`agents.mock_tools`):
a served call gets the eval set's response and the tool does not run.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agenteval.agents.base import SessionSpec, TurnResult
from agenteval.agents.tools import Tool, as_response
from agenteval.models.base import (
    LLM,
    Message,
    ModelRequest,
    ModelResponse,
    OnChunk,
    ToolCallRequest,
    chunk_listener,
    generate_streaming,
    streaming_to,
)
from agenteval.schema import (
    AgentDetails,
    AppDetails,
    Content,
    FunctionCall,
    FunctionResponse,
    InvocationEvent,
    Part,
    UsageMetadata,
)
from agenteval.tracing.genai import agent_step, model_call, model_reply, tool_call, tool_result

_CALL_FORMAT = (
    "To use tools, reply with only a JSON object and nothing else:\n"
    '{"tool_calls": [{"name": "<tool name>", "arguments": {<arguments>}}]}\n'
    "You may list several calls. When you have what you need, reply to the user in plain text."
)


class _ProseOnly:
    """Passes a reply's chunks on unless the reply starts like a written tool call, which is
    held back whole (decided at its first character that is not white space)."""

    _CALL_STARTS = ("{", "[", "`", "<")

    def __init__(self, on_chunk: OnChunk) -> None:
        self.on_chunk = on_chunk
        self._held: list[str] = []
        self._prose: bool | None = None  # None: undecided yet

    def __call__(self, text: str) -> None:
        if self._prose is None:
            self._held.append(text)
            start = "".join(self._held).lstrip()
            if not start:
                return
            self._prose = not start.startswith(self._CALL_STARTS)
            if self._prose:
                self.on_chunk("".join(self._held))
            self._held.clear()
        elif self._prose:
            self.on_chunk(text)


def _render_instruction(instruction: str, state: dict[str, Any]) -> str:
    """Fills `{key}` placeholders from session state; unknown placeholders stay as written."""
    return re.sub(r"\{(\w+)\}", lambda m: str(state.get(m.group(1), m.group(0))), instruction)


@dataclass
class Agent:
    """A tool-calling agent.

    `model` is an LLM or a model string resolved by the runner (e.g. `local`); `tools` are
    Python functions, sync or async, whose schemas come from their signatures and docstrings.
    """

    name: str
    model: LLM | str
    instruction: str = ""
    tools: Sequence[Callable[..., Any]] = ()
    description: str = ""
    max_tool_rounds: int = 5
    temperature: float = 0.0
    max_tokens: int = 512
    _tools: dict[str, Tool] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._tools = {t.name: t for t in map(Tool, self.tools)}


class BuiltinSession:
    """A conversation with a built-in Agent over a resolved model."""

    def __init__(self, agent: Agent, model: LLM, spec: SessionSpec) -> None:
        self.agent = agent
        self.model = model
        self._state = spec.state
        self._history: list[Message] = []
        self._call_ids = 0
        self._server = spec.tools

    def state(self) -> dict[str, Any]:
        return self._state

    async def close(self) -> None:
        return None

    def _system(self) -> Message:
        agent = self.agent
        text = _render_instruction(agent.instruction, self._state)
        if agent._tools:
            catalogue = "\n".join(
                f"- {t.name}: {t.spec.description} Parameters (JSON schema): "
                f"{json.dumps(t.spec.parameters.get('properties', {}))}"
                for t in agent._tools.values())
            text = f"{text}\n\nTools:\n{catalogue}\n\n{_CALL_FORMAT}"
        return Message("system", text)

    async def _generate(self, messages: list[Message], with_tools: bool) -> tuple[ModelResponse, float]:
        started = time.perf_counter()
        tools = tuple(t.spec for t in self.agent._tools.values()) if with_tools else ()
        # The system message (instruction and tool catalogue) is the same in every call of a
        # turn: the trace keeps it once per turn, on the agent step, not on every model call.
        listener = chunk_listener()
        request = ModelRequest(messages=tuple(messages), tools=tools, temperature=self.agent.temperature,
                               max_tokens=self.agent.max_tokens)
        with model_call(self.model.name, [{"role": m.role, "content": m.content} for m in messages
                                          if m.role != "system"],
                        [t.name for t in tools]) as recorded:
            if listener is None:
                response = await self.model.generate(request)
            else:  # a backend that does not stream gives its text as one piece
                response = await generate_streaming(
                    self.model, request, _ProseOnly(listener) if tools else listener)
            generation = response.generations[0]
            usage = response.usage
            model_reply(recorded, model=response.model or self.model.name, text=generation.text,
                        tool_calls=[{"name": c.name, "arguments": c.args} for c in generation.tool_calls],
                        input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens,
                        cached_tokens=usage.cached_tokens)
        return response, time.perf_counter() - started

    def _event(self, response: ModelResponse, parts: list[Part] | None) -> InvocationEvent:
        usage = response.usage
        return InvocationEvent(
            author=self.agent.name,
            content=Content(role="model", parts=parts) if parts else None,
            usage_metadata=UsageMetadata(
                prompt_token_count=usage.prompt_tokens,
                candidates_token_count=usage.completion_tokens,
                total_token_count=usage.prompt_tokens + usage.completion_tokens,
                cached_content_token_count=usage.cached_tokens or None,
            ),
            model_version=response.model or self.model.name,
        )

    async def _run_tool(self, call: ToolCallRequest, call_id: str) -> dict[str, Any]:
        # A tool's own model calls are not the agent's reply: not streamed.
        with tool_call(call.name, call_id, call.args) as recorded, streaming_to(None):
            tool = self.agent._tools.get(call.name)
            error = None
            # Outside the try below: a strict refusal ends the case, the model never sees it.
            served = (self._server.serve(call.name, call.args, call_id)
                      if self._server is not None else None)
            if recorded is not None and self._server is not None:
                recorded.set("agenteval.served", "live" if served is None else "expected")
            if served is not None:
                result: dict[str, Any] = served
            elif tool is None:
                error = f"unknown tool {call.name!r}"
                result = {"error": error}
            else:
                try:
                    result = as_response(await tool.call(call.args, self._state))
                except Exception as e:  # the model sees the tool's error and may recover
                    error = f"{type(e).__name__}: {e}"
                    result = {"error": error}
            tool_result(recorded, result, error)
            return result

    async def send(self, message: Content) -> TurnResult:
        with agent_step(self.agent.name, message.text()) as recorded:
            if recorded is not None:
                recorded.set("gen_ai.system_instructions", self._system().content)
            result = await self._send(message)
            if recorded is not None:
                recorded.set("output.value", result.final_response.text() if result.final_response else "")
            return result

    async def _send(self, message: Content) -> TurnResult:
        user_text = message.text()
        turn: list[Message] = [Message("user", user_text)]
        events: list[InvocationEvent] = []
        model_s = tool_s = 0.0
        seen: set[str] = set()
        final_text = ""
        for round_index in range(self.agent.max_tool_rounds + 1):
            allow_tools = bool(self.agent._tools) and round_index < self.agent.max_tool_rounds
            response, took = await self._generate([self._system(), *self._history, *turn], allow_tools)
            model_s += took
            generation = response.generations[0]
            calls = list(generation.tool_calls) if allow_tools else []
            keys = [json.dumps([c.name, c.args], sort_keys=True, default=str) for c in calls]
            if not calls or all(k in seen for k in keys):
                if calls:  # the model is looping on a call it already made: ask for the answer
                    turn.append(Message("user", "You already have these tool results. "
                                                "Answer the user now in plain text."))
                    response, took = await self._generate([self._system(), *self._history, *turn], False)
                    model_s += took
                    generation = response.generations[0]
                final_text = generation.text.strip()
                events.append(self._event(response, None))
                break
            seen.update(keys)
            ids = []
            for _ in calls:
                self._call_ids += 1
                ids.append(f"call_{self._call_ids}")
            parts = [Part(text=generation.text)] if generation.text.strip() and not calls else []
            parts += [Part(function_call=FunctionCall(id=i, name=c.name, args=dict(c.args)))
                      for i, c in zip(ids, calls, strict=True)]
            events.append(self._event(response, parts))
            started = time.perf_counter()
            results = [await self._run_tool(c, i) for c, i in zip(calls, ids, strict=True)]
            tool_s += time.perf_counter() - started
            events.append(InvocationEvent(author=self.agent.name, content=Content(role="user", parts=[
                Part(function_response=FunctionResponse(id=i, name=c.name, response=r))
                for i, c, r in zip(ids, calls, results, strict=True)])))
            turn.append(Message("assistant", json.dumps(
                {"tool_calls": [{"name": c.name, "arguments": c.args} for c in calls]})))
            feedback = "\n".join(f"Tool {c.name} returned: {json.dumps(r)}"
                                 for c, r in zip(calls, results, strict=True))
            turn.append(Message("user", f"{feedback}\nUse these results to answer my request "
                                        f"({user_text!r}), or call another tool if still needed."))
        self._history += [Message("user", user_text), *turn[1:], Message("assistant", final_text)]
        return TurnResult(
            final_response=Content(role="model", parts=[Part(text=final_text)]),
            events=events, model_seconds=model_s, tool_seconds=tool_s,
            app_details=AppDetails(agent_details={self.agent.name: AgentDetails(
                name=self.agent.name, instructions=self.agent.instruction,
                tool_declarations=[{"name": t.name, "description": t.spec.description,
                                    "parameters": t.spec.parameters}
                                   for t in self.agent._tools.values()])}),
        )


class BuiltinAdapter:
    """Adapts an `Agent` to the runner's protocol, with its model already resolved."""

    def __init__(self, agent: Agent, model: LLM) -> None:
        self.agent = agent
        self.model = model

    @property
    def name(self) -> str:
        return self.agent.name

    async def start_session(self, spec: SessionSpec) -> BuiltinSession:
        return BuiltinSession(self.agent, self.model, spec)
