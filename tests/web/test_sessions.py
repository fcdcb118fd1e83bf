"""Chat sessions over real HTTP: created, listed, read, deleted; each message one agent turn
with its tool calls, state and trace; an agent that fails gives a turn with its error (status
200) and the server stays up; a model can be chosen for agenteval's own agents."""

from __future__ import annotations

import json

from tests.fake_server import FakeServer, Step, reply
from tests.web.api_support import Live


def test_a_session_is_created_listed_read_and_deleted(live: Live) -> None:
    r = live.post("/apps/echo/users/u/sessions", json={"state": {"city": "Paris"}})
    assert r.status_code == 200
    s = r.json()
    assert s["app_name"] == "echo" and s["user_id"] == "u" and s["state"] == {"city": "Paris"}
    assert s["events"] == [] and s["model"] is None and s["created"] > 0
    assert (live.agents_dir / "echo" / ".agenteval" / "sessions" / f"{s['id']}.json").is_file()
    other = live.session()
    rows = live.get("/apps/echo/users/u/sessions").json()
    assert [row["id"] for row in rows] == [s["id"], other]
    assert rows[0]["num_turns"] == 0 and rows[0]["turns"] is None  # a listing has no turns
    assert live.get("/apps/echo/users/someone-else/sessions").json() == []
    assert live.get(f"/apps/echo/users/u/sessions/{s['id']}").json()["turns"] == []
    assert live.delete(f"/apps/echo/users/u/sessions/{s['id']}").json() == {"deleted": s["id"]}
    assert live.get(f"/apps/echo/users/u/sessions/{s['id']}").status_code == 404
    assert live.delete(f"/apps/echo/users/u/sessions/{s['id']}").status_code == 404


def test_a_message_runs_one_turn_with_tool_calls_state_and_trace(live: Live) -> None:
    sid = live.session(state={"city": "Paris"})
    turn = live.say(sid, "roll a d6")
    assert turn["user"] == "roll a d6" and turn["response"] == "You rolled a 4."
    assert turn["tool_calls"] == [{"name": "roll_die", "args": {"sides": 6}}]
    assert turn["tool_responses"] == [{"name": "roll_die", "response": {"result": 4}}]
    assert turn["error"] is None and turn["index"] == 0
    assert turn["state"] == {"city": "Paris", "turns": 1}
    kinds = [sp["kind"] for sp in turn["trace"]["spans"]]
    assert kinds[:2] == ["invocation", "agent"] and "tool" in kinds
    assert turn["invocation"]["user_content"]["parts"][0]["text"] == "roll a d6"
    live.say(sid, "hello")
    s = live.get(f"/apps/echo/users/u/sessions/{sid}").json()
    assert [t["response"] for t in s["turns"]] == ["You rolled a 4.", "echo: hello"]
    assert s["state"]["turns"] == 2 and s["initial_state"] == {"city": "Paris"}
    assert next(e["author"] for e in s["events"] if e["invocation_index"] == 0) == "user"


def test_an_agent_that_raises_or_exits_gives_an_error_turn_and_the_server_stays_up(live: Live) -> None:
    sid = live.session()
    boom = live.say(sid, "boom")
    assert boom["error"].startswith("RuntimeError: the agent blew up (at ")
    assert boom["response"] == ""
    out = live.say(sid, "exit now")
    assert out["error"].startswith("SystemExit: the agent called sys.exit(3)")
    assert live.say(sid, "still there?")["response"] == "echo: still there?"
    assert live.get(f"/apps/echo/users/u/sessions/{sid}").json()["num_turns"] == 3


def test_a_model_can_be_chosen_for_agentevals_own_agent(live: Live, server: FakeServer) -> None:
    call = {"tool_calls": [{"name": "roll_die", "arguments": {"sides": 6}}]}
    server.steps = [Step(body=reply(json.dumps(call))), Step(body=reply("You rolled a 4."))]
    model = f"openai-compat:scripted@{server.base_url}"
    sid = live.session("dice", model=model)
    turn = live.say(sid, "roll a d6", app="dice")
    assert turn["error"] is None, turn["error"]
    assert turn["response"] == "You rolled a 4."
    assert turn["tool_calls"] == [{"name": "roll_die", "args": {"sides": 6}}]
    assert turn["tool_responses"][0]["response"] == {"result": 4}
    assert [sp["kind"] for sp in turn["trace"]["spans"]].count("llm") == 2
    assert live.get(f"/apps/dice/users/u/sessions/{sid}").json()["model"] == model


def test_a_model_that_cannot_be_used_is_refused(live: Live) -> None:
    r = live.post("/apps/dice/users/u/sessions", json={"model": "bogus:x"})
    assert r.status_code == 400 and r.json()["detail"].startswith("model: ")
    r = live.post("/apps/echo/users/u/sessions", json={"model": "openai-compat:m@http://127.0.0.1:9/v1"})
    assert r.status_code == 400 and "agenteval Agent agents only" in r.json()["detail"]
    r = live.post("/apps/echo/users/u/sessions", json={"stat": {}})
    assert r.status_code == 400 and r.json()["detail"].startswith("body.stat")


def test_unknown_sessions_users_and_ids_are_404(live: Live) -> None:
    sid = live.session()
    assert live.get(f"/apps/echo/users/other/sessions/{sid}").status_code == 404
    for bad in ("nope", "..", "%2e%2e", "..%2Fx", "a.json"):
        assert live.get(f"/apps/echo/users/u/sessions/{bad}").status_code == 404
        r = live.post(f"/apps/echo/users/u/sessions/{bad}/messages", json={"text": "hi"})
        assert r.status_code == 404
    assert live.post(f"/apps/echo/users/u/sessions/{sid}/messages", json={"text": ""}).status_code == 400
    assert live.post("/apps/nope/users/u/sessions", json={}).status_code == 404


def test_a_damaged_session_file_is_named_beside_the_others(live: Live) -> None:
    good = live.session()
    folder = live.agents_dir / "echo" / ".agenteval" / "sessions"
    (folder / "bad1.json").write_text("{ not json")
    (folder / "bad2.json").write_text(json.dumps({"id": "bad2"}))
    r = live.get("/apps/echo/users/u/sessions")
    assert r.status_code == 200 and [s["id"] for s in r.json()] == [good]
    unreadable = sorted(json.loads(r.headers["x-unreadable-sessions"]))
    assert len(unreadable) == 2
    assert unreadable[0].startswith(f"{folder / 'bad1.json'}: ")
    assert unreadable[1].startswith(f"{folder / 'bad2.json'}: ")
    assert live.get("/apps/echo/users/u/sessions/bad1").status_code == 400  # opened: its error
