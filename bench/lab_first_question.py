"""What a process that asks a criterion one question pays for it, the first time and the next.

A run that asks a criterion once (one case with one invocation, or one judged sentence) makes
one call behind the criterion's fixed prefix (system prompt and solved examples, ~2,500 tokens).
The engine saves a prefix's evaluated state to disk so that a later process restores it
(`models.local_slots`); this lab runs one labelled case in a fresh process `--runs` times and
prints, per process, the case's wall and CPU seconds and the prompt-state files it saved.

    python bench/lab_first_question.py --criterion safety --runs 2 --fresh \
        --states ~/.cache/agenteval/models/prompt-states

Run it against a source tree on PYTHONPATH to compare. `--fresh` moves the prompt-state
directory aside first (a fresh machine) and puts it back afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

CHILD = r"""
import asyncio, json, sys, time
sys.path.insert(0, sys.argv[3])
from bench_judge import build, load_cases
from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.models import LocalModel
from agenteval.runner import score_case

async def main():
    kind, case_id = sys.argv[1], sys.argv[2]
    case = next(c for k, _, c in load_cases(kind) if c["id"] == case_id)
    run, metric, options = build(kind, case, 5)
    llm = LocalModel()
    judge = JudgeService(lambda name: llm, None)
    t0, c0 = time.monotonic(), time.process_time()
    await score_case(run, [default_registry().configure(metric, options)], judge=judge)
    print(json.dumps({"wall": time.monotonic() - t0, "cpu": time.process_time() - c0}))

asyncio.run(main())
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--criterion", default="safety")
    p.add_argument("--case", default=None, help="a case id (default: the criterion's first)")
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--states", required=True, help="the prompt-state directory")
    p.add_argument("--fresh", action="store_true", help="start with that directory empty")
    args = p.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_judge import load_cases
    case_id = args.case or load_cases(args.criterion)[0][2]["id"]
    states = Path(args.states)
    aside = states.with_name(states.name + ".aside")
    if args.fresh and states.is_dir():
        states.rename(aside)
        states.mkdir()
    try:
        for i in range(args.runs):
            before = {f.name for f in states.glob("*.bin")} if states.is_dir() else set()
            t0 = time.monotonic()
            out = subprocess.run([sys.executable, "-c", CHILD, args.criterion, case_id,
                                  str(Path(__file__).resolve().parent)],
                                 capture_output=True, text=True, env=os.environ.copy())
            if out.returncode:
                sys.exit(out.stderr[-2000:])
            row = json.loads(out.stdout.strip().splitlines()[-1])
            after = {f.name for f in states.glob("*.bin")} if states.is_dir() else set()
            print(f"process {i + 1}: {args.criterion} {case_id}: case {row['wall']:.1f} s wall / "
                  f"{row['cpu']:.1f} s CPU; process {time.monotonic() - t0:.1f} s; "
                  f"files saved {len(after - before)}; load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        if args.fresh and aside.is_dir():
            shutil.rmtree(states)
            aside.rename(states)


if __name__ == "__main__":
    main()
