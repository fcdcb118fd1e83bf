"""A local OpenAI-compatible chat-completions stub with a fixed latency, for benchmarks.

    python bench/stub_server.py [--port 0] [--latency 0.2] [--timeout 900] [--max-requests 100000]

Stdlib asyncio only (HTTP/1.1 with keep-alive), so it runs under any interpreter. Listens on
127.0.0.1; the first line on stdout is `listening on http://127.0.0.1:<port>/v1`.

`POST .../chat/completions` waits `--latency` seconds (`asyncio.sleep`, so any number of calls
wait at once) and then replies deterministically:

* when the request declares `tools` and the conversation has no tool result since its last
  user message, one call (OpenAI `tool_calls` format) to the first declared tool, with
  plausible arguments made from its JSON schema (`query: string` -> `"example"`, integers 6,
  numbers 1.5, booleans true, arrays of one such item, enums their first value);
* otherwise a short final text, `FINAL_TEXT` (with the tool's name filled in).

A tool result is a `role: tool` (or `function`) message after the last user message, or a user
message holding `Tool <name> returned:` (agenteval's built-in agent feeds results back as plain
user text). So a tool-using agent spends exactly two model calls per user turn. `stream: true`
is answered as one server-sent-events chunk plus `[DONE]`.

Other routes: `GET /stats` (requests, replies by kind, in-flight peak, first request start and
last reply end on the server's monotonic clock, and the span between them), `POST /reset`
(zeroes the stats), `GET /v1/models`, `POST /shutdown`.

Bounded: the server stops by itself `--timeout` seconds after start or after `--max-requests`
chat requests, whichever comes first, and prints its stats as JSON on the way out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

FINAL_TEXT = "Done: the {tool} tool answered your request."
NO_TOOL_TEXT = "Done: I answered your request."
_TOOL_RESULT = re.compile(r"\bTool [\w.-]+ returned:")
_MAX_BODY = 64 << 20


@dataclass
class Stats:
    requests: int = 0
    tool_call_replies: int = 0
    final_replies: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    first_start: float | None = None
    last_end: float | None = None
    errors: int = 0
    by_path: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        span = (None if self.first_start is None or self.last_end is None
                else round(self.last_end - self.first_start, 4))
        out["span_s"] = span
        return out


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def has_tool_result(messages: list[dict[str, Any]]) -> bool:
    """True when a tool result follows (or is written in) the last user message."""
    for message in reversed(messages):
        role = message.get("role")
        if role in ("tool", "function"):
            return True
        if role == "user":
            if isinstance(message.get("content"), list) and any(
                    isinstance(p, dict) and p.get("type") in ("tool_result", "function_response")
                    for p in message["content"]):
                return True
            return bool(_TOOL_RESULT.search(_text(message)))
    return False


def plausible(schema: dict[str, Any]) -> Any:
    """A value that fits a JSON schema, chosen deterministically."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if isinstance(kind, str):
        kind = kind.lower()  # Gemini-style schemas spell types in capitals
    if kind == "integer":
        return 6
    if kind == "number":
        return 1.5
    if kind == "boolean":
        return True
    if kind == "array":
        return [plausible(schema.get("items") or {"type": "string"})]
    if kind == "object" or "properties" in schema:
        return plausible_args(schema)
    return "example"


def plausible_args(parameters: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool: its required properties (all of them if none is required)."""
    props: dict[str, Any] = parameters.get("properties") or {}
    names = [n for n in parameters.get("required") or [] if n in props] or list(props)
    return {n: plausible(props[n]) for n in names}


def reply_for(body: dict[str, Any], call_number: int) -> tuple[dict[str, Any], str]:
    """The chat-completions reply for a request body, and its kind (`tool_call` or `final`)."""
    messages = body.get("messages") or []
    tools = [t.get("function", t) for t in body.get("tools") or [] if isinstance(t, dict)]
    if tools and not has_tool_result(messages):
        tool = tools[0]
        arguments = json.dumps(plausible_args(tool.get("parameters") or {}))
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_stub_{call_number}", "type": "function",
            "function": {"name": tool.get("name", "tool"), "arguments": arguments}}]}
        finish, kind, completion = "tool_calls", "tool_call", arguments
    else:
        text = FINAL_TEXT.format(tool=tools[0].get("name", "tool")) if tools else NO_TOOL_TEXT
        message = {"role": "assistant", "content": text}
        finish, kind, completion = "stop", "final", text
    prompt_tokens = max(1, len(json.dumps(messages)) // 4)
    completion_tokens = max(1, len(completion) // 4)
    return {
        "id": f"chatcmpl-stub-{call_number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model") or "stub"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }, kind


def _as_stream(reply: dict[str, Any]) -> bytes:
    choice = reply["choices"][0]
    delta = dict(choice["message"])
    if delta.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(delta["tool_calls"])]
    chunk = {**reply, "object": "chat.completion.chunk",
             "choices": [{"index": 0, "delta": delta, "finish_reason": choice["finish_reason"]}]}
    return f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()


class StubServer:
    """The stub; `run()` serves until the timeout, the request budget or `/shutdown`."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, latency: float = 0.2,
                 timeout: float = 900.0, max_requests: int = 100_000) -> None:
        self.host = host
        self.port = port
        self.latency = latency
        self.timeout = timeout
        self.max_requests = max_requests
        self.stats = Stats()
        self._chat_total = 0
        self._stop = asyncio.Event()
        self._server: asyncio.Server | None = None

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._handle, self.host, self.port, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def run(self) -> None:
        if self._server is None:
            await self.start()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._stop.wait(), self.timeout)
        assert self._server is not None
        self._server.close()
        # Let replies already being written go out, then stop.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._server.wait_closed(), 5.0)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while not self._stop.is_set():
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = [*lines[0].split(" ", 2), "", ""][:3]
                headers = {k.strip().lower(): v.strip() for k, _, v in
                           (line.partition(":") for line in lines[1:] if line)}
                body = await self._read_body(reader, headers)
                status, payload, ctype = await self._route(method, path.split("?", 1)[0], body)
                keep = headers.get("connection", "").lower() != "close"
                writer.write(
                    f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\n"
                    f"Content-Length: {len(payload)}\r\n"
                    f"Connection: {'keep-alive' if keep else 'close'}\r\n\r\n".encode() + payload)
                await writer.drain()
                if not keep:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    @staticmethod
    async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
        if headers.get("transfer-encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    await reader.readuntil(b"\r\n")
                    return b"".join(parts)
                parts.append(await reader.readexactly(size))
                await reader.readexactly(2)
        length = int(headers.get("content-length") or 0)
        if length > _MAX_BODY:
            raise ConnectionError("body too large")
        return await reader.readexactly(length) if length else b""

    async def _route(self, method: str, path: str, body: bytes) -> tuple[str, bytes, str]:
        self.stats.by_path[f"{method} {path}"] = self.stats.by_path.get(f"{method} {path}", 0) + 1
        js = "application/json"
        if method == "POST" and path.endswith("/chat/completions"):
            return await self._chat(body)
        if method == "GET" and path == "/stats":
            return "200 OK", json.dumps(self.stats.as_dict()).encode(), js
        if method == "POST" and path == "/reset":
            self.stats = Stats(in_flight=self.stats.in_flight)
            return "200 OK", b"{}", js
        if method == "GET" and path.endswith("/models"):
            return "200 OK", json.dumps({"object": "list", "data": [
                {"id": "stub", "object": "model", "owned_by": "bench"}]}).encode(), js
        if method == "POST" and path == "/shutdown":
            self._stop.set()
            return "200 OK", b"{}", js
        return "404 Not Found", json.dumps({"error": {"message": f"no route {path}"}}).encode(), js

    async def _chat(self, body: bytes) -> tuple[str, bytes, str]:
        stats = self.stats
        started = time.monotonic()
        stats.requests += 1
        self._chat_total += 1
        number = self._chat_total
        if stats.first_start is None:
            stats.first_start = started
        stats.in_flight += 1
        stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        try:
            request = json.loads(body or b"{}")
            if not isinstance(request, dict):
                raise ValueError("body is not a JSON object")
            await asyncio.sleep(self.latency)
            reply, kind = reply_for(request, number)
        except ValueError as exc:
            stats.errors += 1
            return "400 Bad Request", json.dumps({"error": {"message": str(exc)}}).encode(), \
                "application/json"
        finally:
            stats.in_flight -= 1
            stats.last_end = time.monotonic()
            if number >= self.max_requests:
                self._stop.set()
        if kind == "tool_call":
            stats.tool_call_replies += 1
        else:
            stats.final_replies += 1
        if request.get("stream"):
            return "200 OK", _as_stream(reply), "text/event-stream"
        return "200 OK", json.dumps(reply).encode(), "application/json"


async def _main(args: argparse.Namespace) -> None:
    server = StubServer(port=args.port, latency=args.latency, timeout=args.timeout,
                        max_requests=args.max_requests)
    port = await server.start()
    print(f"listening on http://127.0.0.1:{port}/v1", flush=True)
    await server.run()
    print(json.dumps({"stopped": True, "chat_requests_total": server._chat_total,
                      **server.stats.as_dict()}), flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="OpenAI-compatible stub with a fixed latency.")
    parser.add_argument("--port", type=int, default=0, help="0: any free port (printed)")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per chat call")
    parser.add_argument("--timeout", type=float, default=900.0, help="stop after this many s")
    parser.add_argument("--max-requests", type=int, default=100_000,
                        help="stop after this many chat requests")
    args = parser.parse_args(argv)
    try:
        asyncio.run(_main(args))
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
