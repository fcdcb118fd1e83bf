"""The parent's CPU for a sharded `score`'s case-result bytes (issue 29 item 4): 40 chunks of 250
results of 27 KB (the 10,000-case corpus's 270 MB) from 2 forked pool workers, received and
written to a file three ways: `pipe` (pickled `Scored` lists through the pool, each result
written, as `runner.sharded` does), `blob` (each worker writes its chunk to a file, the parent
reads it into bytes and writes it), `copy` (the same files copied with `os.copy_file_range`).

    python bench/bench_chunk_transfer.py pipe|blob|copy
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor

from agenteval.runner.shard_worker import Scored
from agenteval.schema import EvalStatus

N, SIZE, CHUNKS = 250, 27_000, 40
SEP = b",\n    "


def scored(i: int, k: int, result: bytes) -> Scored:
    """A case as the workers send it today (with its result's bytes, or none where they are in
    the chunk's file)."""
    return Scored(f"id{i}-{k}", result, b"s" * 700, EvalStatus.PASSED, None, 0, 1.0, 2.0, 0.01)


def by_pipe(i: int) -> list[Scored]:
    blob = b"x" * SIZE
    return [scored(i, k, blob + bytes([k % 256])) for k in range(N)]


def by_file(i: int, folder: str) -> tuple[str, list[Scored]]:
    path = os.path.join(folder, f"{i}.chunk")
    blob = b"x" * SIZE
    with open(path, "wb") as f:
        for k in range(N):
            if k:
                f.write(SEP)
            f.write(blob + bytes([k % 256]))
    return path, [scored(i, k, b"") for k in range(N)]


def cpu() -> float:
    t = os.times()
    return t.user + t.system


def main() -> None:
    mode = sys.argv[1]
    with tempfile.TemporaryDirectory() as folder, open(os.path.join(folder, "doc"), "wb") as out, \
            ProcessPoolExecutor(2, mp_context=mp.get_context("fork")) as pool:
        futures = [pool.submit(by_pipe, i) if mode == "pipe" else pool.submit(by_file, i, folder)
                   for i in range(CHUNKS)]
        start = cpu()
        for future in futures:
            if mode == "pipe":
                for case in future.result():
                    out.write(SEP)
                    out.write(case.result)
                continue
            path, _ = future.result()
            fd = os.open(path, os.O_RDONLY)
            try:
                if mode == "blob":
                    out.write(b"".join([SEP, os.read(fd, os.fstat(fd).st_size)]))
                else:
                    out.flush()
                    size, at = os.fstat(fd).st_size, 0
                    while at < size:
                        at += os.copy_file_range(fd, out.fileno(), size - at, at)
            finally:
                os.close(fd)
                os.unlink(path)
        out.flush()
        print(f"{mode}: parent CPU while receiving {cpu() - start:.3f} s (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
