"""Worker side of `bench_score_timeline.py`: wrappers of the shard worker's initializer and
`score_chunk` with which each worker appends when it started and each chunk's wall span and
CPU to a file of its own under $SCORE_TIMELINE_DIR. The timed process hands the pool these
(`runner.sharded`'s names): a worker unpickles them by this module's name, so a worker from the
fork server imports it too. Bench only: nothing in agenteval imports it."""

from __future__ import annotations

import os
import time
from typing import Any

from agenteval.runner import shard_worker

_DIR = os.environ.get("SCORE_TIMELINE_DIR")
_start, _score_chunk = shard_worker.start, shard_worker.score_chunk


def _log(*fields: object) -> None:
    if _DIR:
        with open(os.path.join(_DIR, f"worker-{os.getpid()}.log"), "a") as f:
            f.write(" ".join(str(x) for x in fields) + "\n")


def start(setup: Any) -> None:
    _log("start", time.monotonic(), time.process_time())
    _start(setup)


def score_chunk(first: int, expected: Any, actual: Any) -> Any:
    t, c = time.monotonic(), time.process_time()
    out = _score_chunk(first, expected, actual)
    _log("chunk", first, t, time.monotonic(), c, time.process_time())
    return out
