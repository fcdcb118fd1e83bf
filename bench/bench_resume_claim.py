"""A `--resume`'s claim of its run, step by step, in wall and in the main thread's scheduler time.

    PYTHONPATH=<a tree's src> python bench/bench_resume_claim.py [--repeat 4]

Copies `bench_resume_budget.py`'s killed run (make it first: `bench_resume_budget.py --setup`)
and runs `claim_resume`'s steps on the copy, then a whole `claim_resume` on a second copy,
printing for each its wall, its CPU on a core, its wait for a core and the rest of its wall
(blocked: reads, fsyncs), from `/proc/self/task/<tid>/schedstat`. The first connection to a
killed run's journal recovers its write-ahead log and, when it closes, checkpoints it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agenteval.runner import durable
from agenteval.store.journal import Journal

KILLED = Path(__file__).resolve().parent / "out" / "resume_budget" / "killed"


def _sched() -> tuple[float, float]:
    with open(f"/proc/self/task/{threading.get_native_id()}/schedstat") as f:
        on, wait, _ = f.read().split()
    return int(on) / 1e9, int(wait) / 1e9


def _timed(name: str, fn: Callable[..., Any], *args: Any) -> Any:
    w0, (c0, q0) = time.perf_counter(), _sched()
    out = fn(*args)
    w1, (c1, q1) = time.perf_counter(), _sched()
    wall, cpu, wait = w1 - w0, c1 - c0, q1 - q0
    print(f"  {name:<28} wall {wall:.3f}  on a core {cpu:.3f}  waiting {wait:.3f}  "
          f"blocked {wall - cpu - wait:.3f}")
    return out


def _copy(name: str) -> Path:
    dst = KILLED.parent / name
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(KILLED, dst)
    return dst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=4)
    args = ap.parse_args()
    for rep in range(args.repeat):
        print(f"round {rep}, 1-minute load {os.getloadavg()[0]:.1f}")
        steps = _copy("claim_steps")
        journal = Journal(steps)
        history = _timed("RunStore()", durable.RunStore, journal.root)
        runs = _timed("journal.runs", journal.runs)
        run_id = max(r.run_id for r in runs)
        _timed("history.run_group", history.run_group, "latest")
        _timed("journal.get", journal.get, run_id)
        _timed("journal.claim", journal.claim, run_id)
        _timed("journal.fingerprint", journal.fingerprint, run_id)
        _timed("recorded", durable.recorded, history, journal, run_id)
        journal.release(run_id)
        whole = _copy("claim_whole")
        _timed("claim_resume (whole)", durable.claim_resume, Journal(whole), "latest")
        shutil.rmtree(steps)
        shutil.rmtree(whole)


if __name__ == "__main__":
    main()
