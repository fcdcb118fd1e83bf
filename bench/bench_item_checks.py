"""The byte checks a `score` worker makes of an item before it validates it, in process (issue 29
item 4, session 27).

    PYTHONPATH=TREE/src python bench/bench_item_checks.py [--n 4000] [--rounds 9] [--answers OUT] FILE...

The first N items of each indented eval set FILE (found by `split.item_spans`) go through what
`shard_worker.score_chunk` checks of an item's bytes: its shape (`BYTE_SHAPES`), whether it may
hold a number written with an exponent (`has_exponents`), `read_item`'s check for what ijson
reads otherwise than pydantic (`_unusual`) and `plain_numbers`; each piece, and the sequence
as the worker calls it, timed over all items with `time.process_time`, GC off. Best of R rounds,
CPU µs an item. `--answers OUT` writes every item's three answers as JSON, to compare trees.
With PYTHONPATH set to a tree, that tree's functions (the shape handed to `has_exponents` where
it takes one).
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import time
from collections.abc import Callable
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--answers")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    from agenteval.datasets import stream
    from agenteval.datasets.split import item_spans
    from agenteval.runner.placed_json import plain_numbers

    shapes, has_exponents, unusual = stream.BYTE_SHAPES, stream.has_exponents, stream._unusual
    takes_shape = "shape" in inspect.signature(has_exponents).parameters
    items: list[bytes] = []
    for name in args.files:
        data = Path(name).read_bytes()
        items += [data[a:b] for a, b in (item_spans(name, "eval_cases") or [])[:args.n]]
    made = [(raw, raw.translate(shapes)) for raw in items]
    exps = [has_exponents(raw, shape) if takes_shape else has_exponents(raw) for raw, shape in made]

    def translate() -> None:
        for raw in items:
            raw.translate(shapes)

    def exponents() -> None:
        if takes_shape:
            for raw, shape in made:
                has_exponents(raw, shape)
        else:
            for raw, _ in made:
                has_exponents(raw)

    def unusual_() -> None:
        for (raw, shape), e in zip(made, exps, strict=True):
            unusual(raw, shape, e)

    def plain() -> None:
        for (raw, shape), e in zip(made, exps, strict=True):
            plain_numbers(raw, shape, e)

    def worker() -> None:  # as `score_chunk` calls them
        for raw in items:
            shape = raw.translate(shapes)
            e = has_exponents(raw, shape) if takes_shape else has_exponents(raw)
            unusual(raw, shape, e)
            plain_numbers(raw, shape, e)

    pieces: dict[str, Callable[[], None]] = {"translate": translate, "has_exponents": exponents,
                                             "_unusual": unusual_, "plain_numbers": plain,
                                             "worker": worker}
    best = dict.fromkeys(pieces, float("inf"))
    gc.disable()
    for _ in range(args.rounds):
        for name, run in pieces.items():
            t = time.process_time()
            run()
            best[name] = min(best[name], (time.process_time() - t) / len(items) * 1e6)
    print(f"{len(items)} items, {sum(map(len, items)) / len(items):.0f} bytes each, "
          f"best of {args.rounds} rounds, CPU µs an item")
    for name, us in best.items():
        print(f"  {name:14} {us:7.2f}")
    print(f"  exponents True: {sum(exps)}")
    if args.answers:
        answers = [[e, unusual(raw, shape, e), plain_numbers(raw, shape, e)]
                   for (raw, shape), e in zip(made, exps, strict=True)]
        with open(args.answers, "w") as f:
            json.dump(answers, f)


if __name__ == "__main__":
    main()
