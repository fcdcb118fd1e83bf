"""The run list's and the run page's verdicts and reasons in a real browser (see test_browser.py): cases
not evaluated counted apart from failed ones, as `agenteval runs` counts them; why cases did
not pass, as `agenteval runs show` says it. Hand-made runs
recorded in the `shop` agent's history."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenteval.schema import JudgeCertificateNote, MetricReason
from agenteval.store import record_run
from tests.helpers import eval_set, inv
from tests.result_builders import case, judge, result
from tests.web.browser_support import serve_agents

INTERRUPTED = "20260101-000000-abcdef"


def _interrupted(agents: Path) -> None:
    """A run of `shop`'s set `two` begun in its journal, its process gone: interrupted."""
    from agenteval.runner.durable import fingerprint
    from agenteval.schema import EvalSetRef, RunSpec
    from agenteval.web import create_app
    from agenteval.web.routes.launch import RunBody, prepare_run

    path = agents / "shop" / "two.evalset.json"
    path.write_text(eval_set("two", {f"c{i}": [inv(f"q{i}", "x")] for i in range(2)}).model_dump_json())
    web = create_app(agents).state.web
    job, _, services, _ = prepare_run(web, "shop", "two", RunBody(criteria={"response_match_score": 0.5}))
    assert services.journal is not None
    spec = RunSpec(run_id=INTERRUPTED, command="web", started=1.0, eval_sets=[EvalSetRef(eval_set_id="two")],
                   config=job.config.model_dump(mode="json"), num_runs=1)
    services.journal.begin(spec, fingerprint(job), 2)
    services.journal.close()


expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect


@pytest.fixture(scope="module")
def base_url(browser_agents: Path) -> Iterator[str]:
    agents = browser_agents
    shop = agents / "shop"
    record_run(shop, [result([case("ok", {"m": 1.0}), case("ungated", {})], "ungated_r", "verdicts",
                             created=1_700_000_000.0)])
    low = case("low", {"m": 0.2})
    low.reasons = [MetricReason(metric_name="m", reason="ROUGE-1 F 0.2 < threshold 0.5 (precision 0.2)")]
    record_run(shop, [result([case("ok", {"m": 1.0}), low, case("crashed", {}, error="agent exploded")],
                             "failed_r", "verdicts", created=1_700_000_100.0)])
    bad = case("judged", {"final_response_match_v2": 0.0},
               judge_records=[judge("final_response_match_v2", 0.0, "It differs.", verdict="invalid")])
    bad.judge_certificates = [JudgeCertificateNote(
        metric_name="final_response_match_v2", status="uncalibrated",
        text="uncalibrated: no certificate for this judge")]
    record_run(shop, [result([bad, case("rep", {"m": 1.0}), case("rep", {"m": 0.2}, run_index=1)],
                             "judged_r", "verdicts", created=1_700_000_200.0, gating="all_runs")])
    warned = case("warned", {"m": 1.0})
    warned.warnings = ["the conversation reached the user simulator's turn limit after 5 turns"]
    again = [case("again", {"m": 1.0}), case("again", {"m": 1.0}, run_index=1)]
    again[1].warnings = ["run 1 lost 3 characters"]
    record_run(shop, [result([warned, *again], "warned_r", "verdicts", created=1_700_000_300.0)])
    _interrupted(agents)
    with serve_agents(agents) as url:
        yield url


def test_the_run_list_shows_a_run_not_evaluated_apart_from_a_failed_one(page: Any, base_url: str) -> None:
    """A run whose only case not passed was not evaluated read "failed"."""
    page.goto(base_url + "/#/runs")
    row = page.locator("table.runs tbody tr", has=page.locator('a[href*="ungated_r"]'))
    expect(row.locator(".badge")).to_have_text("not evaluated")
    expect(page.locator("table.runs tbody tr", has=page.locator('a[href*="failed_r"]')).locator(".badge")) \
        .to_have_text("failed")
    heads = page.locator("table.runs thead th").all_inner_texts()
    column = heads.index("not evaluated")
    expect(row.locator("td").nth(column)).to_have_text("1")
    page.select_option("select[name=status]", "not_evaluated")
    page.click("form.filters button")
    expect(page.locator("table.runs tbody tr")).to_have_count(1)
    expect(page.locator("table.runs tbody tr a.mono")).to_have_text("ungated_r")


def test_the_run_page_says_why_cases_failed_in_the_runs_own_words(page: Any, base_url: str) -> None:
    """As `agenteval runs show` says it (it gave the database's words: "the agent failed (its
    error is kept with the case's runs)", "m: score 0.2 < threshold 0.5")."""
    page.goto(base_url + "/#/runs/failed_r")
    why = page.locator(".card.failing")
    expect(why.locator("li", has=page.locator('a:text-is("crashed")'))).to_have_text(
        "crashed: inference failed: agent exploded")
    expect(why.locator("li", has=page.locator('a:text-is("low")'))).to_have_text(
        "low: m: ROUGE-1 F 0.2 < threshold 0.5 (precision 0.2)")


def test_the_run_page_of_a_case_not_evaluated_does_not_call_it_failed(page: Any, base_url: str) -> None:
    """Its reasons' heading said "Why cases failed" over a case that was not evaluated."""
    page.goto(base_url + "/#/runs/ungated_r")
    why = page.locator(".card.failing")
    expect(why.locator("h3")).to_have_text("Why cases did not pass")
    expect(why.locator("li")).to_have_count(1)
    expect(why.locator("li")).to_contain_text("ungated: not evaluated")


def test_the_case_page_says_why_with_the_judges_certificate(page: Any, base_url: str) -> None:
    """The case page's "Why it did not pass" lacked the certificate line `runs show` gives."""
    page.goto(base_url + "/#/runs/judged_r/cases/judged")
    why = page.locator(".card.problems")
    expect(why.locator("h3")).to_have_text("Why it did not pass")
    expect(why.locator("li").last).to_have_text(
        "final_response_match_v2: judge uncalibrated: no certificate for this judge")


def test_a_passed_run_of_a_case_not_passed_is_not_called_a_passed_case(page: Any, base_url: str) -> None:
    """Run 0 passed, run 1 failed, the case failed (all runs gate): run 0's page headed the
    case's reasons "What counted against it (the case passed)"."""
    page.goto(base_url + "/#/runs/judged_r/cases/rep/run/0")
    why = page.locator(".card.problems")
    expect(why.locator("h3")).to_have_text("Why it did not pass")
    expect(why.locator("li").first).to_contain_text("m: ")


def test_the_case_page_says_the_case_runs_warnings(page: Any, base_url: str) -> None:
    """A case run's warnings (a conversation the simulator's turn limit ended), passed or not,
    as the reports list them: the page said nothing of them."""
    page.goto(base_url + "/#/runs/warned_r/cases/warned")
    expect(page.locator(".card.warnings li")).to_have_text(
        ["the conversation reached the user simulator's turn limit after 5 turns"])
    page.goto(base_url + "/#/runs/warned_r/cases/again/run/1")
    expect(page.locator(".card.warnings h3")).to_have_text("Warnings (run 1)")
    expect(page.locator(".card.warnings li")).to_have_text(["run 1 lost 3 characters"])
    page.goto(base_url + "/#/runs/warned_r/cases/again/run/0")
    expect(page.locator("h2")).to_contain_text("again")
    expect(page.locator(".card.warnings")).to_have_count(0)


def test_the_run_pages_case_table_marks_a_case_run_with_warnings(page: Any, base_url: str) -> None:
    """The console's case table lists a case run's warnings, passed or not; the run page's
    showed nothing of them."""
    page.goto(base_url + "/#/runs/warned_r")
    rows = page.locator("table tr[data-case]")
    expect(rows).to_have_count(3)
    expect(page.locator('tr[data-case="warned"] .warned')).to_have_text(
        "⚠ the conversation reached the user simulator's turn limit after 5 turns")
    expect(rows.locator(".warned")).to_have_count(2)
    expect(rows.nth(2).locator(".warned")).to_have_text("⚠ run 1 lost 3 characters")


def test_an_interrupted_run_opened_by_its_id_says_how_to_finish_it(page: Any, base_url: str) -> None:
    """`runs list` lists it under "Unfinished runs"; its page (the run id a run's panel or
    `agenteval eval` gave) said only "no run … in the run history"."""
    page.goto(f"{base_url}/#/runs/{INTERRUPTED}")
    expect(page.locator(".error-box")).to_contain_text(
        f"run '{INTERRUPTED}' is not recorded: the journal of agent 'shop' has it interrupted, 0 of 2 case "
        f"runs done; resume it from its eval set's Run evaluation dialog, or with agenteval eval ... "
        f"--resume {INTERRUPTED}")
