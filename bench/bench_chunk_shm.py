"""A sharded `score`'s hand-off through shared memory instead of the pool's pipe (issue 29 item 4;
measured, not in `runner.sharded`): 40 chunks of 250 case results of 27 KB (the 10,000-case
corpus's 270 MB) made by 2 forked pool workers, at most 5 chunks in flight (as `rescore_sharded`),
and written in order to a file by this process.

    python bench/bench_chunk_shm.py pipe|shm|shm-copy

`pipe`: each chunk's results go back pickled in `Scored` (the worker pickles them, the pool's
pipe carries them in 64 KB reads, this process unpickles and writes them), as today. `shm`: this
process maps anonymous shared memory before the pool forks, one slot per chunk in flight; a
worker copies its results into its chunk's slot and sends only their lengths; this process
writes them from the slot (no pickled copy, no pipe). A slot is reused only after its chunk was
written (the next chunk is sent after a chunk is written). `shm-copy`: the same, each result
copied out of the slot into its own bytes before it is written. Prints this process's CPU and its
workers' (`os.times`), and the wall; time the whole with `bench/paired.py` for pairs.
"""

from __future__ import annotations

import mmap
import multiprocessing as mp
import os
import sys
import tempfile
import time
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor

from agenteval.runner.shard_worker import Scored
from agenteval.schema import EvalStatus

N, SIZE, CHUNKS, IN_FLIGHT = 250, 27_000, 40, 5
SLOT = 16 << 20  # a chunk's results at most (6.8 MB here)
SEP = b",\n    "
_shared: mmap.mmap | None = None


def results(i: int) -> list[bytes]:
    """A chunk's results, made anew in the worker (as orjson makes them: one bytes object each)."""
    blob = b"x" * SIZE
    return [blob + bytes([i % 256, k % 256]) for k in range(N)]


def scored(i: int, k: int, result: bytes) -> Scored:
    return Scored(f"id{i}-{k}", result, b"s" * 700, EvalStatus.PASSED, None, 0, 1.0, 2.0, 0.01)


def by_pipe(i: int) -> list[Scored]:
    return [scored(i, k, r) for k, r in enumerate(results(i))]


def by_shm(i: int, slot: int) -> tuple[list[Scored], list[int]]:
    assert _shared is not None
    at, lengths = slot * SLOT, []
    for r in results(i):
        _shared[at:at + len(r)] = r
        at += len(r)
        lengths.append(len(r))
    return [scored(i, k, b"") for k in range(N)], lengths


def main() -> None:
    global _shared
    mode = sys.argv[1]
    if mode in ("shm", "shm-copy"):
        _shared = mmap.mmap(-1, IN_FLIGHT * SLOT)  # anonymous, MAP_SHARED: the forked workers see it
    began, t0 = time.monotonic(), os.times()
    with tempfile.TemporaryDirectory() as folder, open(os.path.join(folder, "doc"), "wb") as out, \
            ProcessPoolExecutor(2, mp_context=mp.get_context("fork")) as pool:
        view = memoryview(_shared) if _shared is not None else None
        pending: deque[tuple[int, Future[object]]] = deque()
        sent = 0

        def send() -> None:
            nonlocal sent
            slot = sent % IN_FLIGHT
            job = pool.submit(by_pipe, sent) if view is None else pool.submit(by_shm, sent, slot)
            pending.append((slot, job))
            sent += 1

        while sent < min(IN_FLIGHT, CHUNKS):
            send()
        while pending:
            slot, future = pending.popleft()
            done = future.result()
            if view is None:
                for case in done:  # type: ignore[attr-defined]
                    out.write(SEP)
                    out.write(case.result)
            else:
                _, lengths = done  # type: ignore[misc]
                at = slot * SLOT
                for n in lengths:
                    out.write(SEP)
                    # shm-copy: each result copied out of its slot first (a writer that keeps
                    # its pieces past the slot's reuse needs its own bytes)
                    out.write(bytes(view[at:at + n]) if mode == "shm-copy" else view[at:at + n])
                    at += n
            if sent < CHUNKS:
                send()
        out.flush()
        size = out.tell()
        if view is not None:
            view.release()
    t1 = os.times()
    here = t1.user + t1.system - t0.user - t0.system
    print(f"{mode}: wall {time.monotonic() - began:.3f} s, this process {here:.3f} s CPU, "
          f"workers {t1.children_user + t1.children_system:.3f} s, {size / 1e6:.0f} MB written "
          f"(load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
