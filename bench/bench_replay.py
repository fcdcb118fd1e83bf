"""Live vs replayed: the LLM-bound stub run (100 cases x 3 turns) run live, then replayed from its
own recording (`agenteval eval ... --replay RECORDED`), wall and CPU time, stub requests.

    python bench/bench_replay.py [--cases 100] [--turns 3] [--latency 0.2] [--parallelism 32] [--repeat 3]
    python bench/bench_replay.py --serve     # set up, record, then keep the stub up and print both
                                             # commands, for timing them with another tool

The fixtures are `bench_scaling.py`'s (agenteval `Agent` with one tool on the stub model; every
turn costs 2 model calls), written under bench/out/replay/. One live run is recorded first
(`--output recorded.json`); then live and replayed runs alternate, `--repeat` rounds, each a
fresh `agenteval eval` process (`--no_history`), timed from outside (wall clock, and the
child's user + system CPU from `wait4`). The stub's request count is read after each run: a
replay must make none. Summary: bench/out/replay/summary.json.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import bench_scaling  # noqa: E402  (the fixtures and the stub process)

OUT = BENCH_DIR / "out" / "replay"


def run(cmd: list[str]) -> tuple[float, float, int]:
    """(wall s, CPU s of the child, exit code) of one process."""
    started = time.perf_counter()
    with open(os.devnull, "wb") as null:  # the report is not timed on a terminal
        proc = subprocess.Popen(cmd, stdout=null, stderr=null)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def passed(path: Path) -> int:
    doc = json.loads(path.read_text())
    return sum(r["final_eval_status"] == 1 for r in doc["eval_case_results"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--parallelism", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--serve", action="store_true")
    args = parser.parse_args()

    bench_scaling.OUT = OUT  # the fixtures go here, not over bench_scaling's own
    stub = bench_scaling.Stub(args.latency, timeout=3600)
    try:
        evalset = bench_scaling.write_fixtures(stub.base_url, args.cases, args.turns)
        agenteval = bench_scaling.agenteval_script()
        recorded = OUT / "recorded.json"
        base = [agenteval, "eval", str(OUT / "bench_agent"), str(evalset), "--parallelism",
                str(args.parallelism), "--no_history"]
        wall, cpu, code = run([*base, "--output", str(recorded)])
        recorded_calls = stub.stats()["requests"]
        print(f"recorded: {wall:.2f} s wall, {cpu:.2f} s CPU, exit {code}, {recorded_calls} model calls, "
              f"{passed(recorded)}/{args.cases} passed", flush=True)
        live = [*base, "--output", str(OUT / "live.json")]
        replay = [*base, "--output", str(OUT / "replayed.json"), "--replay", str(recorded)]
        if args.serve:
            print("live:   " + " ".join(live))
            print("replay: " + " ".join(replay))
            print("stub up; Ctrl-C (or SIGTERM) to stop", flush=True)
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # so that `finally` stops the stub
            while True:
                time.sleep(3600)
        rows: dict[str, list[dict[str, Any]]] = {"live": [], "replay": []}
        for _ in range(args.repeat):
            for name, cmd, out in (("live", live, "live.json"), ("replay", replay, "replayed.json")):
                stub.reset()
                wall, cpu, code = run(cmd)
                rows[name].append({"wall_s": wall, "cpu_s": cpu, "exit": code,
                                   "model_calls": stub.stats()["requests"], "passed": passed(OUT / out)})
        summary: dict[str, Any] = {"cases": args.cases, "turns": args.turns, "latency": args.latency,
                                   "parallelism": args.parallelism, "head": bench_scaling.git_head(),
                                   "load": os.getloadavg(), "runs": rows}
        for name, runs in rows.items():
            med = {k: statistics.median(r[k] for r in runs) for k in ("wall_s", "cpu_s")}
            summary[name] = med
            print(f"{name:7s} wall {med['wall_s']:.2f} s  CPU {med['cpu_s']:.2f} s  model calls "
                  f"{[r['model_calls'] for r in runs]}  passed {[r['passed'] for r in runs]}")
        (OUT / "summary.json").write_text(json.dumps(summary, indent=2))
    finally:
        stub.stop()


if __name__ == "__main__":
    main()
