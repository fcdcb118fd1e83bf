"""`agenteval eval` with a trivial plain-callable agent: peak RSS and wall at N cases, with the
run journal and history on, and with `--no_history`.

    python bench/bench_eval_memory.py [--cases 2000 10000 50000] [--src DIR]

Each run is a fresh `python -m agenteval eval` subprocess; its peak RSS is the child's
`ru_maxrss` (getrusage), its wall the time to exit. `--src` puts another checkout's `src/`
first on PYTHONPATH (e.g. a `git worktree` of an older commit, for before/after). The eval set
(one user turn, expected answer "ok", no tool calls) and the agent are written under
bench/out/eval_memory/.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).parent / "out" / "eval_memory"


def _write(cases: int) -> Path:
    folder = OUT / f"n{cases}"
    agent = folder / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "__init__.py").write_text("def root_agent(text):\n    return 'ok'\n")
    path = folder / "set.evalset.json"
    if not path.exists():
        turn = {"user_content": {"role": "user", "parts": [{"text": "say ok"}]},
                "final_response": {"role": "model", "parts": [{"text": "ok"}]}}
        path.write_text(json.dumps({"eval_set_id": f"mem{cases}", "eval_cases": [
            {"eval_id": f"c{i}", "conversation": [dict(turn, invocation_id=f"i{i}")]}
            for i in range(cases)]}))
    return folder


def _one(folder: Path, history: bool, src: str | None) -> tuple[float, float]:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    args = [sys.executable, "-m", "agenteval", "eval", str(folder / "agent"),
            str(folder / "set.evalset.json"), "--output", str(folder / "out.json"), "--parallelism", "8"]
    if not history:
        args.append("--no_history")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(args, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"eval failed ({done.returncode}): {done.stderr[-2000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of the children is the largest child so far: each size runs in a new process
    # tree (see main), so the value is this run's.
    return wall, max(peak, before) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, nargs="+", default=[2000, 10000, 50000])
    parser.add_argument("--src", default=None)
    parser.add_argument("--child", nargs=2, metavar=("CASES", "HISTORY"), help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.child:  # one measurement in its own process, so ru_maxrss is this run's alone
        wall, rss = _one(_write(int(a.child[0])), a.child[1] == "1", a.src)
        print(json.dumps({"wall": wall, "rss_mib": rss}))
        return
    print(f"{'cases':>7} {'history':>8} {'wall s':>8} {'peak MiB':>9}")
    for cases in a.cases:
        _write(cases)
        for history in (True, False):
            cmd = [sys.executable, __file__, "--child", str(cases), "1" if history else "0"]
            if a.src:
                cmd += ["--src", a.src]
            got = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
            print(f"{cases:>7} {'on' if history else 'off':>8} {got['wall']:>8.1f} {got['rss_mib']:>9.0f}",
                  flush=True)


if __name__ == "__main__":
    main()
