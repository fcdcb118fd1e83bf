"""One local Ray cluster (2 CPUs, no dashboard) shared by the Ray tests of a module (starting one
costs seconds), stopped after them, so the rest of the suite does not share the machine with an
idle cluster. Skipped, with the reason, when Ray is not installed."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.fake_server import reply


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'agenteval[ray]')")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    yield ray
    if started:
        ray.shutdown()


@dataclass
class ChatServer:
    """An OpenAI-compatible server answering each chat request with `answer(last message text)`
    after `delay` seconds; counts requests and the most it ever had in flight."""

    answer: Callable[[str], str]
    delay: float = 0.0
    base_url: str = ""
    requests: int = 0
    in_flight: int = 0
    peak: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.fixture
def chat_server() -> Iterator[Callable[..., ChatServer]]:
    servers: list[ThreadingHTTPServer] = []

    def start(answer: Callable[[str], str], delay: float = 0.0) -> ChatServer:
        state = ChatServer(answer, delay)

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                with state.lock:
                    state.requests += 1
                    state.in_flight += 1
                    state.peak = max(state.peak, state.in_flight)
                try:
                    threading.Event().wait(state.delay)
                    content = body["messages"][-1]["content"]
                    text = content if isinstance(content, str) else json.dumps(content)
                    data = json.dumps(reply(state.answer(text))).encode()
                finally:
                    with state.lock:
                        state.in_flight -= 1
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        servers.append(httpd)
        state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
        return state

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()
