"""API test support: a folder of test agents, the real server under uvicorn on a free 127.0.0.1
port (a thread of the test process, over real HTTP), and helpers to read server-sent events.

Fixtures (`agents_dir`, `live`) are imported by each test module."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

ECHO_AGENT = '''\
"""A scripted callable agent: a die roll with its tool call, errors on request, an echo otherwise."""

import sys


def root_agent(text, state):
    state["turns"] = state.get("turns", 0) + 1
    if "boom" in text:
        raise RuntimeError("the agent blew up")
    if "exit" in text:
        sys.exit(3)
    if "roll" in text:
        return {"response": "You rolled a 4.",
                "tool_calls": [{"name": "roll_die", "args": {"sides": 6}, "response": {"result": 4}}]}
    return "echo: " + text
'''

SLOW_AGENT = '''\
"""An async callable agent that takes its time (cancellable while it waits)."""

import asyncio


async def root_agent(text):
    await asyncio.sleep(30 if "slow" in text else 0)
    return "done"
'''

DICE_AGENT = '''\
"""agenteval's own Agent: its model is replaced by the request's (a scripted HTTP server)."""

from agenteval.agents import Agent


def roll_die(sides: int) -> int:
    """Roll a die.

    Args:
        sides: The number of sides.
    """
    return 4


root_agent = Agent(name="dice", model="local", instruction="Roll dice.", tools=[roll_die])
'''

BROKEN_AGENT = 'raise ImportError("this agent cannot be imported")\n'


def write_agents(root: Path) -> Path:
    for name, source in (("echo", ECHO_AGENT), ("slow", SLOW_AGENT), ("dice", DICE_AGENT),
                         ("broken", BROKEN_AGENT)):
        (root / name).mkdir(parents=True)
        (root / name / "agent.py").write_text(source)
    (root / "not_an_agent").mkdir()
    (root / ".hidden").mkdir()
    (root / ".hidden" / "agent.py").write_text(ECHO_AGENT)
    return root


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Live:
    """A running server: its URL, its agents folder, and a client that sends the page's Origin."""

    url: str
    agents_dir: Path
    http: httpx.Client

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return self.http.get(path, **kw)

    def post(self, path: str, **kw: Any) -> httpx.Response:
        return self.http.post(path, **kw)

    def put(self, path: str, **kw: Any) -> httpx.Response:
        return self.http.put(path, **kw)

    def delete(self, path: str, **kw: Any) -> httpx.Response:
        return self.http.delete(path, **kw)

    def events(self, run_id: str, timeout: float = 10.0) -> list[dict[str, Any]]:
        """Every server-sent event of a run, read until the stream ends."""
        out = []
        with self.http.stream("GET", f"/api/runs/{run_id}/events", timeout=timeout) as r:
            assert r.status_code == 200, r.read()
            assert r.headers["content-type"].startswith("text/event-stream")
            for line in r.iter_lines():
                if line.startswith("data: "):
                    out.append(json.loads(line[6:]))
        return out

    def session(self, app: str = "echo", user: str = "u", **body: Any) -> str:
        r = self.post(f"/apps/{app}/users/{user}/sessions", json=body)
        assert r.status_code == 200, r.text
        return str(r.json()["id"])

    def say(self, session_id: str, text: str, app: str = "echo", user: str = "u") -> dict[str, Any]:
        r = self.post(f"/apps/{app}/users/{user}/sessions/{session_id}/messages", json={"text": text})
        assert r.status_code == 200, r.text
        out: dict[str, Any] = r.json()
        return out


@pytest.fixture
def agents_dir(tmp_path: Path) -> Path:
    return write_agents(tmp_path / "agents")


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Runs the ASGI app under uvicorn on a free port in a thread; yields its base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the web server did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def live(agents_dir: Path) -> Iterator[Live]:
    from agenteval.web import create_app

    with serve(create_app(agents_dir)) as url, \
            httpx.Client(base_url=url, headers={"origin": url}, timeout=10) as http:
        yield Live(url, agents_dir, http)
