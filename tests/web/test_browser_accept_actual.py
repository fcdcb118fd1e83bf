"""'Accept actual turn as expected' writes a run's answer only under the question it answered, in
a real browser (see test_browser.py): when the set's turn was edited after the run (it now asks
something else), the page says so and the file is left as it is. It wrote the old question's
answer as the new question's expected one."""

from __future__ import annotations

import json
import time
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
from tests.web.test_browser_edges import api

expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect


def _set(question: str) -> str:
    turn = {"invocation_id": "i1", "user_content": {"role": "user", "parts": [{"text": question}]},
            "final_response": {"role": "model", "parts": [{"text": "It is 25°C and cloudy in Paris."}]}}
    return json.dumps({"eval_set_id": "accept", "eval_cases": [{"eval_id": "w", "conversation": [turn]}]})


def test_accept_writes_nothing_under_a_question_the_run_did_not_ask(page: Any, base_url: str,  # noqa: F811
                                                                    agents_dir: Path) -> None:  # noqa: F811
    path = agents_dir / "shop" / "accept.evalset.json"
    path.write_text(_set("weather in paris"))
    page.goto(base_url + "/#/app/shop/evalsets/accept")
    run = api(page, "/apps/shop/eval-sets/accept/run", "POST", {})["run_id"]
    deadline = time.monotonic() + 20
    while api(page, f"/api/runs/{run}").get("state") != "finished" and time.monotonic() < deadline:
        time.sleep(0.2)
    path.write_text(_set("book a table"))  # the turn edited after the run
    before = path.read_bytes()
    page.goto(base_url + f"/#/runs/{run}/cases/w")
    page.click("#inv-0 .accept")
    said = ('turn 0 of w in accept now asks "book a table", not "weather in paris" as in this run: '
            "nothing written")
    expect(page.locator(".toast.bad").last).to_contain_text(said)
    assert path.read_bytes() == before
    assert not page.errors
