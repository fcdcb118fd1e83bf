"""The console progress bar's cost a case (`cli.progress.ProgressBar`), as a sharded `score`'s
parent pays it: a `CaseStarted` and a `CaseFinished` event a case, made and told to the bar;
and the events alone. Main-thread CPU (`time.thread_time`), best of `--rounds`; the bar draws on
stderr (send it to /dev/null). Run it with PYTHONPATH set to each tree, in turn.

    python bench/bench_progress_bar.py [--cases N] [--rounds R] 2>/dev/null
"""

from __future__ import annotations

import argparse
import time

from agenteval.cli.progress import ProgressBar
from agenteval.schema import EvalStatus
from agenteval.schema.progress import CaseFinished, CaseStarted, RunStarted


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    n = args.cases
    ids = [f"c{i}" for i in range(n)]
    told, alone = [], []
    for _ in range(args.rounds):
        with ProgressBar("scoring") as bar:
            bar(RunStarted("r", n))
            t = time.thread_time()
            for eval_id in ids:
                bar(CaseStarted("s", eval_id, 0))
                bar(CaseFinished("s", eval_id, 0, EvalStatus.PASSED, 0.1, None))
            told.append((time.thread_time() - t) / n * 1e6)
            t = time.thread_time()
            for eval_id in ids:
                CaseStarted("s", eval_id, 0)
                CaseFinished("s", eval_id, 0, EvalStatus.PASSED, 0.1, None)
            alone.append((time.thread_time() - t) / n * 1e6)
    print(f"events told to the bar: {min(told):.2f} µs a case (best of {args.rounds}); "
          f"the events alone: {min(alone):.2f} µs; the bar: {min(told) - min(alone):.2f} µs")


if __name__ == "__main__":
    main()
