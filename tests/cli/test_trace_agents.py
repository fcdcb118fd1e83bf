"""The agent tree in `agenteval trace` and the HTML report, on the recorded ADK multi-agent run
(tests/fixtures/traces/adk_multi.*: a handoff to a sub-agent, an AgentTool)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from agenteval.cli.main import cli
from tests.conftest import FIXTURES

TRACES = FIXTURES / "traces"


def _run(*args: str | Path) -> str:
    r = CliRunner().invoke(cli, [str(a) for a in args], env={"COLUMNS": "400"})
    assert r.exit_code in (0, 1), r.output
    return r.output


def _miscredited(tmp_path: Path) -> Path:
    """The eval set crediting booking_agent's book_table call to weather_agent."""
    doc = json.loads((TRACES / "adk_multi.evalset.json").read_text())
    for case in doc["eval_cases"]:
        for turn in case["conversation"]:
            for event in turn["intermediate_data"]["invocation_events"]:
                if event["author"] == "booking_agent":
                    event["author"] = "weather_agent"
    path = tmp_path / "miscredited.evalset.json"
    path.write_text(json.dumps(doc))
    return path


def _lines(out: str, start: str) -> list[str]:
    """The agent tree under the header line starting with `start`, guides stripped."""
    lines = out.splitlines()
    k = next(i for i, line in enumerate(lines) if line.startswith(start) and line.endswith("agents"))
    tree = []
    for line in lines[k + 1:]:
        if line[:1] not in "└├│ ":
            break
        tree.append(line.lstrip("└├│─ "))
    return tree


def test_trace_shows_the_agent_tree_with_figures_and_verdicts(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    _run("score", TRACES / "adk_multi.evalset.json", "--actual", TRACES / "adk_multi.otlp.json", "-o", out)
    shown = _run("trace", out)
    book = _lines(shown, "adk_multi / book-chez-marcel")
    assert book[0] == "invocation 0"
    assert book[1].startswith("triage_agent  1 model call · 1 tool call · tokens 50 in / 7 out · ")
    assert book[1].endswith("tools transfer_to_agent  ✓ calls matched")
    assert book[2].startswith("booking_agent  handed control · 2 model calls · 1 tool call · "
                              "tokens 160 in / 19 out · ")
    assert book[2].endswith("tools book_table  ✓ calls matched")
    oslo = _lines(shown, "adk_multi / cold-in-oslo")
    assert oslo[2].startswith("weather_agent  called as a tool · 2 model calls · 1 tool call")
    # the span tree still follows
    assert "execute_tool book_table" in shown and "invoke_agent weather_agent" in shown
    # --invocation keeps the tree to that turn
    assert _lines(_run("trace", out, "cold-in-oslo", "--invocation", "0"), "adk_multi / cold-in-oslo")[0] \
        == "invocation 0"


def test_a_miscredited_call_fails_both_agents_naming_them(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    _run("score", _miscredited(tmp_path), "--actual", TRACES / "adk_multi.otlp.json", "-o", out)
    book = _lines(_run("trace", out, "book-chez-marcel"), "adk_multi / book-chez-marcel")
    why = ('✗ tool_trajectory_avg_score: EXACT: book_table(restaurant="Chez Marcel", time="20:00", '
           'party_size=2) was expected from weather_agent, made by booking_agent')
    assert book[1].endswith("tools transfer_to_agent  ✓ calls matched"), book
    assert book[2].startswith("booking_agent  handed control") and book[2].endswith(why), book
    assert book[3] == f"weather_agent  did not run  {why}"  # expected to act, never ran
    doc = json.loads(out.read_text())
    (case,) = [c for c in doc["eval_case_results"] if c["eval_id"] == "book-chez-marcel"]
    assert "was expected from weather_agent, made by booking_agent" in case["reasons"][0]["reason"]


def test_the_html_report_shows_the_agent_tree_of_multi_agent_cases(tmp_path: Path) -> None:
    out, page = tmp_path / "r.json", tmp_path / "r.html"
    _run("score", _miscredited(tmp_path), "--actual", TRACES / "adk_multi.otlp.json", "-o", out,
         "--html", page)
    html = page.read_text()
    assert html.count("<details class=agents open><summary>agents</summary>") == 2
    assert "<li><b>booking_agent</b> <span class=e>handed control · 2 model calls · 1 tool call · " in html
    assert 'was expected from weather_agent, made by booking_agent</span>' in html
    assert "<li><b>weather_agent</b> <span class=e>did not run</span>" in html
    assert '<span class="F">✗ tool_trajectory_avg_score: EXACT: book_table(restaurant=&quot;Chez' in html
    assert '<li><b>weather_agent</b> <span class=e>called as a tool' in html
    assert '<span class="P">✓ calls matched</span>' in html


def test_a_single_agent_case_shows_no_agent_tree(tmp_path: Path) -> None:
    out, page = tmp_path / "r.json", tmp_path / "r.html"
    _run("score", TRACES / "expected.evalset.json", "--actual", TRACES / "adk.otlp.json", "-o", out,
         "--html", page)
    assert "agents</summary>" not in page.read_text()
    assert not any(line.endswith("  agents") for line in _run("trace", out).splitlines())
