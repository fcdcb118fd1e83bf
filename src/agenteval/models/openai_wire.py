"""The OpenAI chat-completions wire format, shared by the HTTP and the embedded backend.

Both speak it: the embedded llama.cpp server takes the same JSON body in-process. Both
stream it too (`stream: true`): `ChunkAssembler` puts a streamed reply's chunks back together
into the reply a request without `stream` gets.
"""

from __future__ import annotations

import json
from typing import Any

from agenteval.models.base import (
    Generation,
    Message,
    ModelError,
    ModelRequest,
    OnChunk,
    TokenLogprob,
    ToolCallRequest,
    Usage,
)
from agenteval.models.toolcall_parse import parse_tool_calls

__all__ = ["ChunkAssembler", "build_body", "message_to_wire", "parse_choice", "parse_logprobs", "parse_usage",
           "server_error_message"]


def message_to_wire(message: Message, index: int = 0) -> dict[str, Any]:
    """One message in OpenAI form; tool calls without an id get `call_<index>_<k>`."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id or f"call_{index}_{k}",
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.args)},
            }
            for k, call in enumerate(message.tool_calls)
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        out["name"] = message.name
    return out


def build_body(
    request: ModelRequest,
    *,
    model: str | None = None,
    n: int = 1,
    seed: int | None = None,
    max_tokens_field: str = "max_tokens",
) -> dict[str, Any]:
    """The request body for `n` samples; `seed` overrides `request.seed` (per-call seeds).

    `grammar` is sent as llama.cpp's `grammar` field, which other servers may reject;
    `request.logprobs` as `logprobs: true, top_logprobs: k`.
    """
    if request.json_schema is not None and request.grammar is not None:
        raise ModelError("set json_schema or grammar, not both")
    if min(request.n, n) < 1:
        raise ModelError(f"n must be at least 1, got {min(request.n, n)}")
    body: dict[str, Any] = {
        "messages": [message_to_wire(m, i) for i, m in enumerate(request.messages)],
        "temperature": request.temperature,
        max_tokens_field: request.max_tokens,
    }
    if model is not None:
        body["model"] = model
    if n != 1:
        body["n"] = n
    if seed is not None:
        body["seed"] = seed
    if request.stop:
        body["stop"] = list(request.stop)
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
            }
            for t in request.tools
        ]
    if request.json_schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            # Not "strict": OpenAI's strict mode rejects schemas that leave properties optional.
            "json_schema": {"name": "response", "schema": request.json_schema},
        }
    if request.grammar is not None:
        body["grammar"] = request.grammar
    if request.logprobs > 0:
        body["logprobs"] = True
        body["top_logprobs"] = request.logprobs
    return body


def parse_choice(choice: Any, request: ModelRequest) -> Generation:
    """A `Generation` from one reply choice.

    Structured `tool_calls` win; when tools were declared and there are none, calls written in
    the text are parsed (see `toolcall_parse`).
    """
    if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
        raise ModelError(f"unexpected choice in reply: {str(choice)[:200]}")
    message = choice["message"]
    text = message.get("content") or ""
    if not isinstance(text, str):  # some servers send content parts
        text = "".join(p.get("text", "") for p in text if isinstance(p, dict))
    calls: list[ToolCallRequest] = []
    for raw in message.get("tool_calls") or ():
        function = raw.get("function") or {}
        args: Any = function.get("arguments") or {}
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError as exc:
                raise ModelError(f"tool call arguments are not JSON: {args[:200]!r}") from exc
        if not isinstance(args, dict):
            raise ModelError(f"tool call arguments are not an object: {args!r}")
        calls.append(ToolCallRequest(str(function.get("name", "")), args, raw.get("id")))
    if not calls and request.tools:
        calls = list(parse_tool_calls(text, {t.name for t in request.tools}))
    finish = choice.get("finish_reason")
    logprobs = parse_logprobs(choice.get("logprobs")) if request.logprobs > 0 else None
    return Generation(text=text, tool_calls=tuple(calls), finish_reason=finish, logprobs=logprobs)


def parse_logprobs(raw: Any) -> tuple[TokenLogprob, ...] | None:
    """The tokens of `choice.logprobs.content` (OpenAI's form, which llama.cpp's server and vLLM
    also use); None when there are none or they are not in that form (a server that ignores
    the parameter), so the caller falls back to what it does without them."""
    content = raw.get("content") if isinstance(raw, dict) else None
    if not isinstance(content, list) or not content:
        return None
    tokens = []
    for entry in content:
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            return None
        logprob = entry.get("logprob")
        if not isinstance(logprob, (int, float)):
            return None
        top = tuple((str(t["token"]), float(t["logprob"])) for t in entry.get("top_logprobs") or ()
                    if isinstance(t, dict) and isinstance(t.get("logprob"), (int, float)) and "token" in t)
        tokens.append(TokenLogprob(entry["token"], float(logprob), top))
    return tuple(tokens)


def parse_usage(reply: dict[str, Any]) -> Usage:
    """Prompt, completion and cached tokens of a reply (zeros where the server says nothing)."""
    usage = reply.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    return Usage(
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cached_tokens=int(details.get("cached_tokens") or 0),
    )


def server_error_message(payload: Any) -> str:
    """The human message in an OpenAI-style error body (`{"error": {"message": ...}}`)."""
    if isinstance(payload, list) and payload:  # Gemini wraps errors in a list
        payload = payload[0]
    if isinstance(payload, dict):
        error = payload.get("error", payload)
        if isinstance(error, dict):
            return str(error.get("message") or error)
        return str(error)
    return str(payload)


class ChunkAssembler:
    """The reply of a streamed chat completion (`stream: true`), assembled from its chunks (the
    JSON of each `data:` line) into the shape of a reply without `stream`: one choice whose
    message holds the text and tool calls, its finish reason and log-probabilities, the usage
    (sent last when `stream_options.include_usage` was asked) and the model. Each text delta
    goes to `on_chunk` as it is added; tool-call deltas (name, then pieces of the arguments'
    JSON, by index) are only assembled."""

    def __init__(self, on_chunk: OnChunk) -> None:
        self.on_chunk = on_chunk
        self.chunks = 0  # chunks with text handed on so far
        self._text: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._logprobs: list[Any] = []
        self._finish: str | None = None
        self._usage: dict[str, Any] | None = None
        self._model: str | None = None

    def add(self, chunk: Any) -> None:
        """Adds one chunk; ModelError for an error chunk or one that is not an object."""
        if not isinstance(chunk, dict):
            raise ModelError(f"unexpected chunk in a streamed reply: {str(chunk)[:200]}")
        if chunk.get("error"):
            raise ModelError(f"the streamed reply ended with an error: {server_error_message(chunk)}")
        self._model = chunk.get("model") or self._model
        if isinstance(chunk.get("usage"), dict):
            self._usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            self._finish = choice.get("finish_reason") or self._finish
            content = (choice.get("logprobs") or {}).get("content")
            if isinstance(content, list):
                self._logprobs += content
            delta = choice.get("delta") or {}
            text = delta.get("content")
            if isinstance(text, str) and text:
                self._text.append(text)
                self.chunks += 1
                self.on_chunk(text)
            for call in delta.get("tool_calls") or ():
                slot = self._calls.setdefault(int(call.get("index", len(self._calls))),
                                              {"id": None, "name": "", "arguments": ""})
                function = call.get("function") or {}
                slot["id"] = call.get("id") or slot["id"]
                slot["name"] += function.get("name") or ""
                slot["arguments"] += function.get("arguments") or ""

    def reply(self) -> dict[str, Any]:
        """The assembled reply (as `parse_choice` and `parse_usage` read a non-streamed one)."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._text)}
        if self._calls:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function",
                 "function": {"name": c["name"], "arguments": c["arguments"]}}
                for _, c in sorted(self._calls.items())]
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": self._finish}
        if self._logprobs:
            choice["logprobs"] = {"content": self._logprobs}
        reply: dict[str, Any] = {"choices": [choice], "usage": self._usage or {}}
        if self._model:
            reply["model"] = self._model
        return reply
