"""Spans for agent steps, model calls and tool calls, named and keyed as OpenTelemetry's GenAI
semantic conventions have them (with OpenInference's span kind and input/output beside them,
which Phoenix reads). Every adapter records through these, so all agents' traces look alike."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from agenteval.schema.trace import Span
from agenteval.tracing.recorder import ActiveSpan, span, start_span


def _agent_attributes(agent: str, user_text: str | None) -> dict[str, Any]:
    return {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent,
            "openinference.span.kind": "AGENT", "input.value": user_text}


@contextmanager
def agent_step(agent: str, user_text: str | None) -> Iterator[ActiveSpan | None]:
    """One agent handling one user message (`invoke_agent AGENT`)."""
    with span("agent", f"invoke_agent {agent}", _agent_attributes(agent, user_text)) as s:
        yield s


def start_agent_run(agent: str, user_text: str | None, parent: Span | None = None,
                    attributes: Mapping[str, Any] | None = None) -> ActiveSpan | None:
    """`agent_step` for an agent run that begins in one callback and ends in another, under
    `parent` (None: the current span); `attributes` are added to the usual ones."""
    return start_span("agent", f"invoke_agent {agent}",
                      {**_agent_attributes(agent, user_text), **(attributes or {})}, parent)


def _model_attributes(model: str, messages: Sequence[Mapping[str, Any]],
                      tools: Sequence[str]) -> dict[str, Any]:
    return {"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
            "openinference.span.kind": "LLM", "gen_ai.input.messages": list(messages),
            "gen_ai.request.tools": list(tools) or None}


def _tool_attributes(name: str, call_id: str | None, args: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id, "openinference.span.kind": "TOOL",
            "gen_ai.tool.call.arguments": dict(args or {})}


@contextmanager
def model_call(model: str, messages: Sequence[Mapping[str, Any]],
               tools: Sequence[str] = ()) -> Iterator[ActiveSpan | None]:
    """One model request (`chat MODEL`): the messages sent and the tools offered."""
    with span("llm", f"chat {model}", _model_attributes(model, messages, tools)) as s:
        yield s


def start_model_call(model: str, messages: Sequence[Mapping[str, Any]],
                     tools: Sequence[str] = (), parent: Span | None = None) -> ActiveSpan | None:
    """`model_call` for a request that begins in one callback and ends in another, under
    `parent` (None: the current span)."""
    return start_span("llm", f"chat {model}", _model_attributes(model, messages, tools), parent)


def start_tool_call(name: str, call_id: str | None, args: Mapping[str, Any] | None,
                    parent: Span | None = None) -> ActiveSpan | None:
    """`tool_call` for a tool that begins in one callback and ends in another, under `parent`
    (None: the current span)."""
    return start_span("tool", f"execute_tool {name}", _tool_attributes(name, call_id, args), parent)


def model_reply(s: ActiveSpan | None, *, model: str | None, text: str,
                tool_calls: Sequence[Mapping[str, Any]] = (), input_tokens: int | None = None,
                output_tokens: int | None = None, cached_tokens: int | None = None,
                reasoning_tokens: int | None = None, tool_use_tokens: int | None = None) -> None:
    """Records a model's reply on its span: the text, the tool calls it asked for, token counts
    (cached prompt tokens where the backend says; reasoning and tool-use prompt tokens, which
    the GenAI conventions do not name yet, under `agenteval.usage.*`)."""
    if s is None:
        return
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = list(tool_calls)
    s.update({"gen_ai.response.model": model, "gen_ai.output.messages": [message],
              "output.value": text, "gen_ai.usage.input_tokens": input_tokens,
              "gen_ai.usage.output_tokens": output_tokens,
              "gen_ai.usage.cache_read.input_tokens": cached_tokens or None,
              "agenteval.usage.reasoning_tokens": reasoning_tokens,
              "agenteval.usage.tool_use_prompt_tokens": tool_use_tokens})


@contextmanager
def tool_call(name: str, call_id: str | None, args: Mapping[str, Any] | None) -> Iterator[ActiveSpan | None]:
    """One tool execution (`execute_tool NAME`) with its arguments."""
    with span("tool", f"execute_tool {name}", _tool_attributes(name, call_id, args)) as s:
        yield s


def tool_result(s: ActiveSpan | None, result: Any, error: str | None = None) -> None:
    """Records a tool's result (or the error it raised, which the agent was shown) on its span."""
    if s is None:
        return
    s.set("gen_ai.tool.call.result", result)
    s.set("output.value", result)
    if error is not None:
        s.fail(error)


__all__ = [
    "agent_step",
    "model_call",
    "model_reply",
    "start_agent_run",
    "start_model_call",
    "start_tool_call",
    "tool_call",
    "tool_result",
]
