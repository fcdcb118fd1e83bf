"""The README's main command, end to end on the real embedded model (no skip: CI must run it)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.mark.model
def test_hello_world_example_on_embedded_model(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    example = REPO / "examples" / "hello_world"
    proc = subprocess.run(
        [sys.executable, "-m", "agenteval", "eval", str(example), str(example / "hello_world.evalset.json"),
         "--print_detailed_results", "--output", str(out), "--no_history"],
        capture_output=True, text=True, timeout=900, cwd=tmp_path,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert "Eval Run Summary" in proc.stdout
    (case,) = json.loads(out.read_text())["eval_case_results"]
    assert case["error_message"] is None
    scores = {m["metric_name"]: m["score"] for m in case["overall_eval_metric_results"]}
    # The embedded agent must call roll_die(sides=9) and check_prime(nums=[10, 19]) as recorded.
    assert scores["tool_trajectory_avg_score"] == 1.0, proc.stdout
    assert scores["tool_call_count_v1"] > 0 and scores["token_usage_v1"] > 0
    assert 0.0 < scores["response_match_score"] <= 1.0


@pytest.mark.model
def test_scenario_example_with_the_user_simulator_on_embedded_model(tmp_path: Path) -> None:
    """The example's scenario set: the embedded model plays the agent, the user (simulator) and
    the judge of per_turn_user_simulator_quality_v1."""
    out = tmp_path / "scenario.json"
    example = REPO / "examples" / "hello_world"
    proc = subprocess.run(
        [sys.executable, "-m", "agenteval", "eval", str(example),
         str(example / "scenarios" / "dice_scenarios.evalset.json"), "--output", str(out), "--no_history"],
        capture_output=True, text=True, timeout=900, cwd=tmp_path,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    (case,) = json.loads(out.read_text())["eval_case_results"]
    assert case["error_message"] is None, case["error_message"]
    turns = case["eval_metric_result_per_invocation"]
    assert turns[0]["actual_invocation"]["user_content"]["parts"][0]["text"] == "Roll a 6-sided die for me."
    assert 1 <= len(turns) <= 4
    (quality,) = [m for m in case["overall_eval_metric_results"]
                  if m["metric_name"] == "per_turn_user_simulator_quality_v1"]
    assert quality["score"] is not None and 0.0 <= quality["score"] <= 1.0
    assert turns[0]["eval_metric_results"][0]["score"] == 1.0  # the starting prompt, verbatim
    assert {r["item"] for r in case["judge_records"]} >= {"stop"}
    assert any(s["kind"] == "user_simulator" for s in case["trace"]["spans"])
