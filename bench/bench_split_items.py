"""The parent's split of an indented eval set into its items, in process (issue 29 item 4,
session 27).

    PYTHONPATH=TREE/src python bench/bench_split_items.py [--rounds 9] [--spans OUT] FILE...

`split.ItemWalk` over each FILE as `sharded.paired_spans` walks it (a block at a time, the
spans taken as they are found), timed with `time.process_time`, GC off; best of R rounds, CPU
seconds a file and µs an item. `--spans OUT` writes the spans found, to compare trees.
"""

from __future__ import annotations

import argparse
import gc
import json
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--spans")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    from agenteval.datasets.split import ItemWalk

    found: dict[str, list[tuple[int, int]]] = {}
    best = dict.fromkeys(args.files, float("inf"))
    gc.disable()
    for _ in range(args.rounds):
        for name in args.files:
            t = time.process_time()
            with open(name, "rb") as f:
                walk = ItemWalk(f, "eval_cases")
                spans = list(walk)
            best[name] = min(best[name], time.process_time() - t)
            assert walk.closed_at is not None
            found[name] = spans
    for name, s in best.items():
        print(f"{name}: {len(found[name])} items, best of {args.rounds}: {s:.4f} s, "
              f"{s / len(found[name]) * 1e6:.2f} µs an item")
    if args.spans:
        with open(args.spans, "w") as f:
            json.dump(found, f)


if __name__ == "__main__":
    main()
