"""The run journal's ownership (one live process per run; a killed one owns nothing) and its
pruning (a forgotten run leaves no rows, no lock file and no free pages)."""

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agenteval.schema import RunSpec
from agenteval.store.claim import lock_path
from agenteval.store.journal import Journal, RunOwned


def _begin(root: Path, run_id: str = "20250101-000000-aaaaaa") -> Journal:
    journal = Journal(root)
    journal.begin(RunSpec(run_id=run_id, command="eval", started=1.0), "{}", 3)
    return journal


def test_a_run_has_one_owner_until_released(tmp_path: Path) -> None:
    owner = _begin(tmp_path)
    other = Journal(tmp_path)
    owned = r"run 20250101-000000-aaaaaa is owned by a live process \(pid \d+ on "
    with pytest.raises(RunOwned, match=owned):
        other.claim("20250101-000000-aaaaaa")
    assert [r.status for r in other.runs()] == ["running"]
    owner.release("20250101-000000-aaaaaa")
    assert [r.status for r in other.runs()] == ["interrupted"]
    other.claim("20250101-000000-aaaaaa")  # free now
    other.close()


def test_a_killed_owner_owns_nothing(tmp_path: Path) -> None:
    code = ("import sys, time\nfrom agenteval.schema import RunSpec\n"
            "from agenteval.store.journal import Journal\n"
            f"Journal({str(tmp_path)!r}).begin(RunSpec(run_id='r1', command='eval'), '{{}}', 1)\n"
            "print('owned', flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "owned"
        with pytest.raises(RunOwned, match=f"pid {proc.pid} on "):
            Journal(tmp_path).claim("r1")
    finally:
        proc.kill()
        proc.wait()
    journal = Journal(tmp_path)
    assert [r.status for r in journal.runs()] == ["interrupted"]  # its lock file is still there
    assert lock_path(tmp_path, "r1").exists()
    journal.claim("r1")
    journal.close()


def test_latest_is_the_newest_run(tmp_path: Path) -> None:
    journal = _begin(tmp_path, "20250101-000000-aaaaaa")
    journal.begin(RunSpec(run_id="20250102-000000-bbbbbb", command="eval", started=2.0), "{}", 3)
    assert journal.get("latest").run_id == "20250102-000000-bbbbbb"
    assert journal.get("20250101").run_id == "20250101-000000-aaaaaa"
    journal.close()


def test_a_forgotten_run_leaves_nothing(tmp_path: Path) -> None:
    from agenteval.schema import EvalCaseResult

    journal = _begin(tmp_path)
    journal.append_all("20250101-000000-aaaaaa", [
        EvalCaseResult(eval_id=f"c{i}", eval_set_id="s", run_index=0, final_eval_status=1,
                       overall_eval_metric_results=[], eval_metric_result_per_invocation=[],
                       session_id="x" * 5000) for i in range(200)])
    started = time.monotonic()
    journal.forget("20250101-000000-aaaaaa")
    assert time.monotonic() - started < 5
    assert journal.runs() == [] and not lock_path(tmp_path, "20250101-000000-aaaaaa").exists()
    with sqlite3.connect(journal.path) as conn:
        assert conn.execute("SELECT count(*) FROM journal_cases").fetchone() == (0,)
        assert conn.execute("PRAGMA freelist_count").fetchone() == (0,)
    assert journal.path.stat().st_size < 100_000  # 200 × 5 KB were in it
