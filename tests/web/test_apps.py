"""Agents and criteria over real HTTP: discovery like `adk web`, a broken agent listed with its
error while the server stays up, and every criterion offered to the metric dialog."""

from __future__ import annotations

import os
from pathlib import Path

from tests.web.api_support import ECHO_AGENT, Live


def test_agents_are_listed_with_their_kind_and_a_broken_one_with_its_error(live: Live) -> None:
    apps = {a["name"]: a for a in live.get("/api/apps").json()}
    assert sorted(apps) == ["broken", "dice", "echo", "slow"]  # not hidden, not folders without agent.py
    assert apps["echo"] == {"name": "echo", "kind": "callable", "error": None}
    assert apps["dice"]["kind"] == "builtin"
    assert apps["broken"]["kind"] is None
    assert "ImportError: this agent cannot be imported" in apps["broken"]["error"]
    assert live.get("/list-apps").json() == ["broken", "dice", "echo", "slow"]
    r = live.post("/apps/broken/users/u/sessions", json={})
    assert r.status_code == 400 and "cannot be loaded" in r.json()["detail"]
    assert live.get("/api/apps").status_code == 200  # still up


def test_an_agent_edited_while_the_server_runs_is_imported_again(live: Live) -> None:
    """A fixed agent that failed to import loads, and an edited agent's next turn runs the
    edit (an agent was imported once and kept: the fix was not seen until a restart, and a
    run started from the page ran the code as it was when first used)."""
    assert live.get("/api/apps").json()[0]["name"] == "broken"
    (live.agents_dir / "broken" / "agent.py").write_text(ECHO_AGENT.replace("echo: ", "fixed: "))
    (live.agents_dir / "broken" / "helper.py").write_text("X = 1\n")
    apps = {a["name"]: a for a in live.get("/api/apps").json()}
    assert apps["broken"] == {"name": "broken", "kind": "callable", "error": None}
    session = live.session("broken")
    assert "fixed: hi" in str(live.say(session, "hi", app="broken"))
    (live.agents_dir / "broken" / "agent.py").write_text(ECHO_AGENT.replace("echo: ", "edited: "))
    assert "edited: again" in str(live.say(session, "again", app="broken"))
    (live.agents_dir / "echo" / "agent.py").write_text("def root_agent(:\n")
    apps = {a["name"]: a for a in live.get("/api/apps").json()}
    assert "SyntaxError" in apps["echo"]["error"]


def test_an_agent_folder_linked_from_outside_is_not_offered(live: Live, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "agent.py").write_text(ECHO_AGENT)
    os.symlink(outside, live.agents_dir / "linked")
    assert "linked" not in live.get("/list-apps").json()
    assert live.get("/apps/linked/eval-sets").status_code == 404


def test_every_criterion_is_offered_with_its_range_and_default(live: Live) -> None:
    criteria = {c["name"]: c for c in live.get("/api/criteria").json()}
    assert len(criteria) >= 18
    assert criteria["tool_trajectory_avg_score"]["default_threshold"] == 1.0
    assert criteria["response_match_score"]["default_threshold"] == 0.8
    assert criteria["final_response_match_v2"]["judged"] is True
    assert criteria["tool_trajectory_avg_score"]["judged"] is False
    assert criteria["token_usage_v1"]["informational"] is True
    assert all(c["description"] for c in criteria.values())


def test_the_page_and_the_api_docs_are_served(live: Live) -> None:
    page = live.get("/")
    if page.status_code == 200:  # the page ships beside the server (web/static)
        assert page.headers["content-type"].startswith("text/html")
        assert "default-src 'self'" in page.headers["content-security-policy"]
    else:
        assert page.status_code == 404 and "not installed" in page.json()["detail"]
    assert live.get("/openapi.json").json()["info"]["title"] == "agenteval web"
    assert live.get("/static/../agent.py").status_code == 404


def test_a_plugin_docstring_utf8_cannot_hold_is_offered_as_json_can_hold_it() -> None:
    # A lone surrogate in a plugin criterion's docstring failed the criteria list's JSON reply
    # (set after the class is made: Python refuses one in a class body's docstring).
    from agenteval.criteria import Criterion
    from agenteval.web.routes.apps import _description

    class Odd(Criterion):
        pass

    Odd.__doc__ = "Says \ud800 odd things."

    assert _description("odd", Odd, "") == "Says \ufffd odd things."
