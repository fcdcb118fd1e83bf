"""The run history's edges in a real browser (see test_browser.py): the run matrix of runs whose
cases differ and with no run, a result file opened from the keyboard, the sessions listed.
Hand-made runs recorded in the `shop` agent's history."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenteval.store import record_run
from tests.helpers import eval_set, inv
from tests.result_builders import case, result
from tests.web.browser_support import serve_agents

T = "tool_trajectory_avg_score"
SLEEPY_AGENT = '''\
"""A callable agent taking 4 s a turn: a web run's cases are watched in flight together."""

import time


def root_agent(text):
    time.sleep(4)
    return "slept"
'''
expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect


@pytest.fixture(scope="module")
def base_url(browser_agents: Path) -> Iterator[str]:
    agents = browser_agents
    shop = agents / "shop"
    # run 2 has a case run 1 did not have
    record_run(shop, [result([case("paris", {T: 1.0})], "grow_r1", "grow", created=1_700_000_000.0)])
    record_run(shop, [result([case("paris", {T: 1.0}), case("added", {T: 0.0}, response="new")],
                             "grow_r2", "grow", created=1_700_000_100.0)])
    (agents / "sleepy").mkdir()
    (agents / "sleepy" / "agent.py").write_text(SLEEPY_AGENT, encoding="utf-8")
    slow = eval_set("slow", {f"c{i}": [inv(f"question {i}", "x")] for i in range(3)})
    (agents / "sleepy" / "slow.evalset.json").write_text(
        json.dumps(slow.model_dump(mode="json", exclude_none=True)), encoding="utf-8")
    for k in range(50):  # a page of the run list exactly
        record_run(agents / "dice", [result([case("roll", {T: 1.0})], f"page_r{k:02d}", "page",
                                            created=1_600_000_000.0 + k)])
    for k in range(52):  # 105 runs in all, and more from the tests: more than the compare menus list
        record_run(agents / "evil", [result([case("x", {T: 1.0})], f"old_r{k:02d}", "old",
                                            created=1_500_000_000.0 + k)])
    with serve_agents(agents) as url:
        yield url


def test_a_matrix_case_opens_in_a_run_that_has_it(page: Any, base_url: str) -> None:
    """A case that only a later run has: its name in the matrix opens it in that run (it led to
    the first run's page of it, a 404)."""
    page.goto(base_url + "/#/matrix?runs=grow_r1,grow_r2")
    page.wait_for_selector('table.matrix tr[data-case="added"]')
    assert "not in this run" in page.locator('tr[data-case="added"] td').nth(1).inner_text()
    page.click('tr[data-case="added"] td >> nth=0 >> a')
    page.wait_for_selector("text=Case added")
    assert "/runs/grow_r2/cases/added" in page.url
    assert page.locator(".error-box").count() == 0
    # a case both runs have still opens in the first
    page.go_back()
    page.click('table.matrix tr[data-case="paris"] td >> nth=0 >> a')
    page.wait_for_selector("text=Case paris")
    assert "/runs/grow_r1/cases/paris" in page.url


def test_a_result_file_is_opened_from_the_keyboard(page: Any, base_url: str, tmp_path: Path) -> None:
    """"Open result file…" is reached with Tab after the header's links and opens the file
    chooser with Enter (it was a label around a hidden input: Tab went past it)."""
    document = result([case("kbd", {T: 1.0})], "from_keyboard", "grow", created=1_700_000_200.0)
    opened = tmp_path / "from_keyboard.json"
    opened.write_text(document.model_dump_json(), encoding="utf-8")
    page.goto(base_url + "/#/runs")
    page.wait_for_selector("table.runs")
    page.focus("#nav-compare")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent").strip() == "Open result file…"
    # Enter asks the file input for its chooser (whether headless Chromium then reports the
    # chooser to Playwright varies from run to run: the input's click is what the page does)
    page.evaluate("""() => { window.__asked = 0;
      document.querySelector('#open-file').addEventListener('click', (e) => {
        window.__asked++; e.preventDefault(); }); }""")
    page.keyboard.press("Enter")
    # (polled from here: a polling predicate would be eval'd in the page, which its CSP refuses)
    deadline = time.monotonic() + 10
    while page.evaluate("window.__asked") != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert page.evaluate("window.__asked") == 1
    page.set_input_files("#open-file", str(opened))
    page.wait_for_selector(".run table.cases tbody tr")
    assert "from_keyboard" in page.locator(".run h2").inner_text()


def test_the_empty_matrix_says_where_runs_are_picked(page: Any, base_url: str) -> None:
    """The matrix with no run names the way to it, and that way leads there (it named a
    “Matrix with earlier runs” choice the run's page does not have)."""
    page.goto(base_url + "/#/matrix")
    hint = page.locator(".matrix-page p.muted").inner_text()
    page.goto(base_url + "/#/runs/grow_r2")
    via = re.search(r"choose “(.+?)”, then “(.+?)”", hint)
    assert via, hint
    page.click(f'a.btn:text-is("{via.group(1)}")')
    page.click("a.btn:text-matches('^" + via.group(2).replace("earlier runs", r"\\d+ earlier runs?") + "$')")
    page.wait_for_selector("table.matrix")
    assert page.locator("table.matrix thead th").count() == 3


def test_a_session_of_one_turn_is_listed_as_one_turn(page: Any, base_url: str) -> None:
    page.goto(base_url + "/#/app/shop")
    page.fill("#chat-input", "hello")
    page.click("#send")
    page.wait_for_selector('.turn[data-turn="0"] .msg.agent')
    listed = page.locator(".list.sessions li a").first
    listed.wait_for()
    assert listed.inner_text().endswith("· 1 turn"), listed.inner_text()


def test_a_case_opened_by_a_deep_link_names_its_agent_in_the_header(page: Any, base_url: str) -> None:
    """The header's agent picker says whose case it is (it stayed at "choose…", where the run,
    explore and matrix pages set it)."""
    page.goto(base_url + "/#/runs/grow_r2/cases/added")
    page.wait_for_selector(".case-result h2")
    expect(page.locator("#app-picker")).to_have_value("shop")


def test_a_score_filter_that_is_not_a_number_is_named_not_dropped(page: Any, base_url: str) -> None:
    """`min_score=abc` in the address, or `1e` typed in a score box (a number box shows no such
    value and reads as empty), searched without the filter and said nothing."""
    page.goto(base_url + "/#/runs/grow_r2/explore?min_score=abc")
    expect(page.locator(".search-results [role=alert]")).to_have_text(
        'Not searched: min_score "abc" is not a number.')
    expect(page.locator("#search-count")).to_have_count(0)
    assert "min_score=abc" in page.url  # the address still says what was asked
    page.fill('input[name="min_score"]', "0.5")
    page.keyboard.press("Tab")  # a score box searches when it changes
    expect(page.locator("#search-count")).to_have_text("1 of 2 cases")
    page.locator('input[name="max_score"]').focus()
    page.keyboard.type("1e")
    page.keyboard.press("Tab")
    alert = page.locator(".search-results [role=alert]")
    expect(alert).to_have_text("Not searched: max_score is not a number.")
    page.fill('input[name="max_score"]', "")
    page.keyboard.press("Tab")
    expect(page.locator("#search-count")).to_have_text("1 of 2 cases")


def test_the_run_list_offers_older_runs_only_when_there_are(page: Any, base_url: str) -> None:
    """50 runs, a page of them: no "older →" (it led to an empty table, and an address past the
    last run showed one too, saying nothing)."""
    page.goto(base_url + "/#/runs?app=dice")
    expect(page.locator("table.runs tbody tr")).to_have_count(50)
    expect(page.locator("#view a.btn", has_text="older")).to_have_count(0)
    page.goto(base_url + "/#/runs?app=dice&offset=49")
    expect(page.locator("table.runs tbody tr")).to_have_count(1)
    expect(page.locator("#view a.btn", has_text="older")).to_have_count(0)
    page.click("text=← newer")
    expect(page.locator("table.runs tbody tr")).to_have_count(50)  # from the newest again
    page.goto(base_url + "/#/runs?app=dice&offset=50")
    expect(page.locator(".empty-runs")).to_have_text("No runs past the first 50 matching these filters.")
    expect(page.locator("table.runs")).to_have_count(0)
    page.goto(base_url + "/#/runs?app=shop")
    expect(page.locator("table.runs tbody tr")).to_have_count(2)
    expect(page.locator("#view a.btn", has_text="older")).to_have_count(0)


def test_runs_ticked_on_two_pages_of_the_run_list_are_compared(page: Any, base_url: str) -> None:
    """A tick is kept in the address (`pick`) across the list's pages and a reload: with a long
    history the two runs to compare are seldom on one page (a tick was lost with its page)."""
    page.goto(base_url + "/#/runs?app=dice&offset=49")
    page.check('input[data-run="page_r00"]')
    expect(page.locator("#compare-selected")).to_have_text("Compare selected (1 of 2 picked)")
    page.click("text=← newer")
    expect(page.locator("table.runs tbody tr")).to_have_count(50)
    page.reload()
    expect(page.locator("#compare-selected")).to_have_text("Compare selected (1 of 2 picked)")
    page.check('input[data-run="page_r49"]')
    page.click("#compare-selected")
    page.wait_for_selector(".compare .counts")
    assert page.url.endswith("#/compare/page_r00/page_r49")  # the older is the baseline
    page.go_back()
    expect(page.locator('input[data-run="page_r49"]')).to_be_checked()


def test_a_web_run_says_how_many_case_runs_are_in_flight(page: Any, base_url: str) -> None:
    """Three cases run at once: the progress box says so ("running case 1 of 3: c0, c1 and 1
    more" read as one case in flight)."""
    page.goto(base_url + "/#/app/sleepy/evalsets/slow")
    page.click("text=Run evaluation (all)…")
    page.click("#start-run")
    step = page.locator("#dock .prog .pstep")
    expect(step).to_contain_text(re.compile(r"running 3 case runs: c\d, c\d and 1 more"), timeout=15_000)
    expect(page.locator("#dock .prog.done")).to_have_count(1, timeout=20_000)


def test_the_compare_menus_say_when_older_runs_are_not_listed(page: Any, base_url: str) -> None:
    """More runs than the menus list: the page says so and where any two can be picked (the
    older runs were left out of the menus silently)."""
    page.goto(base_url + "/#/compare")
    expect(page.locator("#cmp-a option")).to_have_count(100)
    expect(page.locator("#cmp-older")).to_contain_text("The 100 newest runs are listed.")
    expect(page.locator("#cmp-a option[value=old_r00]")).to_have_count(0)
    page.click("#cmp-older a")
    expect(page.locator("table.runs")).to_have_count(1)


def test_an_old_runs_compare_menu_offers_the_runs_before_it(page: Any, base_url: str) -> None:
    """"Compare with…" on a run older than its set's 50 newest lists the runs just before it
    too (it listed the 50 newest only: an old run's baseline was not there)."""
    page.goto(base_url + "/#/runs/old_r01")
    page.wait_for_selector("#compare-with option >> nth=1", state="attached")
    expect(page.locator("#compare-with option[value=old_r00]")).to_have_count(1)
    expect(page.locator("#compare-with option[value=old_r51]")).to_have_count(1)
    expect(page.locator("#compare-with option[value=old_r01]")).to_have_count(0)
    page.select_option("#compare-with", "old_r00")
    page.wait_for_selector(".compare .counts")
    assert page.url.endswith("#/compare/old_r00/old_r01")
