"""In a real browser: the eval set's "Add current session" says how many turns the case will
get (the session's answered turns: one the agent failed is left out)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.web.browser_support import fresh_page, serve, write_agents
from tests.web.test_browser import app_factory, browser, executable, send  # noqa: F401 (fixtures)

expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect


@contextmanager
def _eval_tab_after(browser: Any, tmp_path: Path, *messages: str) -> Iterator[Any]:  # noqa: F811
    """A page whose chat session sent `messages`, on its Eval tab with an empty set open."""
    agents = write_agents(tmp_path / "agents")
    (agents / "shop" / "smoke.evalset.json").write_text('{"eval_set_id": "smoke", "eval_cases": []}')
    with serve(app_factory(agents)) as url, fresh_page(browser, 10_000) as page:
        page.goto(url + "/#/app/shop")
        for i, message in enumerate(messages):
            send(page, message, i)
        page.click('[data-tab="eval"]')
        page.click(".evalsets a:has-text('smoke')")
        yield page


def test_adding_a_session_counts_only_the_turns_the_case_gets(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    with _eval_tab_after(browser, tmp_path, "weather in Paris?", "please crash") as page:
        form = page.locator("#add-session").locator("..")
        expect(form).to_contain_text("(1 answered turn of 2) as case")  # it said "(2 turns)"
        page.click("#add-session")
        expect(page.locator("#case-editor")).to_contain_text("Turn 1")
        expect(page.locator("#case-editor")).not_to_contain_text("Turn 2")
        assert page.errors == []


def test_one_turn_is_one_turn(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    with _eval_tab_after(browser, tmp_path, "weather in Paris?") as page:
        expect(page.locator("#add-session").locator("..")).to_contain_text("(1 turn) as case")  # "(1 turns)"
        assert page.errors == []
