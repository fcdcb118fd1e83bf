"""The case editor keeps what it does not show, in a real browser (see test_browser.py): an
edited turn's calls keep every key they were read with (`will_continue`, args left out or null),
an argument renamed onto another's name is refused, not merged over it, and a call removed or
moved takes its recorded response with it."""

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


def _set(calls: list[dict[str, Any]]) -> dict[str, Any]:
    events = [{"author": "root_agent", "content": {"role": "model", "parts": [{"function_call": c}]}}
              for c in calls]
    turn = {"invocation_id": "i1", "user_content": {"role": "user", "parts": [{"text": "the time"}]},
            "final_response": {"role": "model", "parts": [{"text": "noon"}]},
            "intermediate_data": {"invocation_events": events}}
    return {"eval_set_id": "calls", "eval_cases": [{"eval_id": "t", "conversation": [turn]}]}


def _calls(path: Path) -> list[dict[str, Any]]:
    events = json.loads(path.read_text())["eval_cases"][0]["conversation"][0]["intermediate_data"]
    return [e["content"]["parts"][0]["function_call"] for e in events["invocation_events"]]


def test_an_edited_call_keeps_what_the_editor_does_not_show(page: Any, base_url: str,  # noqa: F811
                                                            agents_dir: Path) -> None:  # noqa: F811
    path = agents_dir / "shop" / "calls.evalset.json"
    path.write_text(json.dumps(_set([
        {"name": "get_time"}, {"name": "get_date", "args": None},
        {"name": "get_weather", "args": {"city": "Paris", "unit": "c"}, "will_continue": False}])))
    page.goto(base_url + "/#/app/shop/evalsets/calls/cases/t")
    page.click("#edit-case")
    names = page.locator(".arg-name")
    expect(names).to_have_count(2)
    # 'unit' renamed 'city': refused (it dropped city's value), the input back to 'unit'
    names.nth(1).fill("city")
    names.nth(1).press("Tab")
    toast = page.locator(".toast.bad").last
    expect(toast).to_contain_text("Turn 1, get_weather: there is an argument city already")
    expect(names.nth(1)).to_have_value("unit")
    names.nth(1).fill(" ")
    names.nth(1).press("Tab")
    expect(page.locator(".toast.bad").last).to_contain_text("an argument needs a name")
    expect(names.nth(1)).to_have_value("unit")
    page.locator(".arg-value").nth(1).fill('"f"')
    page.click("#save-case")
    expect(page.locator("#save-case")).to_have_count(0)
    assert _calls(path) == [
        {"name": "get_time"}, {"name": "get_date", "args": None},
        {"name": "get_weather", "args": {"city": "Paris", "unit": "f"}, "will_continue": False}]
    assert not page.errors


def _responses(path: Path, case: int) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())["eval_cases"][case]["conversation"][0]["intermediate_data"]
    return [p["function_response"] for e in data["invocation_events"] for p in e["content"]["parts"]
            if "function_response" in p]


def test_a_removed_or_moved_call_takes_its_recorded_response(page: Any, base_url: str,  # noqa: F811
                                                             agents_dir: Path) -> None:  # noqa: F811
    """Calls without ids are paired with responses by position (`tool_calls_with_responses`): a
    removed call's response was left behind and became the next call's (get_time's 'noon'
    served to get_weather by a mocked run); a call moved up took the other's response."""
    time = {"name": "get_time", "response": {"t": "noon"}}
    weather = {"name": "get_weather", "response": {"sky": "sunny"}}
    cases = []
    for eval_id in ("removed", "moved"):
        turn = _set([{"name": "get_time"}, {"name": "get_weather", "args": {"city": "Paris"}}])
        events = turn["eval_cases"][0]["conversation"][0]["intermediate_data"]["invocation_events"]
        events += [{"author": "root_agent", "content": {"role": "user", "parts": [{"function_response": r}]}}
                   for r in (time, weather)]
        cases.append({**turn["eval_cases"][0], "eval_id": eval_id})
    path = agents_dir / "shop" / "responses.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "responses", "eval_cases": cases}))
    page.goto(base_url + "/#/app/shop/evalsets/responses/cases/removed")
    page.click("#edit-case")
    page.locator('.call[data-call="0"] button[title="remove call"]').click()
    expect(page.locator(".call")).to_have_count(1)
    page.click("#save-case")
    expect(page.locator("#save-case")).to_have_count(0)
    assert _responses(path, 0) == [weather]
    page.goto(base_url + "/#/app/shop/evalsets/responses/cases/moved")
    expect(page.locator("#case-editor h3")).to_have_text("Case moved")  # (not the last case's page)
    page.click("#edit-case")
    page.locator('.call[data-call="1"] button[title="move up"]').click()
    expect(page.locator(".call-name").first).to_have_value("get_weather")
    page.click("#save-case")
    expect(page.locator("#save-case")).to_have_count(0)
    assert [c["name"] for c in _calls_of(path, 1)] == ["get_weather", "get_time"]
    assert _responses(path, 1) == [weather, time]
    assert not page.errors


def _calls_of(path: Path, case: int) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())["eval_cases"][case]["conversation"][0]["intermediate_data"]
    return [p["function_call"] for e in data["invocation_events"] for p in e["content"]["parts"]
            if "function_call" in p]


def test_select_all_selects_every_case_of_a_long_set(page: Any, base_url: str,  # noqa: F811
                                                     agents_dir: Path) -> None:  # noqa: F811
    """A set of 250 cases shows 200 rows at first: "select all" ticked those 200 ("Run
    evaluation (200)…" ran them, the 50 others left out unseen) and the rows shown later were
    unticked under a ticked "select all"."""
    turn = _set([])["eval_cases"][0]["conversation"]
    cases = [{"eval_id": f"c{i:03d}", "conversation": turn} for i in range(250)]
    long = {"eval_set_id": "long", "eval_cases": cases}
    (agents_dir / "shop" / "long.evalset.json").write_text(json.dumps(long))
    page.goto(base_url + "/#/app/shop/evalsets/long")
    expect(page.locator("table.cases tbody tr")).to_have_count(200)
    expect(page.locator("text=Show more (200 of 250 shown)")).to_be_visible()
    page.check('table.cases thead input[type="checkbox"]')
    expect(page.locator("#run-eval")).to_have_text("Run evaluation (250)…")
    page.click("text=Show more")
    expect(page.locator("table.cases tbody tr")).to_have_count(250)
    expect(page.locator('input[data-case="c249"]')).to_be_checked()
    page.uncheck('input[data-case="c249"]')
    expect(page.locator("#run-eval")).to_have_text("Run evaluation (249)…")
    expect(page.locator('table.cases thead input[type="checkbox"]')).not_to_be_checked()
    page.uncheck('table.cases thead input[type="checkbox"]')
    page.check('table.cases thead input[type="checkbox"]')
    expect(page.locator("#run-eval")).to_have_text("Run evaluation (250)…")
    assert not page.errors


def test_a_call_moved_past_one_without_a_response_keeps_its_own(page: Any, base_url: str,  # noqa: F811
                                                                agents_dir: Path) -> None:  # noqa: F811
    """get_time has the only recorded response; moved below get_weather, position alone would
    hand it to get_weather (the first call without an id): the moved call and its response are
    paired by an id instead, and the other pairs are left as they were."""
    from agenteval.datasets import load_eval_set

    time = {"name": "get_time", "response": {"t": "noon"}}
    for k, (call, direction) in enumerate([(0, "move down"), (1, "move up")]):
        turn = _set([{"name": "get_time"}, {"name": "get_weather", "args": {"city": "Paris"}}])
        events = turn["eval_cases"][0]["conversation"][0]["intermediate_data"]["invocation_events"]
        events.append({"author": "root_agent",
                       "content": {"role": "user", "parts": [{"function_response": time}]}})
        path = agents_dir / "shop" / f"past{k}.evalset.json"
        path.write_text(json.dumps({**turn, "eval_set_id": f"past{k}"}))
        # (a query of its own loads the page afresh: a hash change alone left the last set's
        # case on screen, whose Edit button could be clicked before the new one was drawn)
        page.goto(base_url + f"/?set=past{k}#/app/shop/evalsets/past{k}/cases/t")
        expect(page.locator("#case-editor h3")).to_have_text("Case t")
        page.click("#edit-case")
        page.locator(f'.call[data-call="{call}"] button[title="{direction}"]').click()
        expect(page.locator(".call-name").first).to_have_value("get_weather")
        page.click("#save-case")
        expect(page.locator("#save-case")).to_have_count(0)
        pairs = load_eval_set(path).eval_cases[0].conversation[0].tool_calls_with_responses()
        assert [(c.name, r.response if r else None) for c, r in pairs] == [
            ("get_weather", None), ("get_time", {"t": "noon"})]
    assert not page.errors
