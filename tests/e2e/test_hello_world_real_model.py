"""The README's main command, end to end on the real embedded model (no skip: CI must run it)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agenteval.datasets.config import load_eval_config
from agenteval.datasets.loader import load_eval_set
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


def test_the_example_scenario_set_and_its_config_load() -> None:
    scenarios = REPO / "examples" / "hello_world" / "scenarios"
    (case,) = load_eval_set(scenarios / "dice_scenarios.evalset.json").eval_cases
    assert case.conversation_scenario and case.conversation_scenario.starting_prompt
    config = load_eval_config(scenarios / "test_config.json")
    assert "per_turn_user_simulator_quality_v1" in config.criteria and config.user_simulator_config


@pytest.mark.model
def test_a_scenario_with_the_user_simulator_on_embedded_model(tmp_path: Path) -> None:
    """A two-turn scenario with the example's agent and scenario config (the turn limit set to
    2): the embedded model plays the agent, the user (simulator) and the judge of
    per_turn_user_simulator_quality_v1. The example's own scenario set (roll, ask whether the
    roll is prime, thank: up to 4 turns) hit its 900 s timeout under load here; what it
    checks end to end is the same with two turns."""
    example = REPO / "examples" / "hello_world"
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    config = json.loads((example / "scenarios" / "test_config.json").read_text())
    config["user_simulator_config"]["max_allowed_invocations"] = 2
    (scenarios / "test_config.json").write_text(json.dumps(config))
    scenario = {"starting_prompt": "Roll a 6-sided die for me.",
                "conversation_plan": "Ask the agent to roll a 6-sided die. When it tells you the result, "
                                     "say thanks and end the conversation.",
                "user_persona": "NOVICE"}
    (scenarios / "roll.evalset.json").write_text(json.dumps({"eval_set_id": "roll", "eval_cases": [
        {"eval_id": "roll_then_thanks", "conversation_scenario": scenario}]}))
    out = tmp_path / "scenario.json"
    proc = subprocess.run(
        [sys.executable, "-m", "agenteval", "eval", str(example), str(scenarios / "roll.evalset.json"),
         "--output", str(out), "--no_history"],
        capture_output=True, text=True, timeout=900, cwd=tmp_path,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    (case,) = json.loads(out.read_text())["eval_case_results"]
    assert case["error_message"] is None, case["error_message"]
    turns = case["eval_metric_result_per_invocation"]
    assert turns[0]["actual_invocation"]["user_content"]["parts"][0]["text"] == "Roll a 6-sided die for me."
    assert 1 <= len(turns) <= 2
    (quality,) = [m for m in case["overall_eval_metric_results"]
                  if m["metric_name"] == "per_turn_user_simulator_quality_v1"]
    assert quality["score"] is not None and 0.0 <= quality["score"] <= 1.0
    assert turns[0]["eval_metric_results"][0]["score"] == 1.0  # the starting prompt, verbatim
    assert {r["item"] for r in case["judge_records"]} >= {"stop"}
    # The second user turn was the model's to write (the first is the starting prompt): the
    # message it wrote, or the end of the conversation (the stop signal).
    asked = {s["attributes"]["agenteval.invocation_index"]: s["attributes"]
             for s in case["trace"]["spans"] if s["kind"] == "user_simulator"}
    written = turns[1]["actual_invocation"]["user_content"]["parts"][0]["text"] if len(turns) == 2 else None
    assert asked[1].get("output.value") == written and asked[1]["agenteval.finished"] == (written is None)
