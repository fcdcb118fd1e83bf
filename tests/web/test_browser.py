"""The web UI in a real browser: headless Chromium (Debian's package) driven by Playwright against
the real server (`agenteval.web.app.create_app` under uvicorn), a callable agent and a scripted
judge. One end-to-end path through every screen, and the markup-payload test. Screenshots are
written to the test's tmp folder (and to AGENTEVAL_SCREENSHOTS when set, to refresh docs/)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_server import chat
from tests.web.browser_support import (
    PAYLOAD,
    ScriptedModel,
    _answer,
    chromium,
    find_chromium,
    fresh_page,
    serve,
    shot,
    write_agents,
)

CRITERIA = ("tool_trajectory_avg_score", "final_response_match_v2")


def app_factory(agents_dir: Path) -> Any:
    """The real server's app (a function, so it is easy to find what the tests run against)."""
    from agenteval.web.app import create_app

    return create_app(agents_dir)


@pytest.fixture(scope="module")
def executable() -> str:
    path = find_chromium()
    if path is None:
        pytest.skip("no Chromium found (/usr/bin/chromium; apt-get install chromium): browser tests skipped")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install -e '.[dev]'): "
                    "browser tests skipped")
    return path


@pytest.fixture(scope="module")
def judge() -> Iterator[ScriptedModel]:
    """The scripted model: the judge of the judged criterion, and the built-in agent's model."""
    j = ScriptedModel()
    yield j
    j.close()


@pytest.fixture(scope="module")
def agents_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_agents(tmp_path_factory.mktemp("agents"))


@pytest.fixture(scope="module")
def base_url(executable: str, agents_dir: Path) -> Iterator[str]:
    try:
        app = app_factory(agents_dir)
    except ImportError as e:
        pytest.skip(f"the web server cannot be imported ({e}; pip install -e '.[web]'): "
                    "browser tests skipped")
    with serve(app) as url:
        yield url


@pytest.fixture(scope="module")
def browser(executable: str) -> Iterator[Any]:
    with chromium(executable) as b:
        yield b


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = os.environ.get("AGENTEVAL_SCREENSHOTS")
    return Path(folder) if folder else tmp_path / "shots"


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    with fresh_page(browser, 10_000) as p:
        yield p


def send(page: Any, text: str, turn: int) -> None:
    page.fill("#chat-input", text)
    page.click("#send")
    page.wait_for_selector(f'.turn[data-turn="{turn}"] .msg.agent, .turn[data-turn="{turn}"] .msg.error')


def run_with_two_criteria(page: Any, judge: ScriptedModel, shots: Path | None = None,
                          city: str = "exact", runs: int = 1, slow_judge: bool = False,
                          rationales: str | None = None) -> str:
    """Opens the metric dialog, keeps the trajectory, adds the judged criterion on the scripted
    judge (threshold 0.5, one sample), starts, follows the progress; returns the result's id.
    With `slow_judge`, each judge question takes a second, and the progress box is seen naming
    the judge call in hand of a case run with its time."""
    page.click("#run-eval")
    page.wait_for_selector("dialog[open] [data-criterion]")
    assert page.locator("dialog [data-criterion]").count() >= 10  # every criterion is offered
    page.uncheck('[data-criterion="response_match_score"]')
    page.check('[data-criterion="tool_trajectory_avg_score"]')
    page.check('[data-criterion="final_response_match_v2"]')
    page.fill('[data-threshold="final_response_match_v2"]', "0.5")
    page.fill('[data-judge-model="final_response_match_v2"]', judge.model)
    page.fill('[data-samples="final_response_match_v2"]', "1")
    if city != "exact":  # per-argument matching of the trajectory criterion (args_match)
        page.click('.crit:has([data-criterion="tool_trajectory_avg_score"]) details.argsmatch summary')
        page.select_option('[data-args-match="tool_trajectory_avg_score:get_weather:city"]', city)
    page.fill("#num-runs", str(runs))
    if rationales is not None:
        page.select_option("#judge-rationales", rationales)
    if shots is not None:
        shot(page, shots, "metric-dialog")
    respond = judge.respond
    if slow_judge:
        judge.respond = chat(_answer, delay=1.0, usage=(50, 12, 0), model="judge")
    try:
        page.click("#start-run")
        if slow_judge:
            page.wait_for_selector(r".prog .pstep >> text=/\(judge call 1 of 2, \d+:\d\d\)/")
        link = page.wait_for_selector(".prog .open-results", timeout=20_000)
    finally:
        judge.respond = respond
    href = link.get_attribute("href")
    assert href and href.startswith("#/runs/")
    # each judge question is logged with its case run, as call k of n of that case's judging
    assert re.search(r"judge .+ on .+: call 1 of \d+, 1 sample", page.text_content(".prog .log") or "")
    page.click(".prog button[title=close]")
    return str(href)


def load_case(path: Path, eval_id: str) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return next(c for c in data["eval_cases"] if c["eval_id"] == eval_id)


def tool_calls(invocation: dict[str, Any]) -> list[dict[str, Any]]:
    data = invocation.get("intermediate_data") or {}
    if "tool_uses" in data:
        return list(data["tool_uses"])
    return [p["function_call"] for e in data.get("invocation_events", [])
            for p in (e.get("content") or {}).get("parts") or [] if p.get("function_call")]


def test_end_to_end(page: Any, base_url: str, agents_dir: Path, judge: ScriptedModel, shots: Path,
                    tmp_path: Path) -> None:
    # chat: tool calls inline, state visible, the trace grouped by user message
    page.goto(base_url + "/#/app/shop")
    send(page, "What's the weather in Paris?", 0)
    send(page, "Please book a table", 1)
    assert "21°C" in page.inner_text('.turn[data-turn="0"] .msg.agent')
    assert "get_weather" in page.inner_text('.turn[data-turn="0"] .tool summary')
    assert re.search(r"#/app/shop/chat/[\w-]+$", page.url)
    page.reload()  # the session is saved: its deep link brings it back
    page.wait_for_selector('.turn[data-turn="1"] .msg.agent')
    # (the session list is drawn after the turns: waited for, not read at once)
    from playwright.sync_api import expect

    expect(page.locator(".sessions li.on")).to_have_count(1)
    page.click('[data-tab="state"]')
    assert '"city": "Paris"' in page.inner_text("#session-state")
    page.click('[data-tab="trace"]')
    page.hover(".tgroup:nth-child(2) .trow >> nth=0")
    page.wait_for_selector('.turn[data-turn="1"].hl')
    shot(page, shots, "chat")

    # eval tab: a new set, the session added as a case
    page.click('[data-tab="eval"]')
    page.fill("#new-set", "smoke")
    page.click("text=Create eval set")
    page.wait_for_url("**/#/app/shop/evalsets/smoke")
    for eval_id in ("booking", "paris"):  # the same session twice: one case is edited, one not
        page.fill("#new-case-id", eval_id)
        page.click("#add-session")
        page.wait_for_selector(f'#case-editor h3:has-text("Case {eval_id}")')
    baseline = run_with_two_criteria(page, judge, shots, slow_judge=True)  # the run before the edit

    # edit the expected response and one expected tool argument; the file is rewritten
    page.click("#edit-case")
    page.fill('.inv[data-inv="0"] .edit-response', "It is 25°C and cloudy in Paris.")
    arg_names = page.locator('.inv[data-inv="0"] .arg-name')
    unit = next(i for i in range(arg_names.count()) if arg_names.nth(i).input_value() == "unit")
    page.locator('.inv[data-inv="0"] .arg-value').nth(unit).fill("fahrenheit")
    shot(page, shots, "case-editor")
    page.click("#save-case")
    page.wait_for_selector("#edit-case")
    set_file = agents_dir / "shop" / "smoke.evalset.json"
    case = load_case(set_file, "paris")
    assert case["conversation"][0]["final_response"]["parts"][0]["text"] == "It is 25°C and cloudy in Paris."
    assert tool_calls(case["conversation"][0])[0]["args"] == {"city": "Paris", "unit": "fahrenheit"}

    # run with two criteria: the trajectory fails, the judged criterion passes; each cell its own colour
    # ... with the judge asked for its label alone (the dialog's judge rationales: never)
    judge.received.clear()
    candidate = run_with_two_criteria(page, judge, city="text", rationales="never")
    verdicts = [json.dumps(b["response_format"]) for b in judge.received
                if "verdict" in json.dumps(b.get("response_format"))]
    assert verdicts and not any("rationale" in v for v in verdicts)
    page.goto(base_url + "/" + candidate)
    row = page.wait_for_selector('tr[data-case="paris"]')
    cells = row.query_selector_all("td")
    header = [t.strip() for t in page.locator("table.cases thead th").all_inner_texts()]
    status = {name: cells[header.index(name)].get_attribute("class") for name in CRITERIA}
    assert status == {"tool_trajectory_avg_score": "bad", "final_response_match_v2": "ok"}
    assert '"args_match":{"get_weather":{"city":"text"}}' in page.inner_text(".run .kv")
    shot(page, shots, "run")
    with page.expect_download() as download:  # the run as one static HTML file
        page.click("#export")
    exported = Path(download.value.path()).read_text(encoding="utf-8")
    assert exported.lstrip().lower().startswith("<!doctype html") and "paris" in exported

    # the failure, reached from the keyboard (j marks the next case that did not pass, Enter opens
    # it): expected vs actual, the argument-level diff, the failing score, the judge
    page.click("h2")
    page.keyboard.press("j")
    assert page.get_attribute("table.cases tr.sel", "data-case") == "paris"
    page.keyboard.press("Enter")
    page.wait_for_selector("#inv-0")
    assert "25°C" in page.inner_text("#inv-0 .expected del")
    argdiff = page.inner_text("#inv-0 .argdiff")
    assert "unit" in argdiff and "fahrenheit" in argdiff and "celsius" in argdiff
    assert "tool_trajectory_avg_score" in page.inner_text("#inv-0 .failing-scores")
    assert "The reference says 25°C" in page.inner_text(".judges")
    shot(page, shots, "case-result")
    page.locator(".judge-audit").first.click()
    assert "Reference answer" in page.inner_text("dialog[open] .judge-prompt")
    assert '"invalid"' in page.inner_text("dialog[open] .judge-reply")
    shot(page, shots, "judge")
    page.keyboard.press("Escape")

    # the case's trace: hovering highlights the invocation, clicking opens the drawer
    page.hover(".trace .tgroup >> nth=0 >> .trow >> nth=0")
    page.wait_for_selector("#inv-0.hl")
    page.locator('.trace .trow:has(.k-tool)').first.click()
    page.click('#drawer [data-tab="Request"]')
    assert "Paris" in page.inner_text("#drawer .dcontent")
    page.click('#drawer [data-tab="Graph"]')
    page.wait_for_selector("#drawer svg.graph g")
    shot(page, shots, "trace")
    page.keyboard.press("Escape")

    # accept the actual turn as the expected one: the file follows
    page.click("#inv-0 .accept")
    page.wait_for_selector(".toast >> text=now expects the actual turn")
    assert "21°C" in load_case(set_file, "paris")["conversation"][0]["final_response"]["parts"][0]["text"]

    # compare with the earlier run
    page.evaluate("document.getElementById('toasts').replaceChildren()")
    page.goto(base_url + "/" + candidate)
    page.wait_for_selector("#compare-with option >> nth=1", state="attached")
    page.select_option("#compare-with", baseline.rsplit("/", 1)[1])
    page.wait_for_selector(".compare .counts")
    assert "1 newly failed" in page.inner_text(".compare .counts")
    # the paired statistics first, computed by the server: one case run each side cannot decide
    assert page.inner_text(".compare .paired .decision").startswith("NO SIGNIFICANT CHANGE")
    assert "INCONCLUSIVE" in page.inner_text(".compare .paired-counts")
    assert page.inner_text(".compare .paired .inconclusive").startswith("1 INCONCLUSIVE: ")
    # (the candidate ran with the city argument matched as text: a different bar, as compare says)
    differ = page.inner_text(".compare .paired .criteria-differ")
    assert "tool_trajectory_avg_score: args_match.get_weather.city unset → text" in differ
    shot(page, shots, "compare")

    # the run history with its trend chart
    page.goto(base_url + "/#/runs?app=shop&eval_set=smoke")
    page.wait_for_selector(".chart svg circle")
    assert page.locator("table.runs tbody tr").count() == 2
    shot(page, shots, "runs")

    # open a result JSON file (one from elsewhere: a CI artefact, say): the page shows it as a run
    recorded = next((agents_dir / "shop" / ".agenteval" / "eval_history").glob("*.json"))
    document = json.loads(recorded.read_text(encoding="utf-8"))
    document["eval_set_result_id"] = "from_ci_artefact"
    opened = tmp_path / "from_ci.json"
    opened.write_text(json.dumps(document), encoding="utf-8")
    page.set_input_files("#open-file", str(opened))
    page.wait_for_selector(".run table.cases tbody tr")
    assert "from_ci_artefact" in page.locator(".run h2").inner_text()
    assert page.errors == []


def hostile_elements(page: Any) -> int:
    """Elements the payload would have created had any of it been parsed as HTML."""
    return int(page.evaluate("document.querySelectorAll('img[src=x], svg[onload], #view script, "
                             "#drawer script, dialog script, [onerror], [onload]').length"))


def test_markup_from_agents_judges_and_ids_stays_text(page: Any, base_url: str, judge: ScriptedModel) -> None:
    page.goto(base_url + "/#/app/evil")
    send(page, "hi", 0)
    page.click(".tool summary")
    assert PAYLOAD in page.inner_text('.turn[data-turn="0"] .msg.agent')
    assert PAYLOAD in page.inner_text(".tool")
    page.click('[data-tab="trace"]')
    page.locator(".trow").first.click()

    page.click('[data-tab="eval"]')
    page.fill("#new-set", "xss")
    page.click("text=Create eval set")
    page.wait_for_url("**/#/app/evil/evalsets/xss")
    case_id = 'x"><img src=x onerror="window.__xss=4">'
    page.fill("#new-case-id", case_id)
    page.click("#add-session")
    page.wait_for_selector("#case-editor")
    assert case_id in page.inner_text("#case-editor h3")
    result = run_with_two_criteria(page, judge, runs=2)
    page.goto(base_url + "/" + result)
    # A new hash alone re-renders in place: the eval set's own case table could take the click
    # first. A reload shows the run page alone.
    page.reload()
    page.wait_for_selector("table.cases tbody tr a")
    page.click("table.cases tbody tr a")
    page.wait_for_selector(".judges")
    assert page.locator(".repeat tbody tr").count() == 2  # repeated-run statistics per criterion
    assert page.locator("a.btn:has-text('run 1')").count() == 1
    assert PAYLOAD in page.inner_text(".judges")
    page.locator(".judge-audit").first.click()
    page.keyboard.press("Escape")
    page.locator(".trace .trow").first.click()
    page.click('#drawer [data-tab="Response"]')
    page.click('#drawer [data-tab="Graph"]')
    assert page.evaluate("window.__xss") is None
    assert hostile_elements(page) == 0
    assert page.errors == []


def test_broken_agent_crashed_turn_and_cancelled_run_show_in_the_page(page: Any, base_url: str) -> None:
    page.goto(base_url + "/#/app/broken")
    assert "cannot be imported" in page.inner_text("#view .error-box")
    page.goto(base_url + "/#/app/shop")
    send(page, "crash now", 0)
    assert "the agent crashed" in page.inner_text('.turn[data-turn="0"] .msg.error')
    send(page, "slow please", 1)  # the server is still up
    assert "slowly" in page.inner_text('.turn[data-turn="1"] .msg.agent')

    page.click('[data-tab="eval"]')
    page.fill("#new-set", "slow")
    page.click("text=Create eval set")
    page.wait_for_url("**/#/app/shop/evalsets/slow")
    page.fill("#new-case-id", "slow")
    page.click("#add-session")
    page.wait_for_selector("#case-editor")
    page.click("#run-eval")
    page.fill("#num-runs", "100")
    page.click("#start-run")
    page.wait_for_selector(".prog .log div")
    page.click(".prog >> text=Cancel")
    page.wait_for_selector(".prog .pstatus >> text=cancelled", timeout=20_000)
    assert page.errors == []


def test_a_chosen_model_and_the_trace_of_its_calls(page: Any, base_url: str, judge: ScriptedModel,
                                                   shots: Path) -> None:
    page.goto(base_url + "/#/app/dice")
    page.fill("#model", judge.model)  # the model for new sessions
    page.press("#model", "Tab")
    send(page, "Roll a d6 for me", 0)
    assert "You rolled a 4." in page.inner_text('.turn[data-turn="0"] .msg.agent')
    assert "roll_die" in page.inner_text('.turn[data-turn="0"] .tool summary')
    assert "scripted" in page.inner_text(".chathead")
    page.click('[data-tab="trace"]')
    page.locator(".trow:has(.k-llm)").first.click()
    page.click('#drawer [data-tab="Request"]')
    assert "Roll a d6 for me" in page.inner_text("#drawer .dcontent")
    page.click('#drawer [data-tab="Response"]')
    response = page.inner_text("#drawer .dcontent")
    assert "roll_die" in response and "tokens: 50 in / 12 out" in response
    page.click('#drawer [data-tab="Graph"]')
    assert page.locator("#drawer svg.graph g").count() >= 4  # agent, two model calls, the tool
    shot(page, shots, "trace-chat")
    assert page.errors == []


HELLO_AGENT = '''\
"""A scripted stand-in for examples/hello_world's agent: the same tools, fixed answers."""


def root_agent(text, state):
    low = text.lower()
    if "roll" in low:
        return {"response": "I rolled a 9 sided die and got a 6.",
                "tool_calls": [{"name": "roll_die", "args": {"sides": 9}, "response": {"result": 6}}]}
    if "prime" in low:
        return {"response": "19 is a prime number, while 10 is not.",
                "tool_calls": [{"name": "check_prime", "args": {"nums": [10, 19]},
                                "response": {"result": "19 are prime numbers."}}]}
    return "I can roll dice and check primes."
'''


def _hello(agents_dir: Path) -> Path:
    """examples/hello_world's eval set and test_config.json beside a scripted agent."""
    from tests.conftest import REPO

    folder = agents_dir / "hello_scripted"
    folder.mkdir(exist_ok=True)
    (folder / "agent.py").write_text(HELLO_AGENT)
    for name in ("hello_world.evalset.json", "test_config.json"):
        (folder / name).write_bytes((REPO / "examples" / "hello_world" / name).read_bytes())
    return folder


def _verdicts(doc: dict[str, Any]) -> dict[str, Any]:
    """Per case its status and each gating criterion's threshold, score and status (the
    informational ones measure time, which differs from run to run)."""
    return {c["eval_id"]: (c["final_eval_status"], [(m["metric_name"], m["threshold"], m["score"],
                                                      m["eval_status"])
                                                     for m in c["overall_eval_metric_results"]
                                                     if m["threshold"] is not None])
            for c in doc["eval_case_results"]}


def test_an_untouched_run_dialog_runs_as_agenteval_eval_does(page: Any, base_url: str,
                                                             agents_dir: Path) -> None:
    import subprocess
    import sys

    folder = _hello(agents_dir)
    page.goto(base_url + "/#/app/hello_scripted/evalsets/hello_world")
    page.click("#run-eval")
    page.wait_for_selector("dialog[open] [data-criterion]")
    # The dialog opens with the agent's test_config.json, and says so.
    assert "Criteria from test_config.json" in page.inner_text("#criteria-source")
    assert page.is_checked('[data-criterion="tool_trajectory_avg_score"]')
    assert page.is_checked('[data-criterion="response_match_score"]')
    assert not page.is_checked('[data-criterion="final_response_match_v2"]')
    assert page.input_value('[data-match="tool_trajectory_avg_score"]') == "IN_ORDER"
    assert float(page.input_value('[data-threshold="response_match_score"]')) == 0.3
    first = page.locator("dialog [data-criterion]").first.get_attribute("data-criterion")
    assert first in ("tool_trajectory_avg_score", "response_match_score")  # in force: listed first
    page.click("#start-run")
    page.wait_for_selector(".prog .open-results", timeout=20_000)
    page.click(".prog button[title=close]")
    web_doc = json.loads(max((folder / ".agenteval" / "eval_history").glob("*.evalset_result.json"),
                             key=lambda p: p.stat().st_mtime).read_text())
    out = folder / "cli.json"
    # A process of its own: Playwright's sync API runs an event loop in this thread.
    r = subprocess.run([sys.executable, "-m", "agenteval", "eval", str(folder),
                        str(folder / "hello_world.evalset.json"), "--no_history", "--output", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    cli_doc = json.loads(out.read_text())
    assert _verdicts(web_doc) == _verdicts(cli_doc)
    assert web_doc["run"]["config"] == cli_doc["run"]["config"]
    assert Path(web_doc["run"]["config_file"]).name == "test_config.json"
    assert page.errors == []


def test_an_interrupted_run_is_resumed_from_the_dialog(page: Any, base_url: str, agents_dir: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    folder = _hello(agents_dir)
    (folder / "agent.py").write_text(HELLO_AGENT.replace("def root_agent(text, state):\n",
                                                         "def root_agent(text, state):\n"
                                                         "    import os, time\n"
                                                         "    if os.environ.get('SLOW'):\n"
                                                         "        time.sleep(30)\n"))
    s = json.loads((folder / "hello_world.evalset.json").read_text())
    s["eval_set_id"], s["eval_cases"] = "two", [dict(s["eval_cases"][0], eval_id=i) for i in ("a", "b")]
    (folder / "two.evalset.json").write_text(json.dumps(s))
    # A CLI run killed mid-way: interrupted in the journal.
    proc = subprocess.Popen([sys.executable, "-m", "agenteval", "eval", str(folder), "two",
                             "--parallelism", "1"], env={**os.environ, "SLOW": "1"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    from agenteval.store.journal import Journal

    deadline = time.monotonic() + 60
    while not Journal(folder).runs() and time.monotonic() < deadline:  # it has started
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    page.goto(base_url + "/#/app/hello_scripted/evalsets/two")
    page.click("#run-eval")
    page.wait_for_selector("dialog[open] [data-unfinished]")
    page.click("dialog [data-resume]")
    page.wait_for_selector(".prog .open-results", timeout=30_000)
    docs = list((folder / ".agenteval" / "eval_history").glob("*_two_*.evalset_result.json"))
    doc = json.loads(max(docs, key=lambda p: p.stat().st_mtime).read_text())
    assert sorted(c["eval_id"] for c in doc["eval_case_results"]) == ["a", "b"]
    assert doc["run"]["command"] == "web"
    assert [r for r in Journal(folder).runs() if r.status != "finished"] == []  # finished and forgotten
    assert page.errors == []
