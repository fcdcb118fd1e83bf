"""A scored case written by pydantic (`store.placing.placed_model_json`) against orjson
(`runner.placed_json.placed_json`), in process (issue 29 item 4, session 21).

    python bench/bench_case_writer.py [--n 1000] [--rounds 8] \
        -- EXPECTED --actual ACTUAL --config_file_path CFG

Scores the first N cases of both files as `score`'s workers do (the run's setup from the
command line, `profile_score_chunk.run_setup`; cyclic GC off), checks that both writers give the
same bytes for every result and summary, then times each writer over all of them in alternating
rounds (A B, then B A, ...): CPU µs a case (result + summary), each round's ratio.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from profile_score_chunk import run_setup


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("score_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    setup = run_setup([a for a in args.score_args if a != "--"])
    from agenteval.datasets.split import item_spans
    from agenteval.datasets.stream import read_item
    from agenteval.runner import shard_worker
    from agenteval.runner.placed_json import placed_json, plain_numbers
    from agenteval.runner.recorded import paired_case
    from agenteval.runner.scoring import score_case
    from agenteval.schema import EvalCase
    from agenteval.store.placing import placed_model_json
    from agenteval.verdicts.aggregate import summarise_case

    gc.disable()
    expected = (item_spans(setup.expected_path, "eval_cases") or [])[:args.n]
    actual = (item_spans(setup.actual_path, "eval_cases") or [])[:args.n]
    wanted = shard_worker._read(setup.expected_path, expected) or []
    got = shard_worker._read(setup.actual_path, actual) or []
    models: list[Any] = []
    plain = 0
    for i, (a, b) in enumerate(zip(wanted, got, strict=True)):
        case, recorded = read_item(EvalCase, a), read_item(EvalCase, b)
        assert case is not None and recorded is not None
        run = paired_case(case, recorded, i, setup.eval_set_id, setup.actual_path)
        result = shard_worker._done(score_case(run, setup.metrics, setup.policy))
        models += [result, summarise_case(case.eval_id, [result], setup.gating, setup.policy == "ignore")]
        plain += plain_numbers(a) and plain_numbers(b)
    n = len(models) // 2
    same = all(placed_json(m) == placed_model_json(m) for m in models)
    print(f"{n} cases, {plain} with plain numbers (written by orjson in a worker); same bytes: {same}")
    writers: dict[str, Callable[[Any], bytes]] = {"pydantic": placed_model_json, "orjson": placed_json}
    times: dict[str, list[float]] = {k: [] for k in writers}
    for r in range(args.rounds):
        for name in (list(writers) if r % 2 == 0 else list(reversed(writers))):
            write = writers[name]
            started = time.process_time()
            for m in models:
                write(m)
            times[name].append((time.process_time() - started) / n * 1e6)
    for name, values in times.items():
        print(f"{name:9} median {statistics.median(values):6.1f} µs a case (best {min(values):.1f})")
    ratios = [a / b for a, b in zip(times["orjson"], times["pydantic"], strict=True)]
    print("orjson/pydantic by round: " + " ".join(f"{r:.3f}" for r in ratios)
          + f"; median {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
