"""The run dialog refuses a number box left empty or holding no number, naming the box, in a real
browser (see test_browser.py): an empty threshold was sent as 0 (every case passed that
criterion), an empty or zero samples or runs box as its default, and nothing said so."""

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

TURN = {"invocation_id": "i1", "user_content": {"role": "user", "parts": [{"text": "weather in paris"}]},
        "final_response": {"role": "model", "parts": [{"text": "It is 21°C and sunny in Paris."}]}}


def test_a_number_box_that_holds_no_number_is_named_and_nothing_runs(page: Any, base_url: str,  # noqa: F811
                                                                      agents_dir: Path) -> None:  # noqa: F811
    (agents_dir / "shop" / "numbers.evalset.json").write_text(json.dumps(
        {"eval_set_id": "numbers", "eval_cases": [{"eval_id": "w", "conversation": [TURN]}]}))
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.url) if r.method == "POST" else None)
    page.goto(base_url + "/#/app/shop/evalsets/numbers")
    page.click("#run-eval")
    toast = page.locator(".toast.bad").last
    threshold = '[data-threshold="response_match_score"]'
    steps = [(threshold, "", "response_match_score: threshold: empty or not a number"),
             (threshold, "0.5", None),
             ("#num-runs", "0", "Runs per case: 0 is below 1"),
             ("#num-runs", "2.5", "Runs per case: 2.5 is not a whole number")]
    for selector, value, said in steps:
        page.fill(selector, value)
        if said:
            page.click("#start-run")
            expect(toast).to_contain_text(said)
    page.fill("#num-runs", "1")
    page.check('[data-criterion="final_response_match_v2"]')
    page.fill('[data-samples="final_response_match_v2"]', "")
    page.click("#start-run")
    expect(toast).to_contain_text("final_response_match_v2: samples: empty or not a number")
    expect(page.locator("dialog#dialog")).to_be_visible()  # still open, to be put right
    assert not [u for u in posted if u.endswith("/run")] and not page.errors
