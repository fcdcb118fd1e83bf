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
