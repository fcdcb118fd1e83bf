"""A `--resume`'s work in the run history, with and without the killed run's stage.

    python bench/bench_resume_history.py JOURNAL [--repeat 5]

JOURNAL is a killed run's `journal.sqlite` (e.g. `bench_journal.py`'s
`bench/out/journal/killed_A/.agenteval/journal.sqlite`: 9,900 verdicts of 10,000 trivial cases).
Each round, on a fresh history beside a copy of it, in this process (thread CPU, so a loaded
machine moves it little):

* `copy`: what a resume did before staging (`store.staging`): every kept case's rows copied
  into the history in one transaction, then committed with the run's row (`record_copied` of a
  document nothing staged);
* `staged`: the killed run's stage (every kept case's rows committed, timed apart: the killed run
  paid it as it went), then what the resume does: one stage (nothing told since) and its
  recording (`record_copied`: the stage finished, its sums read, the run's row).

Prints each part's thread CPU (best and median) and wall.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

from agenteval.schema import EvalSetResult, RunSpec
from agenteval.store.db import RunStore
from agenteval.store.staging import stage
from agenteval.store.verdict_copy import settle


def _timed(work: object) -> tuple[float, float]:
    t, w = time.thread_time(), time.perf_counter()
    work()  # type: ignore[operator]
    return time.thread_time() - t, time.perf_counter() - w


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("journal", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with closing(sqlite3.connect(f"{args.journal.resolve().as_uri()}?mode=ro", uri=True)) as conn:
        run_id, set_id, verdicts = conn.execute("SELECT run_id, eval_set_id, count(*) FROM journal_verdicts "
                                                "GROUP BY run_id, eval_set_id").fetchone()
    print(f"journal {args.journal}: run {run_id}, eval set {set_id!r}, {verdicts} verdicts", file=sys.stderr)
    shell = EvalSetResult(eval_set_result_id="doc", eval_set_id=set_id,
                          run=RunSpec(run_id=run_id, command="eval", started=1.0))
    got: dict[str, list[tuple[float, float]]] = {}
    for _ in range(args.repeat):
        for way in ("copy", "staged"):
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                (root / ".agenteval").mkdir()
                journal = root / ".agenteval" / "journal.sqlite"
                for suffix in ("", "-wal", "-shm"):  # (the journal as the killed run left it)
                    if Path(f"{args.journal}{suffix}").exists():
                        shutil.copy(f"{args.journal}{suffix}", f"{journal}{suffix}")
                store = RunStore(root)
                store.record_outcomes(EvalSetResult(eval_set_result_id="earlier", eval_set_id="x"), [],
                                      root / "e.json")  # (a history made already)
                def record(store: RunStore = store, journal: Path = journal, root: Path = root) -> None:
                    store.record_copied(shell, journal, run_id, root / "doc.json")
                    settle()  # (the recording's checkpoint beside: the command's exit waits for it)
                if way == "staged":
                    with closing(store.attached(journal)) as conn:
                        got.setdefault("killed run's stage (paid as it went)", []).append(
                            _timed(lambda conn=conn: stage(conn, "doc", run_id, set_id)))
                        got.setdefault("resume: a stage and the recording", []).append(
                            _timed(lambda conn=conn: (stage(conn, "doc", run_id, set_id), record())))
                else:
                    got.setdefault("resume: every kept case copied and recorded", []).append(_timed(record))
                with closing(sqlite3.connect(store.path)) as conn:
                    (cases,) = conn.execute("SELECT count(*) FROM cases WHERE run_id = 'doc'").fetchone()
                assert cases == verdicts, (way, cases)
    for name, runs in got.items():
        cpu = [c for c, _ in runs]
        wall = [w for _, w in runs]
        print(f"{name:48} CPU best {min(cpu):.3f} median {statistics.median(cpu):.3f} s; "
              f"wall median {statistics.median(wall):.3f} s")


if __name__ == "__main__":
    main()
