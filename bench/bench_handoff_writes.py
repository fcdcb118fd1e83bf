"""The sharded `score` parent's document writes of case results from shared memory, in process
(issue 29 item 4, session 28): a forked child fills a slot with a chunk as a worker does, then
this process writes it to a new document file, the session-27 way (a `bytes` copy a case out of
the slot, `DocumentWriter.add_placed` each, joined into 1 MB blocks) or as the chunk lies
(`DocumentWriter.add_placed_block`). The two alternate, their order swapped each round; thread
CPU (user + system) of the writes only, median of R rounds and the per-round ratio.

    python bench/bench_handoff_writes.py [--cases 2000] [--rounds 16]

Result sizes are drawn between 20 and 35 KB (the bench corpus's are 27 KB on average).
"""

from __future__ import annotations

import argparse
import mmap
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from agenteval.schema import EvalSetResult
from agenteval.store.output import SEPARATOR, DocumentWriter

CHUNK = 250
SLOT = 32 << 20


def _fill(slots: mmap.mmap, slot: int, chunk: Sequence[bytes], separated: bool) -> None:
    """The chunk put in `slot` by a forked child, as a worker puts it."""
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    at = slot * SLOT
    for raw in chunk:
        if separated:
            slots[at:at + len(SEPARATOR)] = SEPARATOR
            at += len(SEPARATOR)
        slots[at:at + len(raw)] = raw
        at += len(raw)
    os._exit(0)


def _written(results: list[bytes], path: Path, slots: mmap.mmap, blocks: bool) -> float:
    """Thread CPU of writing `results` to a new document at `path`, a chunk at a time."""
    view = memoryview(slots)
    writer = DocumentWriter([path], EvalSetResult(eval_set_result_id="x", eval_set_id="x"))
    spent = 0.0
    for first in range(0, len(results), CHUNK):
        chunk, slot = results[first:first + CHUNK], (first // CHUNK) % 2
        _fill(slots, slot, chunk, blocks)
        began = time.thread_time()
        at = slot * SLOT
        if blocks:
            block = view[at:at + sum(map(len, chunk)) + len(SEPARATOR) * len(chunk)]
            writer.add_placed_block(block, len(chunk))
            block.release()
        else:
            for raw in chunk:
                writer.add_placed(bytes(view[at:at + len(raw)]))
                at += len(raw)
        spent += time.thread_time() - began
    writer.abort()
    view.release()
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=16)
    args = parser.parse_args()
    rng = random.Random(0)
    text = rng.randbytes(40_000)
    results = [text[:rng.randint(20_000, 35_000)] for _ in range(args.cases)]
    slots = mmap.mmap(-1, 2 * SLOT)
    where = Path(tempfile.mkdtemp(prefix="handoff-"))
    copied: list[float] = []
    placed: list[float] = []
    try:
        for i in range(args.rounds):
            order = (False, True) if i % 2 else (True, False)
            for blocks in order:
                spent = _written(results, where / f"{i}-{blocks}.json", slots, blocks)
                (placed if blocks else copied).append(spent)
    finally:
        shutil.rmtree(where)
        slots.close()
    ratios = [b / a for a, b in zip(copied, placed, strict=True)]
    print(f"{args.cases} results, {sum(map(len, results)) / 1e6:.0f} MB, {args.rounds} rounds: "
          f"copied a case {statistics.median(copied) * 1e3:.1f} ms, "
          f"as the chunk lies {statistics.median(placed) * 1e3:.1f} ms; ratio median "
          f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})")


if __name__ == "__main__":
    main()
