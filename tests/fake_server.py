"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 (a thread in the test process): a real
server, for testing the HTTP backend and everything that calls it (Ray workers included)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


def reply(*texts: str, usage: tuple[int, int, int] = (10, 2, 4),
          model: str = "served-model") -> dict[str, Any]:
    """A chat completion with one choice per text; usage is (prompt, completion, cached) tokens."""
    return {
        "model": model,
        "choices": [
            {"index": i, "finish_reason": "stop", "message": {"role": "assistant", "content": t}}
            for i, t in enumerate(texts)
        ],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                  "prompt_tokens_details": {"cached_tokens": usage[2]}},
    }


@dataclass
class Step:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False  # close the connection without answering
    # A request with `stream: true` is answered with these text pieces as server-sent chunks,
    # `chunk_delay` seconds apart (then usage and [DONE]); without `stream`, with their join.
    chunks: tuple[str, ...] | None = None
    chunk_delay: float = 0.0


Respond = Callable[[dict[str, Any]], Step]
"""A reply function: the step answering a request, given its JSON body."""


def last_message(body: dict[str, Any]) -> str:
    """The text of a chat request's last message (content parts as JSON)."""
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else json.dumps(content)


def chat(answer: Callable[[str], str], delay: float = 0.0, usage: tuple[int, int, int] = (10, 2, 4),
         model: str = "served-model") -> Respond:
    """A reply function answering `answer(the last message's text)` after `delay` seconds."""
    return lambda body: Step(body=reply(answer(last_message(body)), usage=usage, model=model), delay=delay)


@dataclass
class FakeServer:
    """Answers POSTs with `respond(body)` when set, else with scripted steps (the last one repeats);
    records what it got, and the most requests it ever had in flight at once."""

    steps: list[Step] = field(default_factory=list)
    respond: Respond | None = None
    received: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    base_url: str = ""
    in_flight: int = 0
    peak: int = 0
    chunks_sent: int = 0  # streamed text chunks written, over all requests
    streams_cut: int = 0  # streamed replies the client closed before their end
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _httpd: ThreadingHTTPServer | None = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    def start(self) -> FakeServer:
        """Serves on a free port of 127.0.0.1 from a thread of this process; sets `base_url`."""
        state = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                state._answer(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stops serving and frees the port."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def _next_step(self, request: dict[str, Any]) -> Step:
        if self.respond is not None:
            return self.respond(request)
        with self._lock:
            return self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        request = json.loads(handler.rfile.read(int(handler.headers.get("content-length", 0))))
        with self._lock:
            self.received.append(request)
            self.headers.append(dict(handler.headers))
            self.paths.append(handler.path)
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            step = self._next_step(request)
            time.sleep(step.delay)
        finally:  # out of flight before answering, so a request it lets through cannot overlap it
            with self._lock:
                self.in_flight -= 1
        if step.drop:  # close the connection without an answer
            handler.close_connection = True
            return
        if step.chunks is not None:
            if request.get("stream"):
                self._stream(handler, step)
                return
            step = Step(body=reply("".join(step.chunks)), headers=step.headers)
        body = step.body if step.body is not None else reply("YES")
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            handler.send_response(step.status)
            for key, value in step.headers.items():
                handler.send_header(key, value)
            if "content-type" not in {k.lower() for k in step.headers}:
                handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except OSError:  # the client gave up (timeout test)
            pass

    def _stream(self, handler: BaseHTTPRequestHandler, step: Step) -> None:
        """Server-sent chunks of `step.chunks`, as an OpenAI-compatible server streams them."""
        assert step.chunks is not None
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "served-model"}
        events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
        events += [{**base, "choices": [{"index": 0, "delta": {"content": c}}]} for c in step.chunks]
        events += [{**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                   {**base, "choices": [], "usage": {"prompt_tokens": 10,
                                                     "completion_tokens": len(step.chunks)}}]
        try:
            handler.send_response(200)
            handler.send_header("content-type", "text/event-stream")
            handler.end_headers()
            for i, event in enumerate(events):
                if 1 < i <= len(step.chunks) and step.chunk_delay:
                    time.sleep(step.chunk_delay)
                handler.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                handler.wfile.flush()
                if 0 < i <= len(step.chunks):
                    with self._lock:
                        self.chunks_sent += 1
            handler.wfile.write(b"data: [DONE]\n\n")
            handler.wfile.flush()
        except OSError:  # the client closed the stream (it was cancelled)
            with self._lock:
                self.streams_cut += 1


@pytest.fixture
def server() -> Iterator[FakeServer]:
    state = FakeServer().start()
    yield state
    state.close()
