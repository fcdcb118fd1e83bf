"""The case timeout in this process (no isolation): a case run that took longer than its limit is
never recorded as passed, whatever the agent did (swallowed the cancellation, held the GIL in one
call that returned late); the turns finished within the limit are kept."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import anyio

from agenteval.agents import CallableAdapter
from agenteval.runner.inference import infer_case
from agenteval.schema import Invocation, content_text
from tests.helpers import eval_set, inv

STUBBORN = '''
import asyncio

async def root_agent(text):
    if text == "stubborn":
        for _ in range(3):  # swallows every cancellation, then answers as if nothing happened
            try:
                await asyncio.sleep(2)
            except asyncio.CancelledError:
                pass
    return "answer to " + text
'''

# One C call holding the GIL (and the loop) for 3 s: libc's sleep through ctypes.PyDLL, which
# keeps the GIL where CDLL would release it. Three seconds on any machine and no CPU (a
# backtracking regex did it before: ~9 s of CPU here, ~90 s of wall time in a loaded suite).
GIL = '''
import ctypes

async def root_agent(text):
    if text == "hold":
        ctypes.PyDLL(None).sleep(3)
    return "answer to " + text
'''


def _eval(tmp_path: Path, agent_code: str, cases: dict[str, list[str]], *extra: str) -> dict[str, dict]:  # type: ignore[type-arg]
    agent = tmp_path / "agent.py"
    agent.write_text(agent_code)
    s = eval_set("t", {eid: [inv(t, f"answer to {t}") for t in turns] for eid, turns in cases.items()})
    path = tmp_path / "t.evalset.json"
    path.write_text(s.model_dump_json(exclude_none=True))
    out = tmp_path / "out.json"
    r = subprocess.run([sys.executable, "-m", "agenteval", "eval", str(agent), str(path), "--no_history",
                        *extra, "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stderr + r.stdout
    return {c["eval_id"]: c for c in json.loads(out.read_text())["eval_case_results"]}


def test_an_agent_swallowing_the_cancellation_is_not_passed(tmp_path: Path) -> None:
    cases = _eval(tmp_path, STUBBORN, {"ok": ["a"], "stubborn": ["b", "stubborn"]}, "--case_timeout", "1")
    assert cases["ok"]["final_eval_status"] == 1
    assert cases["stubborn"]["final_eval_status"] == 2
    assert cases["stubborn"]["error_message"] == ("TimeoutError: the case took longer than 1 s "
                                                  "(case timeout); 1 turn finished before are kept")


def test_a_call_holding_the_gil_past_the_limit_is_not_passed(tmp_path: Path) -> None:
    cases = _eval(tmp_path, GIL, {"ok": ["a"], "stuck": ["hold"]}, "--case_timeout", "1",
                  "--parallelism", "1")  # (a case beside it would be held past its limit too)
    assert cases["ok"]["final_eval_status"] == 1
    assert cases["stuck"]["final_eval_status"] == 2
    assert cases["stuck"]["error_message"] == ("TimeoutError: the case took longer than 1 s "
                                               "(case timeout); 0 turns finished before are kept")


def test_a_late_turn_is_dropped_and_what_finished_in_time_is_kept() -> None:
    async def agent(text: str) -> str:
        if text == "late":
            try:
                await asyncio.sleep(5)
            except asyncio.CancelledError:
                return "too late"  # answers after the limit instead of stopping
        return "answer to " + text

    case = eval_set("s", {"c": [inv("early"), inv("late"), inv("never")]}).eval_cases[0]
    heard: list[str] = []

    def hear(invocation: Invocation) -> None:
        heard.append(content_text(invocation.final_response))

    run = anyio.run(lambda: infer_case(CallableAdapter(agent), case, "s", 0, timeout=0.3, on_turn=hear))
    assert [i.user_content.text() for i in run.actual] == ["early"]
    assert heard == ["answer to early"]
    assert run.error_message is not None and run.error_message.startswith(
        "TimeoutError: the case took longer than 0.3 s")
    assert run.session_details is not None and run.session_details["id"] == run.session_id


def test_an_error_whose_message_utf8_cannot_hold_is_recorded_with_the_run(tmp_path: Path) -> None:
    # A lone surrogate in the agent's exception ended the whole run in a traceback when the
    # document (and the journal, the history) wrote the case: its values and trace attributes
    # are made writable, its error message and its spans' errors were not.
    agent = 'def root_agent(text):\n    raise ValueError("bad \\ud800 " + text)\n'
    cases = _eval(tmp_path, agent, {"c": ["x"]})
    assert cases["c"]["error_message"].startswith("ValueError: bad \ufffd x")
    assert "error: text with an unpaired surrogate; each written as U+FFFD" in cases["c"]["warnings"]
    spans = cases["c"]["trace"]["spans"]
    assert any((s.get("error") or "").startswith("ValueError: bad \ufffd x") for s in spans)
