"""Two browser tabs editing one eval set's case (see test_browser.py): the second save, over the
first, is refused with a message and the first tab's edit kept; a tab loaded before the other
saved edits the case as it is saved now, not as it was loaded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.web.test_browser import (  # noqa: F401 (fixtures)
    agents_dir,
    base_url,
    browser,
    executable,
    page,
)

expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect


def _turn(text: str, answer: str) -> dict[str, Any]:
    return {"invocation_id": "i1", "user_content": {"role": "user", "parts": [{"text": text}]},
            "final_response": {"role": "model", "parts": [{"text": answer}]}}


def _answer(path: Path) -> str:
    turn = json.loads(path.read_text())["eval_cases"][0]["conversation"][0]
    text: str = turn["final_response"]["parts"][0]["text"]
    return text


def _edit_answer(tab: Any, text: str) -> None:
    tab.click("#edit-case")
    tab.locator(".edit-response").first.fill(text)
    tab.click("#save-case")


def test_a_save_over_another_tabs_save_is_refused_not_lost(page: Any, base_url: str,  # noqa: F811
                                                          agents_dir: Path) -> None:  # noqa: F811
    path = agents_dir / "shop" / "tabs.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "tabs", "eval_cases": [
        {"eval_id": "t", "conversation": [_turn("hello", "Hello!")]}]}))
    address = base_url + "/#/app/shop/evalsets/tabs/cases/t"
    other = page.context.new_page()
    other_errors: list[str] = []
    other.on("pageerror", lambda e: other_errors.append(str(e)))
    late = page.context.new_page()
    for tab in (page, other, late):
        tab.goto(address)
        tab.wait_for_selector("#edit-case")
    # both tabs edit; the first saves, then the second: refused, named, its edits still on screen
    page.click("#edit-case")
    other.click("#edit-case")
    page.locator(".edit-response").first.fill("Hello from tab one.")
    page.click("#save-case")
    expect(page.locator(".toast").last).to_contain_text("case saved")
    assert _answer(path) == "Hello from tab one."
    other.locator(".edit-response").first.fill("Hello from tab two.")
    other.click("#save-case")
    toast = other.locator(".toast.bad").last
    expect(toast).to_contain_text("409")
    expect(toast).to_contain_text("case 't' of eval set 'tabs' was changed since it was read")
    expect(other.locator(".edit-response").first).to_have_value("Hello from tab two.")
    assert _answer(path) == "Hello from tab one."
    # a tab loaded before that save, which only now begins to edit: it edits the saved case
    late.click("#edit-case")
    expect(late.locator(".edit-response").first).to_have_value("Hello from tab one.")
    expect(late.locator(".toast").last).to_contain_text("was changed since this page was loaded")
    late.locator(".edit-response").first.fill("Hello from the late tab.")
    late.click("#save-case")
    expect(late.locator(".toast").last).to_contain_text("case saved")
    assert _answer(path) == "Hello from the late tab."
    # the first tab edits again: it reads the case as the late tab saved it, and saves over that
    _edit_answer(page, "Hello, once more.")
    expect(page.locator("#save-case")).to_have_count(0)
    assert _answer(path) == "Hello, once more."
    assert not page.errors and not other_errors


def test_a_delete_of_a_case_another_tab_saved_is_refused(page: Any, base_url: str,  # noqa: F811
                                                        agents_dir: Path) -> None:  # noqa: F811
    """A tab loaded before another saved the case, and one that began editing before that save:
    "Delete case" is refused in both, saying why, the saved edit kept; once opened again it deletes."""
    path = agents_dir / "shop" / "gone.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "gone", "eval_cases": [
        {"eval_id": "g", "conversation": [_turn("hello", "Hello!")]}]}))
    address = base_url + "/#/app/shop/evalsets/gone/cases/g"
    other, editing = page.context.new_page(), page.context.new_page()
    for tab in (page, other, editing):
        tab.goto(address)
        tab.wait_for_selector("#edit-case")
        tab.on("dialog", lambda d: d.accept())
    editing.click("#edit-case")
    expect(editing.locator("#save-case")).to_be_visible()
    editing.click("text=Cancel")
    _edit_answer(other, "Saved in the other tab.")
    expect(other.locator(".toast").last).to_contain_text("case saved")
    for tab in (page, editing):
        tab.click("#delete-case")
        toast = tab.locator(".toast.bad").last
        expect(toast).to_contain_text("changed since")
        expect(toast).to_contain_text("'g'" if tab is editing else "case g")
        assert _answer(path) == "Saved in the other tab."
    page.reload()
    page.wait_for_selector("#delete-case")
    page.click("#delete-case")
    expect(page.locator(".toast").last).to_contain_text("case deleted")
    assert json.loads(path.read_text())["eval_cases"] == []
    assert not page.errors
