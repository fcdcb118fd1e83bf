"""A case that holds the GIL for ~20 s under `--case_timeout 2`: wall time of the whole run, in
this process (default) against `--isolation process` (issue 21, item 4).

    python bench/bench_isolation.py [--seconds 20] [--timeout 2] [--repeat 1]

The agent (a plain callable in `bench/out/isolation/agent.py`) answers "regex" with one C call
that never releases the GIL: `re.match(r"(a+)+$", "a" * N + "b")`, catastrophic backtracking,
N chosen so that the call takes at least `--seconds` here (timed at smaller N in a child
process, doubling per character; the call itself is timed once and reported). Eval sets:

- `stuck`: the issue's measure, one case that makes that call;
- `quick`: one case answered at once (what isolation costs when nothing goes wrong: starting
  the worker process that loads the agent).

Each is run with `agenteval eval agent.py SET --case_timeout T --no_history -o out.json`,
without and with `--isolation process`, interleaved (A/B per round), timing the process from
start to exit; the case's status and error message are read from the result document. A summary
goes to `bench/out/bench_isolation.json` with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scaling import agenteval_script, child_env

OUT = Path(__file__).resolve().parent / "out" / "isolation"

AGENT = '''
import re

N = {n}

def root_agent(text):
    if text == "regex":
        re.match(r"(a+)+$", "a" * N + "b")  # one C call holding the GIL
    return "answer to " + text
'''

REGEX = 'import re, sys, time; t = time.perf_counter(); re.match(r"(a+)+$", "a" * int(sys.argv[1]) + "b"); ' \
        'print(time.perf_counter() - t)'


def regex_seconds(n: int) -> float:
    out = subprocess.run([sys.executable, "-c", REGEX, str(n)], capture_output=True, text=True, check=True)
    return float(out.stdout)


def calibrate(seconds: float) -> int:
    """The smallest N whose call is predicted to take `seconds` (each extra character doubles it)."""
    n = 20
    while (took := regex_seconds(n)) < 0.5:
        n += 1
    while took < seconds:
        n, took = n + 1, took * 2
    return n


def write_fixtures(n: int) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "agent.py").write_text(AGENT.format(n=n))
    for set_id, text in (("stuck", "regex"), ("quick", "hello")):
        case = {"eval_id": set_id, "conversation": [{
            "user_content": {"role": "user", "parts": [{"text": text}]},
            "final_response": {"role": "model", "parts": [{"text": f"answer to {text}"}]}}]}
        (OUT / f"{set_id}.evalset.json").write_text(json.dumps({"eval_set_id": set_id, "eval_cases": [case]}))


def run(set_id: str, isolation: str, timeout: float) -> dict[str, Any]:
    out = OUT / f"{set_id}_{isolation}.json"
    out.unlink(missing_ok=True)
    cmd = [agenteval_script(), "eval", str(OUT / "agent.py"), str(OUT / f"{set_id}.evalset.json"),
           "--case_timeout", f"{timeout:g}", "--no_history", "-o", str(out)]
    if isolation != "none":
        cmd += ["--isolation", isolation]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=child_env(), timeout=600)
    wall = time.monotonic() - started
    (case,) = json.loads(out.read_text())["eval_case_results"]
    status = {1: "PASSED", 2: "FAILED", 3: "NOT_EVALUATED"}[case["final_eval_status"]]
    return {"set": set_id, "isolation": isolation, "wall": round(wall, 2), "exit": proc.returncode,
            "status": status, "error": case.get("error_message")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0, help="how long the stuck call takes at least")
    parser.add_argument("--timeout", type=float, default=2.0, help="--case_timeout")
    parser.add_argument("--repeat", type=int, default=1, help="rounds (each runs all four)")
    args = parser.parse_args()
    n = calibrate(args.seconds)
    write_fixtures(n)
    alone = regex_seconds(n)
    print(f"N = {n}: the call alone takes {alone:.1f} s; load(1m) {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    for r in range(args.repeat):
        for set_id in ("stuck", "quick"):
            for isolation in (("none", "process") if r % 2 == 0 else ("process", "none")):
                row = run(set_id, isolation, args.timeout)
                rows.append(row)
                print(f"{row['set']:6} isolation={row['isolation']:8} wall {row['wall']:6.2f} s  exit "
                      f"{row['exit']}  {row['status']}  {row['error']}", flush=True)
    summary = {"n": n, "regex_seconds": round(alone, 2), "timeout": args.timeout, "rows": rows,
               "load_1m": os.getloadavg()[0]}
    (OUT.parent / "bench_isolation.json").write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
