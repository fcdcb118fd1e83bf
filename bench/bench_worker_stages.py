"""The CPU of a `score` worker's loop stage by stage, in process (issue 29 item 4, session 22).

    python bench/bench_worker_stages.py [--n 2000] [--rounds 5] -- \
        EXPECTED --actual ACTUAL --config_file_path CFG

The run's setup is taken from the command line as `profile_score_chunk.py` takes it; then, with
the cyclic GC off as in the workers, the first N cases go through `shard_worker.score_chunk`'s
steps, each timed with `time.process_time` around it (a few µs of timer calls a case): reading
both items (`read_item`), pairing, scoring, the summary and outcome, the items' number check,
writing the result and summary, the `Scored` record, and freeing the case's objects. Best of R
rounds per stage, CPU µs a case; with PYTHONPATH set to a tree, that tree's functions.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from profile_score_chunk import run_setup

STAGES = ("read", "pair", "score", "summary", "numbers", "write", "record", "free")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("score_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    setup = run_setup([a for a in args.score_args if a != "--"])
    from agenteval.datasets.split import item_spans
    from agenteval.datasets.stream import BYTE_SHAPES, read_item
    from agenteval.runner import shard_worker
    from agenteval.runner.placed_json import plain_numbers
    from agenteval.runner.recorded import paired_case
    from agenteval.runner.scoring import score_case
    from agenteval.schema import EvalCase
    from agenteval.verdicts.aggregate import summarise_case
    from agenteval.verdicts.outcome import CaseOutcome

    expected = (item_spans(setup.expected_path, "eval_cases") or [])[:args.n]
    actual = (item_spans(setup.actual_path, "eval_cases") or [])[:args.n]
    shard_worker.start(setup)
    write = shard_worker._write
    # Trees before session 22 take no shape (their `read_item` makes its own); before session
    # 23, no `exponents` (`has_exponents`).
    params = inspect.signature(read_item).parameters
    shared, marked = "shape" in params, "exponents" in params
    if marked:
        from agenteval.datasets.stream import has_exponents
    gc.disable()
    wanted = shard_worker._read(setup.expected_path, expected) or []
    got = shard_worker._read(setup.actual_path, actual) or []
    n = len(wanted)
    clock = time.process_time
    best = dict.fromkeys(STAGES, float("inf"))
    for _ in range(args.rounds):
        spent = dict.fromkeys(STAGES, 0.0)
        for i, (a, b) in enumerate(zip(wanted, got, strict=True)):
            t0 = clock()
            # (as the worker reads them: each item's shape made once for both byte checks,
            # where its `read_item` and `plain_numbers` take one)
            sa, sb = ((a.translate(BYTE_SHAPES),), (b.translate(BYTE_SHAPES),)) if shared else ((), ())
            if marked:
                sa, sb = (*sa, has_exponents(a)), (*sb, has_exponents(b))
            case, recorded = read_item(EvalCase, a, *sa), read_item(EvalCase, b, *sb)
            assert case is not None and recorded is not None
            t1 = clock()
            run = paired_case(case, recorded, i, setup.eval_set_id, setup.actual_path)
            t2 = clock()
            result = shard_worker._done(score_case(run, setup.metrics, setup.policy))
            t3 = clock()
            summary = summarise_case(case.eval_id, [result], setup.gating, setup.policy == "ignore")
            outcome = CaseOutcome(result.eval_set_id, setup.gating, summary, [result])
            seconds, tokens = outcome.duration(), outcome.tokens()
            t4 = clock()
            ok = plain_numbers(a, *sa) and plain_numbers(b, *sb)
            t5 = clock()
            assert ok
            written = (write(result), write(summary))
            t6 = clock()
            record = shard_worker.Scored(case.eval_id, *written, summary.final_eval_status,
                                         result.error_message, len(result.metric_errors), seconds,
                                         tokens, 0.0)
            t7 = clock()
            del case, recorded, run, result, summary, outcome, written, record
            t8 = clock()
            for stage, a_, b_ in zip(STAGES, (t0, t1, t2, t3, t4, t5, t6, t7),
                                     (t1, t2, t3, t4, t5, t6, t7, t8), strict=True):
                spent[stage] += b_ - a_
        for stage in STAGES:
            best[stage] = min(best[stage], spent[stage])
    total = 0.0
    for stage in STAGES:
        us = best[stage] / n * 1e6
        total += us
        print(f"{stage:8} {us:7.1f} µs a case")
    print(f"{'sum':8} {total:7.1f} µs a case ({n} cases, best of {args.rounds} per stage)")


if __name__ == "__main__":
    main()
