"""Byte-identical reruns on the embedded model (issue 24, item 3): two runs of one short case with
sampling on (temperature 0.8, the default seed) give the same reply, and the run header says
what was pinned. One case, one model call per run: the real model takes ~20 s per call here."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

AGENT = '''
from agenteval.agents import Agent

root_agent = Agent(name="poet", model="local", instruction="Answer in one short sentence.",
                   temperature=0.8, max_tokens=24)
'''


@pytest.mark.model
def test_two_runs_of_a_case_give_the_same_bytes_and_the_header_says_what_was_pinned(tmp_path: Path) -> None:
    agent = tmp_path / "poet"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    turn = {"user_content": {"role": "user", "parts": [{"text": "Say something about rivers."}]},
            "final_response": {"role": "model", "parts": [{"text": "Rivers run to the sea."}]}}
    (agent / "poet.evalset.json").write_text(json.dumps(
        {"eval_set_id": "poet", "eval_cases": [{"eval_id": "rivers", "conversation": [turn]}]}))
    (agent / "test_config.json").write_text(json.dumps(
        {"criteria": {"response_match_score": 0.0}, "endpoints": {"local": {"deterministic": True}}}))
    out = tmp_path / "result.json"
    proc = subprocess.run(
        [sys.executable, "-m", "agenteval", "eval", str(agent), str(agent / "poet.evalset.json"),
         "--num_runs", "2", "--parallelism", "2", "--output", str(out), "--no_history"],
        capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(out.read_text())
    replies = [r["eval_metric_result_per_invocation"][0]["actual_invocation"]["final_response"]
               ["parts"][0]["text"] for r in doc["eval_case_results"]]
    assert len(replies) == 2 and replies[0] and replies[0].encode() == replies[1].encode(), replies
    pinned = doc["run"]["pinned"]["local"]
    assert pinned["deterministic"] is True and pinned["calls_in_flight"] == 1
    assert pinned["prompt_cache"] is False and pinned["model_sha256"] and "42" in pinned["seed"]
