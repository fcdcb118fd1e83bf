"""The agent tree in the web, in a real browser (see test_browser.py): the recorded ADK
multi-agent run (tests/fixtures/traces/adk_multi.*) scored into an agent folder's history, its
case page's trace drawing each invocation's agents with their verdicts, and the case editor
crediting an expected call to another agent, saved into the eval set as the event's author."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from tests.conftest import FIXTURES
from tests.web.browser_support import serve, shot
from tests.web.test_browser import app_factory, browser, executable, page  # noqa: F401 (fixtures)

expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect

TRACES = FIXTURES / "traces"


@pytest.fixture(scope="module")
def agents_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """AGENTS_DIR with `multi`, holding the multi-agent eval set and a run of it scored from the
    recorded trace into its history (as `agenteval score --history` run in the folder does)."""
    root = tmp_path_factory.mktemp("agents")
    folder = root / "multi"
    folder.mkdir()
    (folder / "agent.py").write_text("def root_agent(text):\n    return 'ok'\n", encoding="utf-8")
    shutil.copy(TRACES / "adk_multi.evalset.json", folder / "adk_multi.evalset.json")
    here = Path.cwd()
    os.chdir(folder)
    try:
        r = CliRunner().invoke(cli, ["score", "adk_multi.evalset.json", "--actual",
                                     str(TRACES / "adk_multi.otlp.json"), "--history", "-o", "result.json"])
    finally:
        os.chdir(here)
    assert r.exit_code == 0, r.output
    return root


@pytest.fixture(scope="module")
def base_url(executable: str, agents_dir: Path) -> Iterator[str]:  # noqa: F811
    with serve(app_factory(agents_dir)) as url:
        yield url


def test_the_case_trace_draws_the_agent_tree(page: Any, base_url: str, agents_dir: Path,  # noqa: F811
                                             tmp_path: Path) -> None:
    run_id = json.loads((agents_dir / "multi" / "result.json").read_text())["eval_set_result_id"]
    page.goto(f"{base_url}/#/runs/{run_id}/cases/book-chez-marcel")
    tree = page.wait_for_selector('.case-trace .agent-tree[data-invocation="0"]')
    root = tree.query_selector(':scope > li.agent[data-agent="triage_agent"]')
    assert root is not None
    child = root.query_selector(':scope > ul > li.agent[data-agent="booking_agent"]')
    assert child is not None  # the specialist under the agent that handed it control
    text = child.inner_text()
    assert "handed control · 2 model calls · 1 tool call · tokens 160 in / 19 out" in text
    assert "tools book_table" in text and "✓ calls matched" in text
    child.query_selector(".agent-name").click()  # opens the agent's run in the drawer
    page.wait_for_selector('#drawer .dtop strong:has-text("invoke_agent booking_agent")')
    shot(page, tmp_path, "agent-tree")
    page.goto(f"{base_url}/#/runs/{run_id}/cases/cold-in-oslo")
    inner = page.wait_for_selector('.agent-tree li.agent[data-agent="triage_agent"] > ul > '
                                   'li.agent[data-agent="weather_agent"]')
    assert "called as a tool" in inner.inner_text()
    assert page.errors == []


def test_the_case_editor_credits_a_call_to_an_agent(page: Any, base_url: str, agents_dir: Path) -> None:  # noqa: F811
    page.goto(f"{base_url}/#/app/multi/evalsets/adk_multi/cases/book-chez-marcel")
    view = page.wait_for_selector("#case-editor .calls-view")
    assert view.inner_text().splitlines() == [
        'triage_agent: transfer_to_agent({"agent_name":"booking_agent"})',
        'booking_agent: book_table({"restaurant":"Chez Marcel","time":"20:00","party_size":2})']
    page.click("#edit-case")
    # Editing begins once the case is read again (a request): wait for the editor's inputs, not
    # count them at once (under load they were not there yet: [] was read).
    authors = page.locator('.inv[data-inv="0"] .call-author')
    expect(authors).to_have_count(2)
    assert [authors.nth(i).input_value() for i in range(authors.count())] == ["triage_agent", "booking_agent"]
    authors.nth(1).fill("weather_agent")
    page.click("#save-case")
    page.wait_for_selector("#edit-case")
    saved = json.loads((agents_dir / "multi" / "adk_multi.evalset.json").read_text())
    case = next(c for c in saved["eval_cases"] if c["eval_id"] == "book-chez-marcel")
    events = case["conversation"][0]["intermediate_data"]["invocation_events"]
    calls = [(e["author"], p["function_call"]["name"]) for e in events for p in e["content"]["parts"]
             if "function_call" in p]
    assert calls == [("triage_agent", "transfer_to_agent"), ("weather_agent", "book_table")]
    responses = [(e["author"], p["function_response"]["name"]) for e in events for p in e["content"]["parts"]
                 if "function_response" in p]
    assert responses == [("triage_agent", "transfer_to_agent"), ("booking_agent", "book_table")]  # kept
    assert page.errors == []
