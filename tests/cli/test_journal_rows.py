"""The run journal's rows file (`store.journal_rows`) at the command line: a rows file that
cannot be written is one line naming it, exit 2, no traceback, and no document recorded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_an_unwritable_rows_file_is_one_line_naming_it(tmp_path: Path) -> None:
    cases = [{"eval_id": f"c{i}", "conversation": [
        {"user_content": {"role": "user", "parts": [{"text": f"q{i}"}]},
         "final_response": {"role": "model", "parts": [{"text": "a"}]}}]} for i in range(5)]
    (tmp_path / "s.evalset.json").write_text(json.dumps({"eval_set_id": "s", "eval_cases": cases}))
    agent = tmp_path / "agent"
    (agent / ".agenteval").mkdir(parents=True)
    (agent / "__init__.py").write_text("root_agent = lambda text: 'a'\n")
    (agent / ".agenteval" / "journal.rows").write_text("")  # a file where the rows' folder goes
    r = subprocess.run([sys.executable, "-m", "agenteval", "eval", "agent", "s.evalset.json"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("error: agent/.agenteval/journal.rows/"), r.stderr
    assert ".rows: cannot write the run journal's rows: " in r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    history = agent / ".agenteval" / "eval_history"
    assert not history.exists() or not list(history.iterdir())
