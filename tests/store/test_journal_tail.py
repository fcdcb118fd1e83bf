"""A journaled run's tail: case runs written to the rows file within the flush window and not
committed to SQLite yet (`COMMIT_ROWS`) are finished for `finished_keys` and `runs` whoever asks,
and are committed by the next process to claim the run (a resume), a torn last frame cut off."""

import sqlite3
import time
from pathlib import Path

from agenteval.schema import EvalCaseResult
from agenteval.store.journal import FLUSH_CASES, Journal
from agenteval.store.journal_rows import rows_path
from agenteval.store.journal_writer import COMMIT_ROWS
from tests.journal_writers import killed_after_window

RUN = "r1"



def _committed(root: Path) -> int:
    with sqlite3.connect(root / ".agenteval" / "journal.sqlite") as conn:
        return int(conn.execute("SELECT count(*) FROM journal_cases").fetchone()[0])


def _result(i: int, error: str | None = None) -> EvalCaseResult:
    return EvalCaseResult(eval_id=f"c{i}", eval_set_id="s", run_index=0, final_eval_status=1,
                          overall_eval_metric_results=[], eval_metric_result_per_invocation=[],
                          session_id="x", error_message=error)


def test_case_runs_not_committed_yet_are_read_from_the_rows_file(tmp_path: Path) -> None:
    n = FLUSH_CASES + 10  # more than a batch, fewer than a commit: every one in the tail
    assert n < COMMIT_ROWS
    killed_after_window(tmp_path, 400, n)
    assert _committed(tmp_path) == 0  # the rows file alone holds them
    journal = Journal(tmp_path)
    assert journal.finished_keys(RUN) == {("s", f"c{i}", 0) for i in range(n)}
    assert [(r.status, r.done, r.errors) for r in journal.runs()] == [("interrupted", n, 0)]
    # A resume claims the run: the tail is committed, and read as every other kept case run.
    journal.claim(RUN)
    assert _committed(tmp_path) == n
    reader = journal.reader()
    assert reader.kept(RUN, ("s", "c3", 0)) == _result(3)
    reader.close()
    journal.append(RUN, "s", _result(n))
    journal.flush()
    assert journal.finished_keys(RUN) == {("s", f"c{i}", 0) for i in range(n + 1)}
    journal.close()


def test_a_torn_last_frame_is_not_finished_and_is_cut_off_by_the_claim(tmp_path: Path) -> None:
    killed_after_window(tmp_path, 400, 5)
    rows = rows_path(tmp_path, RUN)
    whole = rows.stat().st_size
    data = rows.read_bytes()
    with rows.open("ab") as f:  # a kill mid-write: the start of one more frame
        f.write(data[:len(data) // 5 - 7])
    journal = Journal(tmp_path)
    assert journal.finished_keys(RUN) == {("s", f"c{i}", 0) for i in range(5)}
    journal.claim(RUN)
    assert rows.stat().st_size == whole  # appended after this, the next frames are read back
    journal.append(RUN, "s", _result(5))
    journal.release(RUN)
    assert Journal(tmp_path).finished_keys(RUN) == {("s", f"c{i}", 0) for i in range(6)}


def test_a_tail_run_again_replaces_its_committed_case_run(tmp_path: Path) -> None:
    # A retried error whose new case run is in the tail: counted once, with its new outcome.
    from agenteval.schema import RunSpec

    journal = Journal(tmp_path)
    journal.begin(RunSpec(run_id=RUN, command="eval", started=1.0), "{}", 3)
    journal.append_all(RUN, [_result(0), _result(1, error="boom"), _result(2)])
    assert [(r.done, r.errors) for r in journal.runs()] == [(3, 1)]
    rows = rows_path(tmp_path, RUN)
    size = rows.stat().st_size
    journal.append(RUN, "s", _result(1))  # written within the flush window, not committed
    deadline = time.monotonic() + 30
    while rows.stat().st_size == size and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _committed_errors(tmp_path) == 1
    other = Journal(tmp_path)  # (as another process sees it: this one's writer not flushed)
    assert [(r.done, r.errors) for r in other.runs()] == [(3, 0)]
    assert other.finished_keys(RUN, without_errors=True) == {("s", f"c{i}", 0) for i in range(3)}
    journal.close()


def _committed_errors(root: Path) -> int:
    with sqlite3.connect(root / ".agenteval" / "journal.sqlite") as conn:
        return int(conn.execute("SELECT sum(error) FROM journal_cases").fetchone()[0])


KILLING_AGENT = '''
import os, signal, time
from pathlib import Path

HERE = Path(__file__).parent

def root_agent(text):
    # Killed a second after the case runs before it finished (the flush window has passed).
    if text == "case AT" and (HERE / "kill").exists():
        time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGKILL)
    return "answer to " + text
'''


def test_a_run_killed_with_rows_committed_and_rows_in_the_tail_resumes_to_the_same_document(
        tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    from tests.helpers import eval_set, inv

    # (A commit every COMMIT_ROWS rows and verdicts: two of them a case, and the end's.)
    cases, kill_at = COMMIT_ROWS, COMMIT_ROWS - 50
    agent = tmp_path / "tail_agent"
    agent.mkdir()
    (agent / "agent.py").write_text(KILLING_AGENT.replace("AT", str(kill_at)))
    path = agent / "tail.evalset.json"
    path.write_text(eval_set("tail", {f"c{i:04}": [inv(f"case {i}", f"answer to case {i}")]
                                      for i in range(cases)}).model_dump_json(exclude_none=True))

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "agenteval", "eval", str(agent), str(path),
                               "--parallelism", "1", *extra], capture_output=True, text=True, timeout=300)

    (agent / "kill").touch()
    assert run().returncode == -9
    (interrupted,) = Journal(agent).runs()
    assert interrupted.done == kill_at
    assert 0 < _committed(agent) < kill_at  # some case runs are in the rows file alone
    (agent / "kill").unlink()
    resumed, whole = tmp_path / "resumed.json", tmp_path / "whole.json"
    done = run("--resume", interrupted.run_id, "-o", str(resumed))
    assert done.returncode == 0, done.stderr + done.stdout
    assert run("-o", str(whole), "--no_history").returncode == 0
    from tests.cli.test_durable import _timeless

    assert _timeless(json.loads(resumed.read_text())) == _timeless(json.loads(whole.read_text()))
    assert Journal(agent).runs() == []
