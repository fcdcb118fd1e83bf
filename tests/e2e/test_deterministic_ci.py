"""The README's Deterministic CI layout, run as written: a pytest suite where the plugin runs the
eval set's cases with tools answered from the set (`mock_tools`, strict) and the embedded model
pinned (`endpoints.local.deterministic`), and a test replays a recorded run through the CLI. The
agent is the volatile ADK agent (scripted model; clock, uuid and random-quote tools)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("google.adk", reason="google-adk is not installed (pip install 'agenteval[adk]')")

from tests.agents import volatile_adk

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[2]

CONFIG = {
    "criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8},
    "mock_tools": "expected",
    "mock_tools_strict": True,
    "endpoints": {"local": {"deterministic": True}},
}
REPLAY_TEST = '''
import subprocess
import sys


def test_the_recorded_run_replays_without_divergence():
    """No model call and no tool call: fails when a prompt, a tool call or a verdict changed."""
    r = subprocess.run([sys.executable, "-m", "agenteval", "eval", "my_agent", "my_agent/ci.evalset.json",
                        "--replay", "tests/recordings/ci.json", "--no_history"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
'''
AGENT = "from tests.agents.volatile_adk import agent\n\nroot_agent = agent(INSTRUCTION)\n"


def _agent(project: Path, instruction: str | None = None) -> None:
    text = AGENT.replace("agent(INSTRUCTION)", f"agent({instruction!r})" if instruction else "agent()")
    (project / "my_agent" / "agent.py").write_text(text)


def test_the_readme_layout_passes_and_a_changed_prompt_fails_the_replay(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the agent imports tests.agents.volatile_adk
    project = pytester.path
    (project / "my_agent").mkdir()
    _agent(project)
    (project / "my_agent" / "ci.evalset.json").write_text(
        volatile_adk.eval_set().model_dump_json(exclude_none=True))
    (project / "my_agent" / "test_config.json").write_text(json.dumps(CONFIG))
    (project / "tests" / "recordings").mkdir(parents=True)
    (project / "tests" / "test_replay.py").write_text(REPLAY_TEST)
    (project / "pytest.ini").write_text("[pytest]\nagenteval = true\nagenteval_agent = my_agent\n")
    record = ["eval", "my_agent", "my_agent/ci.evalset.json", "--no_history", "--output",
              "tests/recordings/ci.json"]
    recorded = subprocess.run([sys.executable, "-m", "agenteval", *record], cwd=project,
                              capture_output=True, text=True)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)  # the two eval cases, and the replay
    _agent(project, "Open tickets, share quotes, politely.")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "tests/test_replay.py")
    result.assert_outcomes(failed=1)
    assert "replay diverged in case 'ticket_then_quote' (run 0), invocation 0, step 0" in result.stdout.str()
