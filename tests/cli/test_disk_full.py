"""A full disk, in a real process whose file size limit makes every write past it fail (as a
full disk does): one line naming the file, exit 2, no traceback, nothing partially written."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

LIMIT = 150_000  # bytes any file of the process may grow to


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def _big_set(path: Path, cases: int = 300) -> None:
    def case(i: int) -> dict[str, object]:
        return {"eval_id": f"c{i}", "conversation": [
            {"user_content": {"role": "user", "parts": [{"text": "hi " * 50}]},
             "final_response": {"role": "model", "parts": [{"text": "hello " * 50}]}}]}
    path.write_text(json.dumps({"eval_set_id": "big", "eval_cases": [case(i) for i in range(cases)]}))


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agenteval", *args], cwd=cwd, preexec_fn=_limited,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    _big_set(tmp_path / "big.evalset.json")
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "__init__.py").write_text("root_agent = lambda text: 'hello ' * 50\n")
    return tmp_path


def test_score_output_on_a_full_disk(workdir: Path) -> None:
    r = _run(workdir, "score", "big.evalset.json", "--actual", "big.evalset.json", "-o", "out.json")
    assert r.returncode == 2, r.stderr
    assert "out.json: cannot be written" in r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert not (workdir / "out.json").exists()
    assert not [p for p in workdir.iterdir() if p.name.startswith(".out.json")]  # no temporary left


def test_eval_journal_on_a_full_disk(workdir: Path) -> None:
    # The run journal is written case by case inside the run's task group, as the document is
    # streamed to the history: whichever fills the disk first, the error is one line, not an
    # exception group's traceback, and no document is left in the history.
    r = _run(workdir, "eval", "agent", "big.evalset.json")
    assert r.returncode == 2, r.stderr
    # (The document's spool of summaries is written by the megabyte: at this limit the journal's
    # rows file fills first.)
    assert ("journal.sqlite: cannot use the run journal" in r.stderr
            or ".rows: cannot write the run journal's rows: File too large" in r.stderr
            or "evalset_result.json: cannot be written: File too large" in r.stderr), r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    history = workdir / "agent" / ".agenteval" / "eval_history"
    assert not history.exists() or not list(history.iterdir())


def test_eval_output_on_a_full_disk(workdir: Path) -> None:
    r = _run(workdir, "eval", "agent", "big.evalset.json", "--no_history", "--output", "out.json")
    assert r.returncode == 2, r.stderr
    assert "out.json: cannot be written" in r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert not (workdir / "out.json").exists()
