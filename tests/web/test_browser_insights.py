"""Looking into runs in a real browser (issue 27): failure groups, search and filters with keys to
jump between failures, a human review stored and shown again, the run matrix with its diffs and
"only changed", and a case re-run beside its first run. Hand-made runs recorded in the `shop`
agent's history; the re-run runs the scripted `shop` agent for real. Screenshots go to the
test's tmp folder (and to AGENTEVAL_SCREENSHOTS when set, to refresh docs/)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenteval.schema import (
    EvalCaseResult,
    EvalMetricResultPerInvocation,
    EvalStatus,
    JudgeRecord,
    MetricError,
)
from agenteval.store import record_run
from tests.helpers import call, eval_set, inv
from tests.result_builders import case, invocation, metric, result
from tests.web.browser_support import serve_agents, shot

T = "tool_trajectory_avg_score"
NO_JUDGE = "needs a judge model, none was given"
PARIS = [call("get_weather", city="Paris", unit="celsius")]


BOOKER_AGENT = '''\
"""A built-in agent whose tool has typed arguments (for the case editor)."""

from typing import Literal

from agenteval.agents import Agent


def book_table(city: str, party_size: int, unit: Literal["metric", "imperial"] = "metric",
               vegan: bool = False, extras: list[str] | None = None) -> str:
    """Book a table.

    Args:
        city: Where.
        party_size: How many people.
    """
    return "booked"


root_agent = Agent(name="booker", model="local", instruction="Book tables.", tools=[book_table])
'''


S, R = "safety_v1", "rubric_based_final_response_quality_v1"


def judged_case() -> EvalCaseResult:
    """Two turns judged by safety_v1 (turn 2 unsafe) and a rubric criterion (rubrics r1, r2)."""
    per = [EvalMetricResultPerInvocation(
        actual_invocation=invocation(f"question {i}", f"answer {i}"),
        expected_invocation=invocation(f"question {i}", f"answer {i}"),
        eval_metric_results=[metric(S, score), metric(R, 1.0)]) for i, score in enumerate((1.0, 0.0))]
    records = [JudgeRecord(metric_name=R, invocation_index=i, item=item, judge_model="j", prompt="p",
                           verdict="meets", score=1.0) for i in range(2) for item in ("r1", "r2")]
    records += [JudgeRecord(metric_name=S, invocation_index=i, judge_model="j", prompt="p",
                            verdict=("safe", "unsafe")[i], score=1.0 - i) for i in range(2)]
    return EvalCaseResult(eval_set_id="judged", eval_id="two_turns", session_id="s",
                          final_eval_status=EvalStatus.PASSED, overall_eval_metric_results=[
                              metric(S, 0.5), metric(R, 1.0)],
                          eval_metric_result_per_invocation=per, judge_records=records)


@pytest.fixture(scope="module")
def agents_dir(browser_agents: Path) -> Path:
    return browser_agents


@pytest.fixture(scope="module")
def base_url(agents_dir: Path) -> Iterator[str]:
    agents = agents_dir
    shop = agents / "shop"
    es = eval_set("smoke", {"paris": [inv("weather in paris", "It is 21°C and sunny in Paris.", PARIS)],
                            "hello": [inv("hello", "Hello! Ask me about the weather or to book a table.")]})
    (shop / "smoke.evalset.json").write_text(json.dumps(es.model_dump(mode="json", exclude_none=True)),
                                             encoding="utf-8")
    london = [call("get_weather", city="London", unit="celsius")]
    runs = [result([case("paris", {T: 1.0}, response="It is 21°C and sunny in Paris.", calls=PARIS,
                         expected_calls=PARIS, duration=1.5, tokens=40),
                    case("hello", {T: 1.0}, response="Hello!", duration=0.5, tokens=10)],
                   "smoke_r1", "smoke", created=1_700_000_000.0),
            result([case("paris", {T: 0.0, S: 1.0}, response="It is 14°C in London.", calls=london,
                         expected_calls=PARIS, duration=2.5, tokens=55),
                    case("hello", {T: 1.0}, response="Hello!", duration=0.4, tokens=12)],
                   "smoke_r2", "smoke", created=1_700_000_100.0)]
    for doc in runs:
        record_run(shop, [doc])
    dice = eval_set("tools", {"roll": [inv("roll a d20", "4", [call("roll", sides=20)])]})
    (agents / "dice" / "tools.evalset.json").write_text(
        json.dumps(dice.model_dump(mode="json", exclude_none=True)), encoding="utf-8")
    (agents / "booker").mkdir()
    (agents / "booker" / "agent.py").write_text(BOOKER_AGENT, encoding="utf-8")
    dinner = eval_set("bookings", {"dinner": [inv("book a table in Paris for 2", "Booked.",
                                                  [call("book_table", city="Paris", party_size=2)])]})
    data = dinner.model_dump(mode="json", exclude_none=True)
    data["eval_cases"][0]["final_session_state"] = {"booked": True}  # not edited: must stay as it is
    (agents / "booker" / "bookings.evalset.json").write_text(json.dumps(data), encoding="utf-8")
    record_run(shop, [result([judged_case()], "judged_r1", "judged", created=1_700_000_300.0)])
    repeated = [case("paris", {T: score}, response=answer, calls=PARIS, expected_calls=PARIS, run_index=k)
                for k, (score, answer) in enumerate([(1.0, "Sunny in Paris."), (0.0, "Rainy in Paris.")])]
    record_run(shop, [result(repeated, "again_r1", "again", created=1_700_000_200.0)])
    noeval = case("weather", {T: 1.0, "safety_v1": None},
                  metric_errors=[MetricError(metric_name="safety_v1", message=NO_JUDGE)])
    record_run(shop, [result([noeval], "noeval_r1", "noeval", created=1_700_000_400.0)])
    with serve_agents(agents) as url:
        yield url


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = os.environ.get("AGENTEVAL_SCREENSHOTS")
    return Path(folder) if folder else tmp_path / "shots"


def count_is(page: Any, prefix: str) -> None:
    page.locator("#search-count", has_text=prefix).wait_for()


def test_explore_groups_search_keys_and_review(page: Any, base_url: str, shots: Path) -> None:
    page.goto(base_url + "/#/runs/smoke_r2")
    page.click("#explore")
    page.wait_for_selector(".groups [data-reason]")
    assert page.inner_text(".groups") .count("get_weather.city") == 1
    # the reason's backquoted name is drawn as code, no backquote left in the text
    assert "1 case: get_weather.city differs" in page.inner_text(".groups").replace("\n", " ")
    assert page.inner_text(".groups li code") == "get_weather.city" and "`" not in page.inner_text(".groups")
    page.wait_for_selector("#search-count")
    assert page.inner_text("#search-count").startswith("2 of 2")
    # flaky across the history: paris passed in r1 and failed in r2
    page.wait_for_selector('.flaky tr[data-case="paris"]')
    # full text narrows the list, and the address keeps it
    page.fill('input[name="text"]', "london")
    count_is(page, "1 of 2")
    assert "text=london" in page.url
    page.fill('input[name="text"]', "")
    count_is(page, "2 of 2")
    page.select_option('select[name="sort"]', "latency")
    page.check('input[name="descending"]')
    page.wait_for_selector('.search tbody tr:first-child[data-case="paris"]')
    page.select_option('select[name="criterion"]', T)
    count_is(page, "1 of 2")
    page.click('button:has-text("Clear")')
    count_is(page, "2 of 2")
    # j jumps to the failing case, Enter opens it
    page.click("h2")
    page.keyboard.press("j")
    assert page.get_attribute(".search tr.sel", "data-case") == "paris"
    # a review: disagree with a comment, stored with the run, shown again after a reload
    page.once("dialog", lambda d: d.accept("London is wrong: the user asked for Paris"))
    page.click('.search tr[data-case="paris"] button[aria-label="disagree"]')
    page.wait_for_selector('.search tr[data-case="paris"] .review-note')
    shot(page, shots, "explore")
    page.reload()
    page.wait_for_selector('.search tr[data-case="paris"] .review-note')
    assert "London is wrong" in page.inner_text('.search tr[data-case="paris"] .review-note')
    page.click("h2")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_selector(".case-result")
    assert "/cases/paris" in page.url
    # the case page shows the review beside the verdict; a criterion no judge decided (the
    # trajectory's) is offered no review: `judge calibrate --from_reviews` would not use it
    from playwright.sync_api import expect
    page.wait_for_selector('.reviews [data-target="case"] .review-note')
    assert "London is wrong" in page.inner_text('.reviews [data-target="case"]')
    expect(page.locator(f'.reviews [data-target="{S}"]')).to_have_count(1)
    expect(page.locator(f'.reviews [data-target="{T}"]')).to_have_count(0)
    # a case run with no judged criterion says so
    page.goto(base_url + "/#/runs/smoke_r2/cases/hello")
    expect(page.locator(".reviews")).to_contain_text("This case run has no judged criterion.")
    expect(page.locator(f'.reviews [data-target="{T}"]')).to_have_count(0)
    assert page.locator(".reviews details").count() == 0  # nothing judged: no turns or rubrics to name
    shot(page, shots, "case-review-unjudged")
    # the run's case table marks the reviewed verdict (the comment on hover)
    page.goto(base_url + "/#/runs/smoke_r2")
    mark = page.wait_for_selector('tr[data-case="paris"] .review-mark[data-review="case"]')
    assert mark.inner_text().strip() == "✗" and "London is wrong" in (mark.get_attribute("title") or "")
    assert page.locator('tr[data-case="hello"] .review-mark').count() == 0  # not reviewed: no mark
    # a judged case run: each turn of safety_v1 and each rubric of each turn can be reviewed
    page.goto(base_url + "/#/runs/judged_r1/cases/two_turns")
    page.wait_for_selector(f'.reviews [data-target="{S}"]')
    # it passed: what counted against it is not called why it failed
    assert page.inner_text(".problems h3") == "What counted against it (the case passed)"
    page.click(f".reviews details:has(summary:has-text('{S}: by turn')) summary")
    page.once("dialog", lambda d: d.accept("turn 2 was fine"))
    page.click(f'.reviews [data-target="{S}@1"] button[aria-label="disagree"]')
    page.wait_for_selector(f'.reviews [data-target="{S}@1"] .review-note')
    page.click(f".reviews details:has(summary:has-text('{R}: by rubric')) summary")
    assert "turn 2 · rubric r2 (met)" in page.inner_text(f'.reviews [data-target="{R}@1/r2"]')
    page.once("dialog", lambda d: d.accept(""))
    page.click(f'.reviews [data-target="{R}@1/r2"] button[aria-label="agree"]')
    page.wait_for_selector(f'.reviews [data-target="{R}@1/r2"] .review-note')
    no_toasts(page)
    shot(page, shots, "case-review")
    page.reload()  # stored: the reviewed turns' lists open by themselves
    page.wait_for_selector(f'.reviews [data-target="{S}@1"] .review-note')
    # the judge verdict table marks each verdict a review covers: safety_v1 on turn 2, rubric r2 of turn 2
    page.wait_for_selector(".judges .review-mark")
    marks = page.evaluate("""() => [...document.querySelectorAll('.judges tbody tr')]
      .filter((tr) => tr.querySelector('.review-mark'))
      .map((tr) => [...tr.children].slice(0, 3).map((td) => td.textContent).join(' ')
                   + ' ' + tr.querySelector('.review-mark').textContent.trim())""")
    assert sorted(marks) == sorted([f"{S} 1  ✗", f"{R} 1 r2 ✓"]), marks


def test_matrix_diffs_only_changed_and_a_case_run_again(page: Any, base_url: str, shots: Path) -> None:
    page.goto(base_url + "/#/runs/smoke_r2/explore")
    page.wait_for_selector("#open-matrix")
    assert page.input_value("#app-picker") == "shop"  # a deep link shows the agent of the page
    # reviews of smoke_r2's paris run (its verdict and a criterion), stored from the page's origin
    # (a judged criterion: a review of one no judge decides is refused)
    for target, agreement, comment in (("", "disagree", "London is wrong"), (S, "agree", "")):
        assert page.evaluate("""(body) => fetch('/api/runs/smoke_r2/reviews', {method: 'PUT',
          headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)}).then((r) => r.ok)""",
            {"eval_id": "paris", "run_index": 0, "target": target, "agreement": agreement,
             "comment": comment})
    page.click("#open-matrix")
    page.wait_for_selector("table.matrix")
    # the matrix marks the reviewed verdicts as the run's case table does, the comment on hover
    paris = page.locator('table.matrix tr[data-case="paris"] td.cell')
    reviewed = paris.nth(1)
    mark = reviewed.locator('.review-mark[data-review="case"]')
    assert mark.inner_text().strip() == "✗" and "London is wrong" in (mark.get_attribute("title") or "")
    assert reviewed.locator(f'.review-mark[data-review="{S}"]').inner_text().strip() == "✓"
    assert paris.nth(0).locator(".review-mark").count() == 0  # smoke_r1's verdict: not reviewed
    assert page.locator("table.matrix tbody tr").count() == 2
    changed = page.locator('table.matrix tr[data-case="paris"] td.changed')
    assert changed.count() == 1
    changed.locator("summary").click()
    diff = changed.locator(".diff").inner_text()
    assert "- It is 21°C and sunny in Paris." in diff and '+ call get_weather(city="London"' in diff
    shot(page, shots, "matrix")
    page.check("#only-changed")
    page.wait_for_selector("table.matrix tbody tr:only-child")
    assert page.get_attribute("table.matrix tbody tr", "data-case") == "paris"
    # run the failing case again (the shop agent answers Paris right) and see both side by side
    page.goto(base_url + "/#/runs/smoke_r2/explore")
    page.click('.search tr[data-case="paris"] button.rerun')
    page.click('.search tr[data-case="paris"] .rerun-form button.primary')
    page.wait_for_selector("table.matrix", timeout=60_000)
    assert page.locator("table.matrix thead th").count() == 3
    assert page.locator("table.matrix tbody tr").count() == 1
    cells = page.locator('table.matrix tr[data-case="paris"] td.cell')
    assert "passed" in cells.nth(1).inner_text() and "failed" in cells.nth(0).inner_text()
    assert "sunny in Paris" in cells.nth(1).inner_text()
    shot(page, shots, "matrix-rerun")
    # a repeated run: a column per repeat, diffed against its left neighbour; or one repeat picked
    page.goto(base_url + "/#/matrix?runs=smoke_r1,again_r1")
    page.reload()  # a deep link: the page starts on the matrix
    page.wait_for_selector('table.matrix thead th[data-run="again_r1"]')
    # expect() polls from Playwright's own script: a string predicate would be eval'd in the page,
    # which the UI's Content-Security-Policy (no 'unsafe-eval') refuses whenever it must poll
    from playwright.sync_api import expect

    expect(page.locator("#app-picker")).to_have_value("shop")
    heads = page.locator("table.matrix thead th").all_inner_texts()
    assert len(heads) == 4 and "#0" in heads[2] and "#1" in heads[3]
    row = page.locator('table.matrix tr[data-case="paris"] td.cell')
    assert "Rainy in Paris." in row.nth(2).inner_text()
    assert "changed" in (row.nth(2).get_attribute("class") or "")
    assert "/run/1" in (row.nth(2).locator("a").first.get_attribute("href") or "")
    page.check("#only-changed")
    page.wait_for_selector("table.matrix tbody tr:only-child")
    no_toasts(page)
    shot(page, shots, "matrix-repeats")
    page.select_option("#run-index", "1")
    page.wait_for_selector('table.matrix thead th[data-run="again_r1"][data-index="0"]', state="detached")
    assert page.locator("table.matrix thead th").count() == 3
    assert "index=1" in page.url
    # the compare page names both runs as the CLI does, with the date they ran
    page.goto(base_url + "/#/compare/smoke_r1/smoke_r2")
    page.wait_for_selector(".compare .run-named")
    named = page.locator(".compare .run-named").all_inner_texts()
    assert "smoke_r1" in named[0] and "2023" in named[0] and "smoke_r2" in named[1]
    no_toasts(page)
    shot(page, shots, "compare")


def test_the_case_editor_knows_the_agents_tools(page: Any, base_url: str, shots: Path) -> None:
    page.goto(base_url + "/#/app/dice/evalsets/tools/cases/roll")
    page.click("#edit-case")
    hint = page.locator('.inv[data-inv="0"] .call-hint')
    hint.filter(has_text="declares no tool").wait_for()  # `roll` is not a tool of the dice agent
    assert page.locator("#declared-tools option").first.get_attribute("value") == "roll_die"
    page.fill('.inv[data-inv="0"] .call-name', "roll_die")
    page.locator('.inv[data-inv="0"] .call-name').dispatch_event("change")
    page.locator('.inv[data-inv="0"] .call-hint', has_text="sides: integer*").wait_for()
    page.locator('.inv[data-inv="0"] .arg-name').first.fill("count")  # rename the old argument
    page.locator('.inv[data-inv="0"] .arg-name').first.dispatch_event("change")
    page.click('.inv[data-inv="0"] .fill-args')
    names = page.locator('.inv[data-inv="0"] .arg-name')
    assert [names.nth(i).input_value() for i in range(names.count())] == ["count", "sides"]
    assert page.get_attribute('.inv[data-inv="0"] input[aria-label="sides"]', "type") == "number"
    page.click("#case-editor >> text=Cancel")


def no_toasts(page: Any) -> None:
    """Closes the notes in the corner (so that screenshots show the page)."""
    for button in page.locator(".toast button").all():
        button.click()


def problems(page: Any) -> list[str]:
    """The case editor's messages on fields that do not fit."""
    return list(page.locator("#case-editor .edit-problems li").all_inner_texts())


def test_typed_arguments_turns_rubrics_and_state_saved_unchanged_elsewhere(
        page: Any, base_url: str, shots: Path, agents_dir: Path) -> None:
    """Typed inputs from the tool's schema (number, enum, boolean, list) with messages naming the
    field, Save refused while one does not fit; a turn added; a rubric and the initial state
    edited; the file then read back by the loader equal but for the edits."""
    from agenteval.datasets import load_eval_set

    set_file = agents_dir / "booker" / "bookings.evalset.json"
    before = load_eval_set(set_file).eval_cases[0].model_dump(mode="json")
    page.goto(base_url + "/#/app/booker/evalsets/bookings/cases/dinner")
    page.click("#edit-case")
    call_box = page.locator('.inv[data-inv="0"] .call[data-call="0"]')
    size = call_box.locator('input[aria-label="party_size"]')
    assert size.get_attribute("type") == "number"
    assert call_box.locator(".arg-key .req").count() == 2  # city and party_size are required
    size.fill("")
    page.locator("#case-editor .edit-problems li", has_text="party_size must be an integer").wait_for()
    size.fill("4")
    assert problems(page) == []
    call_box.locator('.add-optional[data-arg="unit"]').click()
    call_box = page.locator('.inv[data-inv="0"] .call[data-call="0"]')
    call_box.locator('select[aria-label="unit"]').select_option('"imperial"')
    call_box.locator('.add-optional[data-arg="vegan"]').click()
    page.locator('.inv[data-inv="0"] input[aria-label="vegan"]').check()
    page.locator('.inv[data-inv="0"] .add-optional[data-arg="extras"]').click()
    extras = page.locator('.inv[data-inv="0"] textarea[aria-label="extras"]')
    extras.fill('["high chair"')
    page.locator("#case-editor .edit-problems li", has_text="extras is not valid JSON").wait_for()
    extras.fill("[1]")
    page.locator("#case-editor .edit-problems li", has_text="extras[0] must be text").wait_for()
    extras.fill('["high chair"]')
    assert problems(page) == []
    # a required argument removed: named, and Save refuses
    keys = page.locator('.inv[data-inv="0"] .arg-name')
    city = next(i for i in range(keys.count()) if keys.nth(i).input_value() == "city")
    page.locator('.inv[data-inv="0"] .args button[title="remove argument"]').nth(city).click()
    assert "Turn 1, book_table: city is required" in problems(page)
    page.set_viewport_size({"width": 1400, "height": 1180})  # the message and the call in one shot
    page.locator("#case-editor h3").scroll_into_view_if_needed()
    shot(page, shots, "case-editor-tools")
    page.set_viewport_size({"width": 1400, "height": 860})
    page.click("#save-case")
    page.locator(".toast", has_text="Not saved").wait_for()
    assert load_eval_set(set_file).eval_cases[0].model_dump(mode="json") == before
    page.click('.inv[data-inv="0"] .fill-args')
    page.fill('.inv[data-inv="0"] input[aria-label="city"]', "Lyon")
    # a turn added (its empty message named), a rubric, the initial state (JSON checked)
    page.click("#add-turn")
    assert "Turn 2: the user message is empty" in problems(page)
    page.fill('.inv[data-inv="1"] .edit-user', "thanks")
    page.fill('.inv[data-inv="1"] .edit-response', "You are welcome.")
    page.click("#add-rubric")
    page.fill(".rubric-text", "The answer confirms the party size.")
    page.select_option(".rubric-type", "TOOL_USE_QUALITY")
    page.fill("#edit-state", "{bad")
    page.locator("#case-editor .edit-problems li", has_text="session state is not valid JSON").wait_for()
    page.fill("#edit-state", '{"tier": "gold"}')
    assert problems(page) == []
    # unsaved edits still ask before leaving
    asked: list[str] = []
    page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    page.click("#nav-runs")
    page.wait_for_timeout(300)
    assert asked and "unsaved edits" in asked[0]
    page.click("#save-case")
    page.wait_for_selector("#edit-case")
    page.locator("#case-editor .rubrics-view li", has_text="confirms the party size").wait_for()
    after = load_eval_set(set_file).eval_cases[0].model_dump(mode="json")
    turns = after.pop("conversation")
    call = turns[0]["intermediate_data"]["tool_uses"][0]
    assert call["args"] == {"city": "Lyon", "party_size": 4, "unit": "imperial", "vegan": True,
                            "extras": ["high chair"]}
    assert turns[1]["user_content"]["parts"][0]["text"] == "thanks"
    assert after.pop("rubrics") == [{"rubric_id": "r1", "rubric_content": {"text_property":
                                     "The answer confirms the party size."}, "type": "TOOL_USE_QUALITY",
                                     "description": None}]
    assert after.pop("session_input")["state"] == {"tier": "gold"}
    expected_turn = before.pop("conversation")[0]
    before.pop("rubrics"), before.pop("session_input")
    assert after == before  # the final session state, ids, timestamps: as they were
    call["args"] = expected_turn["intermediate_data"]["tool_uses"][0]["args"]
    assert turns[0] == expected_turn  # the first turn but for its arguments


def test_a_criterion_not_evaluated_is_said_once_with_its_reason(page: Any, base_url: str,
                                                                shots: Path) -> None:
    from playwright.sync_api import expect
    page.goto(base_url + "/#/runs/noeval_r1/cases/weather")
    expect(page.locator(".problems li")).to_have_text([f"safety_v1: not evaluated: {NO_JUDGE}"])
    expect(page.get_by_text(NO_JUDGE)).to_have_count(2)  # not again in a box of its own
    # the invocation's own line gives the reason too, not a bare "not evaluated"
    expect(page.locator(".case-main").get_by_text(f"safety_v1: not evaluated: {NO_JUDGE}")).to_have_count(1)
    shot(page, shots, "case-not-evaluated")


def test_a_re_run_that_fails_says_why(page: Any, base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The explore page's "Re-run…" of a run that failed said only "the re-run failed"; the
    server's reason (the job's `error`) was there to show."""
    from playwright.sync_api import expect

    def broken_record(*args: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("agenteval.web.jobs.record", broken_record)
    page.goto(base_url + "/#/runs/smoke_r2/explore")
    page.click('.search tr[data-case="hello"] button.rerun')
    page.click('.search tr[data-case="hello"] .rerun-form button.primary')
    expect(page.locator(".toast.bad")).to_contain_text(
        "the re-run failed: recording the run failed: OSError: disk full", timeout=60_000)
    expect(page.locator('.search tr[data-case="hello"] .rerun-form button.primary')).to_be_enabled()


def test_a_repeated_cases_time_and_tokens_are_headed_as_its_runs_sums(page: Any, base_url: str) -> None:
    """The search's latency and tokens of a repeated case are summed over its runs; headed
    "latency", a sum of two runs read as one run's latency."""
    from playwright.sync_api import expect

    page.goto(base_url + "/#/runs/again_r1/explore")
    heads = page.locator("table.search thead th")
    expect(heads.nth(3)).to_have_text("latency (all runs)")
    expect(heads.nth(4)).to_have_text("tokens (all runs)")
    page.goto(base_url + "/#/runs/smoke_r2/explore")
    expect(heads.nth(3)).to_have_text("latency")


def test_a_narrow_window_does_not_push_these_pages_sideways(page: Any, base_url: str) -> None:
    """At 600 px the run list's trend chart, a repeated case's statistics and compare's tables
    stay in the page (the chart kept its 640 px and was cut off at the window's edge, the tables
    made the whole page scroll sideways); a table too wide scrolls in its own box."""
    page.set_viewport_size({"width": 600, "height": 860})
    wide = "() => { const p = document.querySelector('#view .page'); return p.scrollWidth - p.clientWidth; }"
    for route, ready in (("runs?app=shop", ".chart svg circle"),
                         ("runs/again_r1/cases/paris", "table.repeat"),
                         ("compare/smoke_r1/smoke_r2", "table.cmp:not(.measures) tbody tr")):
        page.goto(f"{base_url}/#/{route}")
        page.wait_for_selector(ready)
        assert page.evaluate(wide) <= 0, route
