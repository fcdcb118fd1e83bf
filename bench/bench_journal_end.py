"""The end of a journaled run, in process, on a captured 5,000-case journal: its sums and its forgetting.

    python bench/bench_journal_end.py [--src A --ab B] [--repeat 5] [--rest 100]

Reads the store root `bench_journal_parts.py capture` saved just before a run was recorded
(bench/out/journal_parts/snapshot), and for each tree in turn (A, B, A, B, ... each round in a
fresh child process with that tree first on PYTHONPATH), on a fresh copy of its journal:
- `totals`: the recording's end's sums through a journal schema attached and read for the first
  time (a cold snapshot, as at the end): `verdict_copy.case_totals` over every verdict, and, when
  the tree has it, `copied_totals` after `sum_told` summed all but the last `--rest` verdicts
  through another schema (what a held recording's copies did before the end);
- `forget`: `Journal.forget` of the run (main thread's wall and CPU), then `settle` (what is
  made beside, waited for), with the journal's size after.
Prints each round's JSON and the medians by tree, with the 1-minute load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
SNAP = BENCH_DIR / "out" / "journal_parts" / "snapshot" / ".agenteval"

CHILD = r'''
import json, os, shutil, sqlite3, sys, time
from pathlib import Path
snap, rest = Path(sys.argv[1]), int(sys.argv[2])
root = Path(f"/tmp/bench_journal_end_{os.getpid()}")
shutil.rmtree(root, ignore_errors=True)
(root / ".agenteval").mkdir(parents=True)
for name in ("journal.sqlite", "journal.sqlite-wal", "journal.sqlite-shm"):
    shutil.copy(snap / name, root / ".agenteval" / name)
shutil.copytree(snap / "journal.rows", root / ".agenteval" / "journal.rows")
run_id = next((snap / "journal.rows").glob("*.rows")).stem
path = root / ".agenteval" / "journal.sqlite"
from agenteval.store import verdict_copy as vc
out = {}
conn = sqlite3.connect(":memory:", isolation_level=None)
for schema in ("a", "b", "c"):
    conn.execute(f"ATTACH DATABASE ? AS {schema}", (str(path),))
conn.execute("BEGIN")
(sets,) = conn.execute("SELECT eval_set_id FROM a.journal_verdicts LIMIT 1").fetchone()
w, c = time.perf_counter(), time.thread_time()
whole = vc.case_totals(conn, "b", run_id, sets)
out["case_totals"] = (time.perf_counter() - w, time.thread_time() - c)
if hasattr(vc, "sum_told"):
    (last,) = conn.execute("SELECT max(told) FROM a.journal_verdicts").fetchone()
    summed = vc.sum_told(conn, "a", run_id, sets, (0, last - rest), vc.Summed())
    w, c = time.perf_counter(), time.thread_time()
    summed = vc.sum_told(conn, "c", run_id, sets, (last - rest, last), summed)
    end = vc.copied_totals(conn, "c", run_id, sets, summed)
    out["end_totals"] = (time.perf_counter() - w, time.thread_time() - c)
    assert summed is not None and end == whole, (end, whole)
conn.execute("ROLLBACK")
conn.close()
from agenteval.store.journal import Journal
journal = Journal(root)
w, c = time.perf_counter(), time.thread_time()
journal.forget(run_id)
out["forget"] = (time.perf_counter() - w, time.thread_time() - c)
settle = getattr(vc, "settle", lambda: None)
settle()
out["forget_settled"] = (time.perf_counter() - w, time.thread_time() - c)
out["journal_bytes"] = path.stat().st_size
shutil.rmtree(root, ignore_errors=True)
print(json.dumps(out))
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default=str(BENCH_DIR.parent / "src"))
    ap.add_argument("--ab", default=None, help="a second tree's src/, run alternately")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rest", type=int, default=100, help="verdicts left for the end's sums")
    args = ap.parse_args()
    if not SNAP.is_dir():
        raise SystemExit(f"no {SNAP}: run bench_journal_parts.py capture --cases 5000 first")
    trees = [args.src] + ([args.ab] if args.ab else [])
    found: dict[str, list[dict[str, float]]] = {t: [] for t in trees}
    for k in range(args.repeat):
        for tree in trees if k % 2 == 0 else trees[::-1]:
            env = {**os.environ, "PYTHONPATH": tree}
            done = subprocess.run([sys.executable, "-c", CHILD, str(SNAP), str(args.rest)], env=env,
                                  capture_output=True, text=True, check=True)
            row = json.loads(done.stdout) | {"load": os.getloadavg()[0]}
            found[tree].append(row)
            print(tree, json.dumps(row), flush=True)
    for tree, rows in found.items():
        print(f"{tree}: medians over {len(rows)} rounds (wall / main thread CPU, ms), load "
              f"{min(r['load'] for r in rows):.1f}-{max(r['load'] for r in rows):.1f}")
        for key in ("case_totals", "end_totals", "forget", "forget_settled"):
            if key in rows[0]:
                wall = statistics.median(r[key][0] for r in rows) * 1e3
                cpu = statistics.median(r[key][1] for r in rows) * 1e3
                print(f"  {key:15s} {wall:7.1f} / {cpu:6.1f}")


if __name__ == "__main__":
    main()
