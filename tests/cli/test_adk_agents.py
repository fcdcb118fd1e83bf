"""`agenteval eval` of a Google ADK agent folder, as a user runs it: a separate process, so what
reaches the terminal is what a user sees."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("google.adk", reason="google-adk is not installed (pip install 'agenteval[adk]')")

from tests.helpers import call, eval_set, inv

# A model that calls the tool the user's first word names, with the `key=value` words as its
# arguments, then answers with the tool's result: deterministic, no network.
AGENT = '''
from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm, LlmResponse
from google.genai import types


class RuleLlm(BaseLlm):
    model: str = "rule-model"

    async def generate_content_async(self, llm_request, stream=False):
        parts = llm_request.contents[-1].parts or []
        done = [p.function_response for p in parts if p.function_response]
        if done:
            text = f"{done[0].name} gave {done[0].response}"
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))
            return
        name, *words = "".join(p.text or "" for p in parts).split()
        call = types.FunctionCall(name=name, args=dict(w.split("=", 1) for w in words))
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


def lookup(key: str) -> dict:
    """Looks a key up."""
    return {"value": key.upper()}


def broken(key: str) -> dict:
    """Always fails."""
    raise ValueError(f"cannot look {key} up")


root_agent = LlmAgent(name="lookup_agent", model=RuleLlm(), tools=[lookup, broken])
'''


def _project(tmp_path: Path) -> tuple[Path, Path]:
    agent = tmp_path / "lookup_agent"
    agent.mkdir()
    (agent / "__init__.py").write_text("from . import agent\n")
    (agent / "agent.py").write_text(AGENT)
    cases = {"good": [inv("lookup key=a", "lookup gave {'value': 'A'}", [call("lookup", key="a")])],
             "bad": [inv("broken key=b", "anything", [call("broken", key="b")])]}
    path = agent / "set1.evalset.json"
    path.write_text(eval_set("set1", cases).model_dump_json(exclude_none=True))
    return agent, path


@pytest.mark.parametrize("isolation", ["none", "process"])
def test_a_failing_adk_tool_is_one_line_not_adks_tracebacks(tmp_path: Path, isolation: str) -> None:
    # google-adk logs a failing turn's exception twice with its traceback (~180 lines a case)
    # before agenteval records it on the case: the report was buried under them.
    agent, path = _project(tmp_path)
    r = subprocess.run([sys.executable, "-m", "agenteval", "eval", str(agent), str(path),
                        "--no_history", "--isolation", isolation],
                       capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert f"ValueError: cannot look b up (at {agent / 'agent.py'}:29)" in r.stderr
    assert "good    │ PASSED" in r.stdout and "bad     │ FAILED" in r.stdout


def test_recording_a_failing_adk_turn_says_why_in_one_line(tmp_path: Path) -> None:
    # `eval_set record` printed ADK's two tracebacks (~180 lines) above its one-line refusal.
    agent, _ = _project(tmp_path)
    r = subprocess.run([sys.executable, "-m", "agenteval", "eval_set", "record", str(agent), "set1",
                        "--prompt", "broken key=b"],
                       capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})
    assert r.returncode != 0 and "Traceback" not in r.stderr + r.stdout, r.stderr
    assert (f"error: the agent failed, nothing was recorded: ValueError: cannot look b up "
            f"(at {agent / 'agent.py'}:29)") in r.stderr
