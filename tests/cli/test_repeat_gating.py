"""The repeated-run table's caption states the config's `repeat_gating`, the rule the verdicts
were taken by (it said `mean` whatever the config chose)."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli

SET = Path(__file__).resolve().parents[2] / "examples" / "hello_world" / "hello_world.evalset.json"


@pytest.mark.parametrize("gating", ["all_runs", "any_run", "mean"])
def test_the_repeated_run_table_names_the_gating_in_force(tmp_path: Path, gating: str) -> None:
    (tmp_path / "agent.py").write_text("def root_agent(text):\n    return 'I rolled a 4.'\n")
    shutil.copy(SET, tmp_path / "set.evalset.json")
    (tmp_path / "cfg.json").write_text(json.dumps({"criteria": {"response_match_score": 0.3},
                                                   "repeat_gating": gating}))
    result = CliRunner().invoke(cli, [
        "eval", str(tmp_path / "agent.py"), str(tmp_path / "set.evalset.json"), "--num_runs", "2",
        "--config_file_path", str(tmp_path / "cfg.json"), "--no_history"], terminal_width=200)
    assert result.exit_code in (0, 1), result.output
    assert "Repeated runs" in result.output and f"gating: {gating}" in result.output
