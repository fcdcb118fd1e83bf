"""Every form control of every page has a name a screen reader says (in a real browser, see
test_browser.py): an `aria-label`, a `<label>` around it or pointing at it, or a title. A
placeholder does not count: it is gone once the box holds a value, and a screen reader then
says a bare number ("spin button, 0.8") without the criterion or filter it belongs to."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenteval.store import record_run
from tests.helpers import call, eval_set, inv
from tests.result_builders import case, result
from tests.web.browser_support import serve_agents

T = "tool_trajectory_avg_score"
PARIS = [call("get_weather", city="Paris", unit="celsius")]
expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect

# The shown form controls that have no name but (at most) a placeholder, as a line each.
UNNAMED = """() => [...document.querySelectorAll("input:not([type=hidden]), select, textarea")]
  .filter((e) => e.offsetParent !== null || e.closest("dialog[open]"))
  .filter((e) => !e.getAttribute("aria-label") && !e.getAttribute("aria-labelledby") && !e.title
    && !e.closest("label") && !(e.id && document.querySelector(`label[for="${CSS.escape(e.id)}"]`)))
  .map((e) => `${location.hash}: ${e.outerHTML.slice(0, 120)}`)"""


@pytest.fixture(scope="module")
def base_url(browser_agents: Path) -> Iterator[str]:
    agents = browser_agents
    shop = agents / "shop"
    es = eval_set("smoke", {"paris": [inv("weather in paris", "It is 21°C and sunny in Paris.", PARIS)]})
    (shop / "smoke.evalset.json").write_text(json.dumps(es.model_dump(mode="json", exclude_none=True)),
                                             encoding="utf-8")
    for k, score in enumerate((1.0, 0.0)):
        record_run(shop, [result([case("paris", {T: score}, calls=PARIS, expected_calls=PARIS)],
                                 f"smoke_r{k}", "smoke", created=1_700_000_000.0 + k)])
    with serve_agents(agents) as url:
        yield url


def test_every_form_control_has_a_name(page: Any, base_url: str) -> None:
    """The chat, eval set (its case boxes, a session added as a case, the case editor, the run
    dialog: criterion, threshold, argument matchers, runs per case), run list, run, explore (the
    score boxes), case, matrix and compare pages."""
    unnamed: list[str] = []

    def look() -> None:
        page.wait_for_timeout(300)  # the page's late parts (menus filled by a request)
        unnamed.extend(page.evaluate(UNNAMED))

    page.goto(base_url + "/#/app/shop")
    page.fill("#chat-input", "weather in paris")
    page.click("#send")
    page.wait_for_selector('.turn[data-turn="0"] .msg.agent')
    look()
    page.goto(base_url + "/#/app/shop/evalsets/smoke/cases/paris")
    page.wait_for_selector("#new-case-id")
    look()
    page.click("#edit-case")
    page.wait_for_selector(".call-name")
    look()
    page.goto(base_url + "/#/app/shop/evalsets/smoke")
    page.click("text=Run evaluation (all)…")
    page.wait_for_selector("#start-run")
    page.click("details.argsmatch summary >> nth=0")
    look()
    page.keyboard.press("Escape")
    for route in ("runs", "runs/smoke_r1", "runs/smoke_r1/explore", "runs/smoke_r1/cases/paris",
                  "matrix?runs=smoke_r0,smoke_r1", "compare/smoke_r0/smoke_r1"):
        page.goto(f"{base_url}/#/{route}")
        page.wait_for_selector("#view h2, #view h1")
        look()
    assert unnamed == []
    # the score boxes a user fills by ear
    expect(page.get_by_role("spinbutton", name="lowest score")).to_have_count(0)
    page.goto(base_url + "/#/runs/smoke_r1/explore")
    expect(page.get_by_role("spinbutton", name="lowest score", exact=True)).to_be_visible()
    expect(page.get_by_role("spinbutton", name="highest score", exact=True)).to_be_visible()
