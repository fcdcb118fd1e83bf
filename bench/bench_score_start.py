"""`score`'s serial start, A/B: the CPU and the modules of the process from its launch to the
moment its worker pool is made (the workers are forked then, with every module imported so far),
for two source trees in turn (A B A B, alternating which goes first), pair by pair.

    python bench/bench_score_start.py --a /tmp/after/src --b /tmp/before/src -n 6 -- \\
        EXPECTED --actual ACTUAL --config_file_path CONFIG [--output OUT]

The arguments after `--` are `agenteval score`'s. Each run is a fresh interpreter with
PYTHONPATH set to the tree; it ends at the pool (nothing is scored). `-X importtime` does not
see modules imported through `importlib.import_module` (the packages' lazy names, the registry's
deferred criteria): their nested imports show as top-level ones, so its totals and its module
list are not compared here; `sys.modules` at the pool is.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = """
import json, os, sys, time
from agenteval.cli import main
from agenteval.runner import sharded, streamed
def made(self, *a, **k):
    told = json.dumps({"cpu": time.process_time(), "modules": sorted(sys.modules)})
    os.write(2, ("\\nSTART " + told + "\\n").encode())
    os._exit(0)
sharded._Pool.__init__ = made
# (sharded whatever the CPUs: the pool is what is timed; `sharded` holds it since session 35)
(streamed if hasattr(streamed, "worker_count") else sharded).worker_count = lambda *a: 2
main.main(sys.argv[1:])
"""


def once(tree: str, score_args: list[str]) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": tree}
    out = subprocess.run([sys.executable, "-c", CHILD, "score", *score_args], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    line = [s for s in out.stderr.splitlines() if s.startswith("START ")]
    if not line:
        raise SystemExit(f"no pool was made with {tree}:\n{out.stderr[-2000:]}")
    return dict(json.loads(line[-1][6:]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="the change's src directory")
    ap.add_argument("--b", required=True, help="the baseline's src directory")
    ap.add_argument("-n", type=int, default=6, help="pairs")
    ap.add_argument("score_args", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    score_args = [a for a in args.score_args if a != "--"]
    ratios, cpu = [], {"a": [], "b": []}
    last: dict[str, dict[str, object]] = {}
    for i in range(args.n):
        order = ("a", "b") if i % 2 == 0 else ("b", "a")
        got = {side: once(args.a if side == "a" else args.b, score_args) for side in order}
        for side in "ab":
            cpu[side].append(float(got[side]["cpu"]))  # type: ignore[arg-type]
        last = got
        ratios.append(cpu["a"][-1] / cpu["b"][-1])
        print(f"pair {i + 1} ({order[0].upper()} first): A {cpu['a'][-1]:.3f} s CPU, "
              f"B {cpu['b'][-1]:.3f} s, A/B {ratios[-1]:.3f}  (load {os.getloadavg()[0]:.1f})")
    mods = {side: set(last[side]["modules"]) for side in "ab"}  # type: ignore[call-overload]
    print(f"CPU to the pool, median: A {statistics.median(cpu['a']):.3f} s, "
          f"B {statistics.median(cpu['b']):.3f} s; "
          f"A/B median {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})")
    print(f"modules at the pool: A {len(mods['a'])}, B {len(mods['b'])}")
    print("only in B:", " ".join(sorted(mods["b"] - mods["a"])) or "-")
    print("only in A:", " ".join(sorted(mods["a"] - mods["b"])) or "-")


if __name__ == "__main__":
    main()
