"""Deleting a recorded run from its page (see test_browser.py): asked first, named, gone from
the history and its file; the confirmation dismissed deletes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agenteval.store import RunStore, record_run
from tests.result_builders import case, result
from tests.web.test_browser import (  # noqa: F401 (fixtures)
    agents_dir,
    base_url,
    browser,
    executable,
    page,
)

expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect
T = "tool_trajectory_avg_score"


def test_a_run_is_deleted_from_its_page_once_confirmed(page: Any, base_url: str,  # noqa: F811
                                                      agents_dir: Path) -> None:  # noqa: F811
    shop = agents_dir / "shop"
    record_run(shop, [result([case("paris", {T: 1.0})], "keep_r1", "gone", created=1_700_000_000.0)])
    (path,) = [Path(p) for p in [RunStore(shop).resolve("keep_r1").result_path]]
    record_run(shop, [result([case("paris", {T: 0.0})], "bad_r2", "gone", created=1_700_000_100.0)])
    bad = RunStore(shop).resolve("bad_r2").result_path
    asked: list[str] = []
    answers = iter([False, True])

    def answer(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.accept() if next(answers) else dialog.dismiss()

    page.on("dialog", answer)
    page.goto(base_url + "/#/runs/bad_r2")
    page.wait_for_selector("#delete-run")
    page.click("#delete-run")  # dismissed: nothing deleted
    assert "Delete run bad_r2: eval set gone, 1 case," in asked[0] and "reviews" in asked[0]
    assert bad.is_file() and page.url.endswith("#/runs/bad_r2")
    page.focus("#delete-run")
    page.keyboard.press("Enter")  # (a button: reachable from the keyboard)
    expect(page.locator(".toast").last).to_contain_text("run bad_r2 deleted")
    page.wait_for_url("**/#/runs")
    expect(page.locator("a.mono", has_text="keep_r1")).to_have_count(1)
    expect(page.locator("a.mono", has_text="bad_r2")).to_have_count(0)
    assert not bad.exists() and path.is_file()
    assert [r.run_id for r in RunStore(shop).list_runs()] == ["keep_r1"]
    page.go_back()  # the deleted run's page again: said so, not a blank page
    expect(page.locator("#view")).to_contain_text("no run 'bad_r2'")
    assert not page.errors
