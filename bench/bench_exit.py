"""How long an `eval --resume` process takes to be gone once its command is done, two trees paired.

    python bench/bench_exit.py --a SRC_A --b SRC_B [--cases 10000] [--left 0.01] [--repeat 5] [--setup]

Makes (once, or again with `--setup`) `bench_journal.py`'s killed run with tree B (`--cases`
trivial cases, SIGKILLed with `--left` of them still to run; kept under bench/out/exit/killed).
Then, `--repeat` rounds, each resuming a fresh copy of it with A and with B in turn (the first
side alternating by round), as whole processes started like the console script
(`agenteval.cli.main.main` with the command's argv). A wrapper stamps CLOCK_MONOTONIC (one clock
for every process) when the entry point reaches its end (`teardown.exit_fast`, which both trees
call once the command has returned its exit code); the parent stamps it again when `os.wait4`
returns. Printed per side: the whole process's wall and CPU (user + system, by `os.wait4`), and
"the end": from the command's return to the process reaped (the interpreter's teardown, the
atexit handlers, the kernel freeing the process); then A/B pair by pair, with the 1-minute load.
Each side's last document is left as bench/out/exit/resumed_<side>.json (to compare them).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_journal as bj

OUT = bj.BENCH_DIR / "out" / "exit"

WRAPPER = """
import os, sys, time
from agenteval.cli import teardown
from agenteval.cli.main import main

_exit_fast = teardown.exit_fast

def stamped(code):
    with open(os.environ["BENCH_EXIT_STAMP"], "w") as f:
        f.write(repr(time.monotonic()))
    _exit_fast(code)

teardown.exit_fast = stamped
sys.argv[0] = "agenteval"
sys.exit(main(sys.argv[1:]))
"""


def setup(cases: int, left: float, src: str) -> None:
    bj.OUT = OUT
    OUT.mkdir(parents=True, exist_ok=True)
    bj.write_set(OUT / "resume.evalset.json", range(cases))
    agent = bj.fresh_agent("killed")
    env = {**os.environ, "BENCH_KILL_AT": str(int(cases * (1 - left)))}
    r = bj.timed([bj.script(), "eval", str(agent), str(OUT / "resume.evalset.json"), "--parallelism", "1",
                  "--output", str(OUT / "never.json")], env, src=src)
    assert r["exit"] == -9, r
    bj.drop_killed_document()


def resume(src: str, side: str) -> dict[str, Any]:
    copy = OUT / side / "resumed"  # (one name for both: it is the document's app_name)
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(OUT / "killed", copy)
    out = OUT / f"resumed_{side}.json"
    out.unlink(missing_ok=True)
    stamp = OUT / f"stamp_{side}"
    stamp.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": src, "BENCH_EXIT_STAMP": str(stamp)}
    cmd = [sys.executable, "-c", WRAPPER, "eval", str(copy), str(OUT / "resume.evalset.json"),
           "--resume", "latest", "--output", str(out)]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    gone = time.monotonic()
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, 1), err[-2000:]
    assert bj.count_results(out) > 0
    return {"wall": gone - t0, "cpu": usage.ru_utime + usage.ru_stime,
            "end": gone - float(stamp.read_text()), "rss_mib": usage.ru_maxrss / 1024,
            "load": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="tree A's src/")
    ap.add_argument("--b", required=True, help="tree B's src/ (also makes the killed run)")
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--left", type=float, default=0.01)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--setup", action="store_true", help="make the killed run again")
    args = ap.parse_args()
    bj.compiled(args.a, args.b)
    if args.setup or not (OUT / "killed").is_dir():
        setup(args.cases, args.left, args.b)
    sides = {"A": args.a, "B": args.b}
    rounds: dict[str, list[dict[str, Any]]] = {"A": [], "B": []}
    for i in range(args.repeat):
        for side in ("A", "B") if i % 2 == 0 else ("B", "A"):
            r = resume(sides[side], side)
            rounds[side].append(r)
            print(f"round {i} {side}: wall {r['wall']:.3f} s, CPU {r['cpu']:.3f} s, end {r['end']:.3f} s, "
                  f"{r['rss_mib']:.0f} MiB, load {r['load']:.1f}", flush=True)
    for of in ("wall", "cpu", "end"):
        a, b = rounds["A"], rounds["B"]
        ratios = [x[of] / y[of] for x, y in zip(a, b, strict=True)]
        print(f"{of}: A median {statistics.median(x[of] for x in a):.3f} s, B median "
              f"{statistics.median(y[of] for y in b):.3f} s; A/B pair by pair median "
              f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})")
    (OUT / "summary.json").write_text(json.dumps({"A": args.a, "B": args.b, "rounds": rounds}, indent=2))


if __name__ == "__main__":
    main()
