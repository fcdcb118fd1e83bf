"""A chat turn streamed over real HTTP (`.../messages/stream`): the reply's text arrives in
chunks as the model writes it (agenteval's own agent on a streaming OpenAI-compatible server),
written tool calls never do, and closing the stream (the page's Stop) stops the generation."""

from __future__ import annotations

import json
import time
from typing import Any

from tests.fake_server import FakeServer, Step
from tests.web.api_support import Live

CALL = json.dumps({"tool_calls": [{"name": "roll_die", "arguments": {"sides": 6}}]})


def stream_events(live: Live, sid: str, text: str) -> list[tuple[str, Any]]:
    """Every (event, data) of a streamed turn, in order."""
    out: list[tuple[str, Any]] = []
    kind = "message"
    with live.http.stream("POST", f"/apps/dice/users/u/sessions/{sid}/messages/stream",
                          json={"text": text}, timeout=20) as r:
        assert r.status_code == 200, r.read()
        for line in r.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                out.append((kind, json.loads(line[6:])))
    return out


def test_a_streamed_turn_sends_its_reply_in_chunks_before_the_turn(live: Live, server: FakeServer) -> None:
    server.steps = [Step(chunks=(CALL[:9], CALL[9:])),
                    Step(chunks=("You ", "rolled ", "a 4."), chunk_delay=0.3)]
    sid = live.session("dice", model=f"openai-compat:scripted@{server.base_url}")
    events = stream_events(live, sid, "roll a d6")
    kinds = [k for k, _ in events]
    chunks = [d for k, d in events if k == "chunk"]
    assert kinds[-1] == "turn" and events[-1][1]["response"] == "You rolled a 4."
    # the call's JSON is held back; the answer comes piece by piece, from the second model call
    assert len(chunks) >= 2 and "".join(c["text"] for c in chunks) == "You rolled a 4."
    assert {c["call"] for c in chunks} == {2}
    assert kinds.index("chunk") > kinds.index("step")  # after the first call and its tool
    assert [d["kind"] for k, d in events if k == "step"] == ["llm", "tool", "llm"]
    assert all(b.get("stream") for b in server.received)


def test_closing_the_stream_stops_the_generation_and_saves_nothing(live: Live, server: FakeServer) -> None:
    server.steps = [Step(chunks=tuple(f"word{i} " for i in range(60)), chunk_delay=0.1)]
    sid = live.session("dice", model=f"openai-compat:scripted@{server.base_url}")
    with live.http.stream("POST", f"/apps/dice/users/u/sessions/{sid}/messages/stream",
                          json={"text": "tell me a story"}, timeout=20) as r:
        for line in r.iter_lines():
            if line.startswith("event: chunk"):
                break  # the page's Stop: the connection is closed
    deadline = time.monotonic() + 10
    while server.streams_cut == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.streams_cut == 1 and server.chunks_sent < 30
    assert live.get(f"/apps/dice/users/u/sessions/{sid}").json()["num_turns"] == 0
