"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 (a thread in the test process): a real
server, for testing the HTTP backend and everything that calls it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


def reply(*texts: str, usage: tuple[int, int, int] = (10, 2, 4)) -> dict[str, Any]:
    return {
        "model": "served-model",
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


@dataclass
class FakeServer:
    """Answers POSTs with scripted steps (the last one repeats) and records what it got."""

    steps: list[Step] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    base_url: str = ""


@pytest.fixture
def server() -> Iterator[FakeServer]:
    state = FakeServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            state.received.append(json.loads(self.rfile.read(length)))
            state.headers.append(dict(self.headers))
            state.paths.append(self.path)
            step = state.steps.pop(0) if len(state.steps) > 1 else state.steps[0]
            time.sleep(step.delay)
            if step.drop:  # close the connection without an answer
                self.close_connection = True
                return
            body = step.body if step.body is not None else reply("YES")
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            try:
                self.send_response(step.status)
                for key, value in step.headers.items():
                    self.send_header(key, value)
                if "content-type" not in {k.lower() for k in step.headers}:
                    self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client gave up (timeout test)
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


