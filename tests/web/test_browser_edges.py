"""The web UI at its edges (issue 27's twelve defects), in a real browser (see test_browser.py):
a failed chat request, unsaved edits, compare's baseline, pages refreshed when a run finishes,
per-case totals, long tool calls, the run dialog's criteria, progress, deleting sessions and
toasts, the trace from the keyboard and in the address, run ids and case ids, Markdown replies
and a narrow window. Grouped into few functions: each starts a browser page."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_server import FakeServer, Step
from tests.web.browser_support import ScriptedModel, serve, write_agents
from tests.web.test_browser import (  # noqa: F401 (fixtures)
    app_factory,
    browser,
    executable,
    judge,
    page,
    send,
)

expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect

EDGE_AGENT = '''\
"""An agent for the page's edges: a Markdown reply, a call with a huge argument, a slow turn."""

import time

MARKDOWN = """## Plan

Here is **what I did** and `the code`:

- first step
- second step with <b>markup</b>

1. one
2. two

```python
print("<i>hi</i>")
```

[a link](https://example.org/x) and [a trap](javascript:alert(1))"""


def root_agent(text):
    low = text.lower()
    if "markdown" in low:
        return MARKDOWN
    if "long" in low:
        return {"response": "Stored it.",
                "tool_calls": [{"name": "store_blob", "args": {"blob": "y" * 3000, "path": "/tmp/x"},
                                "response": {"ok": True}}]}
    if "slow" in low:
        time.sleep(4)
        return "Finally."
    return "Hello from edges."
'''


@pytest.fixture(scope="module")
def agents_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_agents(tmp_path_factory.mktemp("agents"))
    (root / "edges").mkdir()
    (root / "edges" / "agent.py").write_text(EDGE_AGENT, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def base_url(executable: str, agents_dir: Path) -> Iterator[str]:  # noqa: F811
    with serve(app_factory(agents_dir)) as url:
        yield url


def api(tab: Any, path: str, method: str = "GET", body: Any = None) -> Any:
    """A JSON request from the page (same origin, as the page's own requests are)."""
    return tab.evaluate("""async ([path, method, body]) => {
      const init = { method, headers: {} };
      if (body !== null) {
        init.body = JSON.stringify(body);
        init.headers["Content-Type"] = "application/json";
      }
      const r = await fetch(path, init);
      return await r.json();
    }""", [path, method, body])


def clipped(tab: Any, selector: str) -> list[str]:
    """Texts of the cells under `selector` whose text does not fit in them."""
    return list(tab.evaluate("""(sel) => [...document.querySelectorAll(sel)]
      .filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => el.textContent)""", selector))


def test_chat_edges(page: Any, base_url: str) -> None:  # noqa: F811
    page.goto(base_url + "/#/app/edges")
    # 12: Markdown drawn as elements, markup and javascript: links left as text
    send(page, "markdown please", 0)
    reply = '.turn[data-turn="0"] .msg.agent'
    assert page.inner_text(f"{reply} .md .mdh") == "Plan"
    assert page.locator(f"{reply} .md ul li").count() == 2 and page.locator(f"{reply} .md ol li").count() == 2
    assert page.inner_text(f"{reply} .md strong") == "what I did"
    assert page.inner_text(f"{reply} .md p code") == "the code"
    assert page.inner_text(f"{reply} .md pre.code") == 'print("<i>hi</i>")'
    assert "<b>markup</b>" in page.inner_text(f"{reply} .md ul")
    assert page.locator(f"{reply} b, {reply} i").count() == 0
    assert page.get_attribute(f"{reply} .md a", "href") == "https://example.org/x"
    assert page.locator(f"{reply} .md a").count() == 1
    assert "[a trap](javascript:alert(1))" in page.inner_text(reply)

    # 6: a 3,000-character argument is cut in the line and the chat does not widen
    send(page, "store something long", 1)
    summary = page.inner_text('.turn[data-turn="1"] .tool summary')
    assert "store_blob" in summary and len(summary) < 220
    assert page.evaluate("(() => { const m = document.getElementById('messages');"
                         " return m.scrollWidth <= m.clientWidth + 1; })()")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400

    # 1: a request that fails keeps the message, says why, and the page's own link recovers
    page.route("**/messages/stream", lambda route: route.abort())
    page.fill("#chat-input", "please keep this message")
    page.click("#send")
    page.wait_for_selector(".msg.send-failed")
    assert "Cannot reach the agenteval server" in page.inner_text(".msg.send-failed")
    assert "Failed to fetch" not in page.inner_text("#view")
    assert page.input_value("#chat-input") == "please keep this message"
    page.unroute("**/messages/stream")
    listing = re.compile(r"/api/runs\?")
    page.route(listing, lambda route: route.abort())
    page.click("#nav-runs")
    page.wait_for_selector("#view .error-box")
    assert "nothing could be loaded" in page.inner_text("#view .error-box")  # a read saves nothing
    page.unroute(listing)
    page.click("#nav-runs")  # the same address: the view is built again
    page.wait_for_selector("h2 >> text=Run history")
    page.go_back()
    page.wait_for_selector('.turn[data-turn="1"]')
    # the unsent text is the session's draft: it comes back with the session, refilled or typed
    assert page.input_value("#chat-input") == "please keep this message"
    page.fill("#chat-input", "typed, not sent")
    page.click("#nav-runs")
    page.wait_for_selector("h2 >> text=Run history")
    page.go_back()
    page.wait_for_selector('.turn[data-turn="1"]')
    assert page.input_value("#chat-input") == "typed, not sent"

    # 8: a slow turn shows the time waited and can be stopped; the text comes back
    page.fill("#chat-input", "slow one")
    page.click("#send")
    page.wait_for_selector(".msg.pending .waited >> text=/working… [1-9] s/", timeout=5000)
    page.click("#stop-reply")
    assert "Stopped: the turn was cancelled" in page.inner_text(".msg.send-failed >> nth=-1")
    assert page.input_value("#chat-input") == "slow one"
    send(page, "hello again", 2)  # the stopped turn was not saved: this is the third
    assert page.inner_text('.turn[data-turn="2"] .msg.user') == "hello again"

    # 10: the side tab and the open span are in the address; the trace works from the keyboard
    page.click('[data-tab="trace"]')
    assert page.url.endswith("?tab=trace")
    page.locator(".trow").first.focus()
    page.keyboard.press("ArrowDown")
    second = page.locator(".trow").nth(1).get_attribute("data-span")
    assert page.evaluate("document.activeElement.dataset.span") == second
    page.keyboard.press("Enter")
    page.wait_for_selector("#drawer:not([hidden]) .dtop")
    assert f"span={second}" in page.url
    page.reload()
    page.wait_for_selector("#drawer:not([hidden]) .dtop")
    assert page.get_attribute(".tabs button.on[data-tab]", "data-tab") == "trace"
    assert page.locator(f'.trow.on[data-span="{second}"]').count() == 1
    # whatever render of the page is still in flight (see the test below)
    page.keyboard.press("Escape")
    # The address as the page has it: `page.url` follows a history.replaceState through an
    # event of its own, which may arrive after the key press returns.
    assert "span=" not in page.evaluate("location.href") and page.is_hidden("#drawer")

    # 9: deleting a session asks first; the toast says so and can be dismissed
    page.click('[data-tab="sessions"]')
    page.wait_for_selector(".sessions li")
    sessions = page.locator(".sessions li").count()
    page.once("dialog", lambda d: d.dismiss())
    page.locator(".sessions button[data-delete]").first.click()
    page.wait_for_timeout(300)
    assert page.locator(".sessions li").count() == sessions
    page.once("dialog", lambda d: d.accept())
    page.locator(".sessions button[data-delete]").first.click()
    toast = page.wait_for_selector(".toast >> text=deleted session")
    box = toast.bounding_box()
    assert box is not None and box["x"] < 100 and box["y"] > 400  # bottom left, clear of the buttons
    page.click(".toast button[title=dismiss]")
    assert page.locator(".toast").count() == 0
    assert page.errors == []


def test_eval_set_runs_and_compare_edges(page: Any, base_url: str, agents_dir: Path) -> None:  # noqa: F811
    page.goto(base_url + "/#/app/shop")
    send(page, "What's the weather in Paris?", 0)
    send(page, "And the weather in London?", 1)
    page.click('[data-tab="eval"]')
    page.fill("#new-set", "edges")
    page.click("text=Create eval set")
    page.wait_for_url("**/#/app/shop/evalsets/edges")
    # 11: the case id comes from the first message
    assert page.input_value("#new-case-id") == "whats_the_weather_in_paris"
    page.click("#add-session")
    page.wait_for_selector('#case-editor h3:has-text("Case whats_the_weather_in_paris")')
    assert page.input_value("#new-case-id") == "whats_the_weather_in_paris_2"
    assert "No runs yet" in page.inner_text(".set-history")

    # 2: unsaved edits ask before navigation; refusing keeps them
    page.click("#edit-case")
    page.fill('.inv[data-inv="0"] .edit-response', "An edit not saved yet.")
    here = page.url
    asked: list[str] = []
    page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    page.click("#nav-runs")
    page.wait_for_timeout(300)
    assert asked and "unsaved edits" in asked[0]
    assert page.url == here
    assert page.input_value('.inv[data-inv="0"] .edit-response') == "An edit not saved yet."
    page.click("#case-editor >> text=Cancel")

    # 7: whole descriptions without backticks, the criteria in force first, a place for rubrics
    page.click("#run-eval")
    page.wait_for_selector("dialog[open] [data-criterion]")
    descs = page.locator("dialog .crit .desc").all_inner_texts()
    assert descs and not any(d.startswith("`") or "`" in d for d in descs)
    crit = page.locator('dialog .crit:has([data-criterion="final_response_match_v2"]) .desc').inner_text()
    assert crit.endswith("overall, the fraction valid.")
    boxes = page.locator("dialog [data-criterion]:not([disabled])")
    on = [boxes.nth(i).is_checked() for i in range(boxes.count())]
    assert on[:2] == [True, True] and True not in on[on.index(False):]
    groups = page.locator("dialog h4.crit-group").all_inner_texts()
    assert groups == ["IN FORCE FOR THIS SET", "OTHER CRITERIA"]
    assert page.locator('dialog [data-rubrics="rubric_based_final_response_quality_v1"]').count() == 1

    # 8, 4: progress names the step and the time; the set's history lists the run without a reload
    page.click("#start-run")
    page.wait_for_selector(".prog .open-results", timeout=20_000)
    assert re.search(r"took \d+:\d\d", page.inner_text(".prog .pstep"))
    page.wait_for_selector(".set-history table.runs tbody tr")
    # 9: a finished box folds away when the next run starts
    page.click("#run-eval")
    page.click("#start-run")
    page.wait_for_selector(".prog .open-results", timeout=20_000)
    assert page.locator("#dock .prog").count() == 1
    expect(page.locator(".set-history table.runs tbody tr")).to_have_count(2)
    assert clipped(page, ".set-history table.runs th, .set-history table.runs td") == []  # 12, at 1400 px
    # 9: the finished box goes once its results are open (it would cover them)
    page.click(".prog .open-results")
    page.wait_for_selector(".run table.cases tbody tr")
    assert page.locator("#dock .prog").count() == 0

    # 11: runs listed by the run id agenteval prints, "Compare with…" with dates
    rows = api(page, "/api/runs?app=shop&eval_set=edges")
    assert len(rows) == 2 and all(r["run_group"] for r in rows)
    page.click("#nav-runs")
    page.wait_for_selector(".page:has(h2:text('Run history')) table.runs tbody tr")
    listed = page.locator("table.runs tbody tr td:nth-child(2) a").all_inner_texts()
    assert listed[:2] == [r["run_group"] for r in rows]
    newer, older = rows[0], rows[1]
    assert newer["created"] > older["created"]

    # 4: an open Runs page lists a run that finishes meanwhile
    started = api(page, "/apps/shop/eval-sets/edges/run", "POST", {})
    page.evaluate("async (id) => (await import('/static/views/progress.js')).watchRun(id, 'from the test')",
                  started["run_id"])
    page.wait_for_selector(".prog .open-results", timeout=20_000)
    expect(page.locator("table.runs tbody tr")).to_have_count(3)
    log = page.inner_text(".prog .log")  # 8: each turn as it finishes
    assert "whats_the_weather_in_paris: turn 1 of 2 done" in log and "turn 2 of 2 done" in log

    # 3: ticking the newest first still makes the older run the baseline
    page.check(f'input[data-run="{newer["run_id"]}"]')
    page.check(f'input[data-run="{older["run_id"]}"]')
    page.click("#compare-selected")
    page.wait_for_selector(".compare .counts")
    assert page.url.endswith(f"#/compare/{older['run_id']}/{newer['run_id']}")
    page.goto(base_url + f"/#/runs/{newer['run_id']}")
    page.wait_for_selector("#compare-with option >> nth=1", state="attached")
    options = page.locator("#compare-with option").all_inner_texts()[1:]
    assert all(re.search(r"\d{1,2}[/.:]\d{2}", o) for o in options)  # a date and time each

    # 5: latency per case is the case run's total (two turns), not the turns' mean
    cases = api(page, f"/api/runs/{newer['run_id']}/cases")
    case = cases[0]
    mean = next(m["score"] for m in case["metrics"] if m["name"] == "invocation_duration_v1")
    assert case["seconds"] == pytest.approx(2 * mean, abs=1e-3)  # the mean is to the millisecond
    title = page.locator(".chart:has-text('Latency per case') svg title").first.text_content() or ""
    secs = case["seconds"]
    shown = f"{int(secs * 1000 + 0.5)} ms" if secs < 1 else f"{secs:.2f} s"
    assert title == f"whats_the_weather_in_paris: {shown}"  # the bar is the total
    # 11: a case's page leads back to its run by the run id (the document id on hover)
    page.click('tr[data-case="whats_the_weather_in_paris"] a')
    back = page.wait_for_selector(f'a[href="#/runs/{newer["run_id"]}"]')
    assert back.inner_text() == "← run " + newer["run_group"]
    assert page.errors == []


def test_narrow_window(browser: Any, base_url: str) -> None:  # noqa: F811
    context = browser.new_context(viewport={"width": 800, "height": 720})
    context.set_default_timeout(10_000)
    p = context.new_page()
    try:
        p.goto(base_url + "/#/runs?app=evil")  # an agent never run: said, not an empty table
        p.wait_for_selector(".empty-runs >> text=No runs match these filters")
        assert p.locator("table.runs").count() == 0
        sid = api(p, "/apps/shop/users/user/sessions", "POST", {})["id"]
        api(p, f"/apps/shop/users/user/sessions/{sid}/messages", "POST",
            {"text": "What's the weather in Paris?"})
        api(p, "/apps/shop/eval-sets/narrow", "POST")
        api(p, "/apps/shop/eval-sets/narrow/add-session", "POST",
            {"eval_id": "paris", "session_id": sid, "user_id": "user"})
        run = api(p, "/apps/shop/eval-sets/narrow/run", "POST", {})["run_id"]
        deadline = time.monotonic() + 20
        while api(p, f"/api/runs/{run}").get("state") != "finished" and time.monotonic() < deadline:
            time.sleep(0.2)
        # 12: the sidebar folds away at 800 px behind a button; run tables are not clipped
        p.goto(base_url + "/#/app/shop/evalsets/narrow")
        p.wait_for_selector(".set-history table.runs tbody tr")
        assert p.is_hidden(".app .side")
        header = p.evaluate("document.querySelector('header.top').getBoundingClientRect().height")
        assert header < 60  # the header stays one line
        assert p.evaluate("document.querySelector('.app .main').getBoundingClientRect().width") > 700
        assert clipped(p, ".set-history table.runs th, .set-history table.runs td") == []
        assert p.evaluate("document.documentElement.scrollWidth") <= 800
        p.click("#side-toggle")
        p.wait_for_selector(".app .side", state="visible")
        p.goto(base_url + "/#/runs?app=shop")
        p.wait_for_selector("table.runs tbody tr")
        assert clipped(p, "table.runs th, table.runs td") == []
        assert p.evaluate("document.documentElement.scrollWidth") <= 800
        # a run's search table scrolls inside its card instead of cutting its last column
        p.goto(base_url + f"/#/runs/{run}/explore")
        p.wait_for_selector(".table-wrap table.search tbody tr")
        assert clipped(p, "table.search td:last-child") == []
        assert p.evaluate("document.documentElement.scrollWidth") <= 800
        # the run menus are as wide as their longest option: capped, so a long run name still fits
        long_option = ("(sel) => { const s = document.querySelector(sel);"
                       " s.append(new Option('x'.repeat(300), 'long')); s.value = 'long';"
                       " return s.getBoundingClientRect().width; }")
        p.goto(base_url + f"/#/runs/{run}")
        p.wait_for_selector("#compare-with")
        assert p.evaluate(long_option, "#compare-with") <= 300
        assert p.evaluate("document.documentElement.scrollWidth") <= 800
        p.goto(base_url + f"/#/matrix?runs={run}")
        p.wait_for_selector("#add-run")
        assert p.evaluate(long_option, "#add-run") <= 300
        assert p.evaluate("document.documentElement.scrollWidth") <= 800
    finally:
        context.close()


def test_markdown_never_injects_markup(page: Any, base_url: str) -> None:  # noqa: F811
    """The Markdown reader on hostile input: every tag, attribute and scheme stays text."""
    page.goto(base_url + "/#/runs")
    page.wait_for_selector("h2")
    hostile = json.dumps("# <img src=x onerror=window.__md=1>\n\n- **<script>window.__md=2</script>**\n"
                         "[x](javascript:window.__md=3) [y](data:text/html,<b>)"
                         " `<svg onload=window.__md=4>`\n"
                         "```\n</pre><img src=x onerror=window.__md=5>\n```")
    count = page.evaluate(f"""async () => {{
      const {{ markdown }} = await import('/static/markdown.js');
      const el = markdown({hostile});
      document.body.append(el);
      const bad = 'img, script, svg, [onerror], [onload], a[href^="javascript"], a[href^="data"]';
      return el.querySelectorAll(bad).length;
    }}""")
    assert count == 0
    assert page.evaluate("window.__md") is None


def test_a_turn_streams_its_steps(page: Any, base_url: str, judge: ScriptedModel) -> None:  # noqa: F811
    """8: the built-in agent's model and tool calls arrive one by one, before the turn itself;
    its reply grows in the page as the model writes it, and Stop stops the generation."""
    page.goto(base_url + "/#/runs")
    page.wait_for_selector("h2")
    sid = api(page, "/apps/dice/users/user/sessions", "POST", {"model": judge.model})["id"]
    events = page.evaluate("""async (sid) => {
      const { postStream } = await import('/static/api.js');
      const seen = [];
      await postStream(`/apps/dice/users/user/sessions/${sid}/messages/stream`, { text: "roll a die" },
        (type, d) => seen.push(type === "step" ? [type, d.kind, d.name, d.text]
          : type === "chunk" ? [type, d.call, d.text] : [type, d.response]));
      return seen;
    }""", sid)
    steps = [e for e in events if e[0] == "step"]
    assert events[-1] == ["turn", "You rolled a 4."]
    assert [e[1] for e in steps] == ["llm", "tool", "llm"] and steps[1][3] == '{"sides": 6}'
    # the scripted server does not stream: its answer is one chunk, its written call none
    assert [e for e in events if e[0] == "chunk"] == [["chunk", 2, "You rolled a 4."]]
    assert api(page, f"/apps/dice/users/user/sessions/{sid}")["num_turns"] == 1

    # in the chat: a model that streams, its reply growing in the pending turn, then Stop
    story = FakeServer(steps=[Step(chunks=tuple(f"word{i} " for i in range(40)), chunk_delay=0.25)]).start()
    try:
        page.goto(base_url + "/#/app/dice")
        page.fill("#model", f"openai-compat:story@{story.base_url}")
        page.press("#model", "Tab")
        # the model box takes the sidebar's width (a server model's name is long)
        assert page.evaluate("document.getElementById('model').getBoundingClientRect().width") > 300
        page.fill("#chat-input", "tell me a story")
        page.click("#send")
        page.wait_for_selector("#reply-draft >> text=/word1 /")
        first = page.inner_text("#reply-draft")
        # a later word arrives in the same draft (expect() polls without eval, which the CSP refuses)
        expect(page.locator("#reply-draft")).to_contain_text("word4 ", timeout=30_000)
        grown = page.inner_text("#reply-draft")
        assert grown.startswith(first.strip()) and len(grown) > len(first)
        page.click("#stop-reply")
        assert "Stopped: the turn was cancelled" in page.inner_text(".msg.send-failed >> nth=-1")
        deadline = time.monotonic() + 10
        while story.streams_cut == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert story.streams_cut == 1 and story.chunks_sent < 40  # the generation really stopped
    finally:
        story.close()
    assert page.errors == []


def test_escape_closes_the_span_while_the_trace_is_drawn_again(page: Any, base_url: str) -> None:  # noqa: F811
    # A render of the page hides the drawer while it loads and then reopens the span the address
    # names: an Escape pressed meanwhile must still close it, whatever render follows.
    page.goto(base_url + "/#/app/edges")
    send(page, "store something long", 0)
    page.click('[data-tab="trace"]')
    page.locator(".trow").first.click()
    page.wait_for_selector("#drawer:not([hidden]) .dtop")
    assert "span=" in page.url
    sid = page.url.split("/chat/")[1].split("?")[0]
    held: list[Any] = []
    page.route(f"**/sessions/{sid}", lambda route: held.append(route) if route.request.method == "GET"
               else route.continue_())
    page.reload(wait_until="commit")
    for _ in range(200):  # the reloaded page waits for its session: the render is in flight
        if held:
            break
        page.wait_for_timeout(25)
    assert held and page.is_hidden("#drawer")
    page.keyboard.press("Escape")
    held[0].continue_()
    page.wait_for_selector(".trow")  # the trace drawn again, after the Escape
    assert "span=" not in page.evaluate("location.href") and page.is_hidden("#drawer")
    assert page.locator(".trow.on").count() == 0
    page.unroute(f"**/sessions/{sid}")
    assert page.errors == []
