"""In a real browser: the Runs page with an agent's run history that cannot be read names it
instead of saying there are no runs; the Sessions tab names a session file that cannot be read
beside the sessions it lists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.web.api_support import ECHO_AGENT
from tests.web.browser_support import fresh_page, serve
from tests.web.test_browser import app_factory, browser, executable  # noqa: F401 (fixtures)

expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect


def test_the_runs_page_names_a_history_that_cannot_be_read(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    store = tmp_path / "echo" / ".agenteval"
    store.mkdir(parents=True)
    (tmp_path / "echo" / "agent.py").write_text(ECHO_AGENT)
    (store / "history.sqlite").write_bytes(b"not a database" * 100)
    with serve(app_factory(tmp_path)) as url, fresh_page(browser, 10_000) as page:
        page.goto(url + "/#/runs")
        box = page.locator(".page .error-box")
        expect(box).to_contain_text("Not listed (their run history cannot be read): ")
        expect(box).to_contain_text(f"{store / 'history.sqlite'}: cannot use the run database")
        assert page.errors == []


def test_the_sessions_tab_names_a_session_file_that_cannot_be_read(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    folder = tmp_path / "echo" / ".agenteval" / "sessions"
    folder.mkdir(parents=True)
    (tmp_path / "echo" / "agent.py").write_text(ECHO_AGENT)
    (folder / "bad.json").write_text("{ not json")
    with serve(app_factory(tmp_path)) as url, fresh_page(browser, 10_000) as page:
        page.goto(url + "/#/app/echo")
        page.fill("#composer textarea, textarea", "hello")
        page.keyboard.press("Enter")
        expect(page.locator(".sessions li")).to_have_count(1)  # the session just made is listed
        box = page.locator(".tabbody .error-box")
        expect(box).to_contain_text(f"Not listed (their files cannot be read): {folder / 'bad.json'}: ")
        assert page.errors == []
