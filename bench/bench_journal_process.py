"""The journal's writer in a child process (session 17): `eval` of N trivial cases, journal on
and `--no_history`, this checkout (A) against another tree (B, `--ab SRC`), rounds alternating
which side goes first. Per run: wall, the agenteval process's own CPU (RUSAGE_SELF) and its
children's (RUSAGE_CHILDREN: the journal's writer process, when there is one), taken by a
wrapper that runs the CLI in-process and records both at exit. Prints the pair-by-pair ratios
A/B (journal on) and on/off per side, wall and CPU, with the 1-minute load beside each round.

    python bench/bench_journal_process.py --ab /tmp/s17a/src --cases 5000 --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_journal import OUT, compiled, fresh_agent, write_set

WRAPPER = """
import atexit, json, resource, sys
out = sys.argv.pop(1)
def _usage():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as f:
        json.dump({"self": s.ru_utime + s.ru_stime, "children": c.ru_utime + c.ru_stime}, f)
atexit.register(_usage)  # (registered first: runs after the journal's own exit handlers)
sys.argv[0] = "agenteval"
from agenteval.cli.main import main
main()
"""


def timed(args: list[str], src: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": src}
    usage = OUT / "usage.json"
    usage.unlink(missing_ok=True)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", WRAPPER, str(usage), *args], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - t0
    assert proc.returncode in (0, 1), proc.stderr.decode()[-800:]
    return {"wall": wall, **json.loads(usage.read_text()), "load": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--ab", required=True, metavar="SRC", help="the other tree's src/ (B)")
    args = ap.parse_args()
    src = {"A": str(Path(__file__).resolve().parent.parent / "src"), "B": args.ab}
    compiled(*src.values())
    OUT.mkdir(parents=True, exist_ok=True)
    evalset = OUT / "overhead.evalset.json"
    write_set(evalset, range(args.cases))
    rounds: dict[str, list[dict[str, Any]]] = {"A on": [], "B on": [], "A off": [], "B off": []}
    for i in range(args.repeat):
        order = ("A on", "B on", "A off", "B off") if i % 2 == 0 else ("B on", "A on", "B off", "A off")
        for kind in order:
            side, mode = kind.split()
            agent = fresh_agent(f"agent_{side}_{mode}")
            extra = ["--no_history"] if mode == "off" else []
            r = timed(["eval", str(agent), str(evalset), "--parallelism", "8",
                       "--output", str(OUT / f"{side}_{mode}.json"), *extra], src[side])
            rounds[kind].append(r)
            print(f"round {i} {kind}: wall {r['wall']:.2f} s, self CPU {r['self']:.2f} s, children "
                  f"{r['children']:.2f} s, load {r['load']:.1f}", flush=True)
    for name, x, y in (("A/B on", "A on", "B on"), ("A on/off", "A on", "A off"),
                       ("B on/off", "B on", "B off")):
        for of in ("wall", "self", "total"):
            ratios = [(a["self"] + a["children"]) / (b["self"] + b["children"]) if of == "total"
                      else a[of] / b[of] for a, b in zip(rounds[x], rounds[y], strict=True)]
            print(f"{name} {of}: median {statistics.median(ratios):.3f} "
                  f"({min(ratios):.3f}-{max(ratios):.3f})")
    (OUT / "summary_process.json").write_text(json.dumps(rounds, indent=2))


if __name__ == "__main__":
    main()
