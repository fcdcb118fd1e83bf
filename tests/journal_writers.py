"""A real process writing a run journal, to be SIGKILLed by the journal and resume tests."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from agenteval.store.journal import FLUSH_SECONDS


def appending(root: Path, total: int, cases: int, flush: str = "") -> subprocess.Popen[str]:
    """A process that begins run `r1` of `total` case runs in the journal at `root`, appends
    `cases` of them (case runs `c0`, `c1`, ... of eval set `s`; then runs `flush`, e.g.
    `j.flush()`), prints `appended` and waits to be killed."""
    code = ("import time\nfrom agenteval.schema import EvalCaseResult, RunSpec\n"
            "from agenteval.store.journal import Journal\n"
            f"j = Journal({str(root)!r})\nj.begin(RunSpec(run_id='r1', command='eval'), '{{}}', {total})\n"
            f"for i in range({cases}):\n"
            "    j.append('r1', 's', EvalCaseResult(eval_id=f'c{i}', eval_set_id='s', run_index=0, "
            "final_eval_status=1, overall_eval_metric_results=[], eval_metric_result_per_invocation=[], "
            f"session_id='x'))\n{flush}\nprint('appended', flush=True)\ntime.sleep(60)\n")
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def killed(root: Path, total: int, cases: int) -> None:
    """The journal at `root` as a process leaves it that appended `cases` case runs of `total`,
    committed them, and was SIGKILLed: its WAL unmerged (a killed process closes nothing)."""
    proc = appending(root, total, cases, "j.flush()")
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "appended"
    finally:
        proc.kill()
        proc.wait()


def killed_after_window(root: Path, total: int, cases: int) -> None:
    """The journal at `root` as a process leaves it that appended `cases` case runs of `total`,
    never flushed, and was SIGKILLed once the flush window (`FLUSH_SECONDS`) had passed."""
    proc = appending(root, total, cases)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "appended"
        time.sleep(FLUSH_SECONDS + 2.0)  # the window, and a margin for a loaded machine
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -9


def padded_wal(journal_path: Path, size: int) -> None:
    """Adds a `size`-byte blob to the WAL of the journal at `journal_path` from a process that is
    SIGKILLed once it committed, so the WAL stays unmerged. (Done after the journal's writer is
    killed: a commit of that writer's, late on a loaded machine, would merge it.)"""
    code = ("import os, signal, sqlite3, sys\nc = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('PRAGMA wal_autocheckpoint=0')\nc.execute('CREATE TABLE pad (b BLOB)')\n"
            f"c.execute('INSERT INTO pad VALUES (zeroblob({size}))')\nos.kill(os.getpid(), signal.SIGKILL)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(journal_path)], check=False)
    assert proc.returncode == -9


def wal_sizes(journal_path: Path) -> tuple[int, int]:
    """The database file's size and its WAL's (0 once merged and closed: the WAL goes)."""
    wal = journal_path.with_name(journal_path.name + "-wal")
    return journal_path.stat().st_size, wal.stat().st_size if wal.exists() else 0
