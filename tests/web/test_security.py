"""The server's safety over real HTTP: the Host check, the token, the Origin check on requests
that change state, path traversal in every path parameter (`..`, encoded separators, absolute
paths, symbolic links out), and strings returned as data (markup only in the escaped export)."""

from __future__ import annotations

import http.client
import json
import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.web.api_support import Live, serve

PAYLOAD = '<script>alert(1)</script>"\'><img src=x onerror=alert(2)>'


def raw(live: Live, method: str, path: str, headers: dict[str, str] | None = None,
        body: str | None = None) -> tuple[int, str]:
    """A request whose path is sent byte for byte (no client normalises `..` away)."""
    url = urlsplit(live.url)
    conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=10)
    try:
        sent = {"origin": live.url, "content-type": "application/json", **(headers or {})}
        conn.request(method, path, body=body, headers=sent)
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


def test_a_foreign_host_header_is_refused(live: Live) -> None:
    port = urlsplit(live.url).port
    status, body = raw(live, "GET", "/api/apps", {"host": f"evil.example:{port}"})
    assert status == 403 and "not this server's" in json.loads(body)["detail"]
    assert raw(live, "GET", "/api/apps", {"host": f"localhost:{port}"})[0] == 200


@pytest.mark.parametrize("headers", [{}, {"origin": "http://evil.example"}, {"origin": "null"},
                                     {"referer": "http://evil.example/page"}])
def test_state_changing_requests_need_the_servers_own_origin(live: Live, headers: dict[str, str]) -> None:
    with httpx.Client(base_url=live.url, headers=headers) as other:
        for method, path in (("POST", "/apps/echo/eval-sets/x"), ("POST", "/apps/echo/users/u/sessions"),
                             ("PUT", "/apps/echo/eval-sets/x/eval-cases/c"),
                             ("DELETE", "/apps/echo/eval-sets/x/eval-cases/c"),
                             ("POST", "/api/results/open"), ("POST", "/api/runs/r/cancel")):
            r = other.request(method, path, json={})
            assert r.status_code == 403 and "origin" in r.json()["detail"], (method, path)
        assert other.get("/api/apps").status_code == 200  # reading needs no origin
    assert not (live.agents_dir / "echo" / "x.evalset.json").exists()
    port = urlsplit(live.url).port
    with httpx.Client(base_url=live.url, headers={"origin": f"http://127.0.0.1:{port + 1}"}) as other:
        assert other.post("/apps/echo/eval-sets/x").status_code == 403
    with httpx.Client(base_url=live.url, headers={"referer": f"{live.url}/#/app/echo"}) as same:
        assert same.post("/apps/echo/eval-sets/x").status_code == 201


@pytest.fixture
def guarded(agents_dir: Path) -> Iterator[str]:
    from agenteval.web import create_app

    with serve(create_app(agents_dir, token="s3cret-T0ken")) as url:
        yield url


def test_with_a_token_every_request_needs_it(guarded: str) -> None:
    with httpx.Client(base_url=guarded, headers={"origin": guarded}) as anon:
        for path in ("/api/apps", "/", "/static/app.js", "/openapi.json", "/list-apps"):
            assert anon.get(path).status_code == 403, path
        assert anon.get("/?token=wrong").status_code == 403
        assert anon.get("/api/apps", headers={"authorization": "Bearer wrong"}).status_code == 403
        assert anon.get("/api/apps", headers={"cookie": "agenteval_token=wrong"}).status_code == 403
        assert anon.get("/api/apps", headers={"authorization": "Bearer s3cret-T0ken"}).status_code == 200
        visit = anon.get("/?token=s3cret-T0ken")
        assert visit.status_code == 303 and visit.headers["location"] == "/"
        assert "HttpOnly" in visit.headers["set-cookie"] and "SameSite=Strict" in visit.headers["set-cookie"]
        assert anon.get("/api/apps").status_code == 200  # the cookie now carries it
        assert anon.post("/apps/echo/eval-sets/t").status_code == 201


def test_a_token_that_cannot_be_a_cookie_is_refused(agents_dir: Path) -> None:
    from agenteval.web import create_app

    with pytest.raises(ValueError, match="token"):
        create_app(agents_dir, token="a b;c")


TRAVERSALS = ["..", "%2e%2e", "%2E%2E", "..%2F..", "..%2f..%2fetc", "%2Fetc%2Fpasswd",
              "%2e%2e%2f%2e%2e", ".%2e", "..%5C..", "%00", "echo%2F..%2F..", "~root", ".agenteval"]


@pytest.mark.parametrize("bad", TRAVERSALS)
def test_path_traversal_in_every_path_parameter_is_refused(live: Live, bad: str) -> None:
    live.post("/apps/echo/eval-sets/smoke")
    sid = live.session()
    live.say(sid, "hello")
    live.post("/apps/echo/eval-sets/smoke/add-session",
              json={"eval_id": "c", "session_id": sid, "user_id": "u"})
    before = sorted(str(p) for p in live.agents_dir.parent.rglob("*"))
    gets = [f"/apps/{bad}/eval-sets", f"/apps/{bad}/users/u/sessions", f"/apps/echo/eval-sets/{bad}",
            f"/apps/echo/eval-sets/{bad}/eval-cases/c", f"/apps/echo/eval-sets/smoke/eval-cases/{bad}",
            f"/apps/echo/users/u/sessions/{bad}", f"/api/runs/{bad}", f"/api/runs/{bad}/cases",
            f"/api/runs/{bad}/export", f"/apps/echo/eval-results/{bad}", f"/static/{bad}"]
    for path in gets:
        status, _ = raw(live, "GET", path)
        assert status in (400, 404), (path, status)
    for method, path, body in (("POST", f"/apps/echo/eval-sets/{bad}", None),
                               ("POST", f"/apps/{bad}/eval-sets/x", None),
                               ("POST", f"/apps/echo/eval-sets/{bad}/add-session",
                                json.dumps({"eval_id": "z", "session_id": sid, "user_id": "u"})),
                               ("PUT", f"/apps/echo/eval-sets/{bad}/eval-cases/c", "{}"),
                               ("DELETE", f"/apps/echo/eval-sets/smoke/eval-cases/{bad}", None),
                               ("DELETE", f"/apps/echo/users/u/sessions/{bad}", None),
                               ("POST", f"/apps/echo/users/u/sessions/{bad}/messages", '{"text": "hi"}'),
                               ("POST", f"/apps/echo/eval-sets/{bad}/run", "{}")):
        status, _ = raw(live, method, path, body=body)
        assert status in (400, 404, 405), (method, path, status)
    assert sorted(str(p) for p in live.agents_dir.parent.rglob("*")) == before  # nothing written


def test_symbolic_links_out_of_the_agent_folder_are_not_followed(live: Live, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.evalset.json"
    secret.write_text(json.dumps({"eval_set_id": "secret", "eval_cases": []}))
    os.symlink(secret, live.agents_dir / "echo" / "leak.evalset.json")
    assert "leak" not in live.get("/apps/echo/eval-sets").json()
    assert live.get("/apps/echo/eval-sets/leak").status_code == 404
    assert live.post("/apps/echo/eval-sets/leak").status_code == 400
    assert live.put("/apps/echo/eval-sets/leak/eval-cases/c", json={"eval_id": "c", "conversation": []}) \
        .status_code == 404
    os.symlink(outside, live.agents_dir / "dice" / ".agenteval")
    r = live.post("/apps/dice/users/u/sessions", json={})
    assert r.status_code == 400 and "outside" in r.json()["detail"]
    assert sorted(p.name for p in outside.iterdir()) == ["secret.evalset.json"]
    assert json.loads(secret.read_text())["eval_cases"] == []


def test_strings_from_agents_and_files_are_returned_as_data(live: Live) -> None:
    live.post("/apps/echo/eval-sets/smoke")
    sid = live.session()
    turn = live.post(f"/apps/echo/users/u/sessions/{sid}/messages", json={"text": PAYLOAD})
    assert turn.headers["content-type"] == "application/json"
    assert turn.headers["x-content-type-options"] == "nosniff"
    assert turn.json()["response"] == f"echo: {PAYLOAD}"  # as data, unchanged
    r = live.post("/apps/echo/eval-sets/smoke/add-session", json={"eval_id": PAYLOAD, "session_id": sid,
                                                                   "user_id": "u"})
    assert r.status_code == 201 and r.json()["eval_id"] == PAYLOAD
    started = live.post("/apps/echo/eval-sets/smoke/run", json={"criteria": {"response_match_score": 0.5}})
    result_id = live.events(started.json()["run_id"])[-1]["result_ids"][0]
    rows = live.get(f"/api/runs/{result_id}/cases")
    assert rows.json()[0]["eval_id"] == PAYLOAD and rows.headers["content-type"] == "application/json"
    html = live.get(f"/api/runs/{result_id}/export").text
    assert "<script>alert(1)" not in html and "onerror=alert" not in html.replace("onerror=alert(2)&gt;", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
