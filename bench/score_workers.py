"""`agenteval score` in a given number of worker processes, whatever the CPUs.

    python bench/score_workers.py N EXPECTED --actual ACTUAL [score's options ...]

`score` chooses its processes from the CPUs it may use (`runner.sharded.worker_count`; before
session 21, from those idle when it started: on a shared machine one, so that a benchmark of
the sharded path timed the streamed one). This runs the `agenteval score` command in this
process with N processes asked for (it still falls back to one process where the run cannot
be sharded), so that a whole-process timing (A B A B, the before and after trees given as
PYTHONPATH) compares the same path on both sides.
"""

from __future__ import annotations

import sys


def main() -> None:
    workers = int(sys.argv[1])
    from agenteval.cli.main import main as cli
    from agenteval.runner import sharded, streamed

    # (`streamed` imports it from `sharded` where it re-scores since session 35; older trees
    # hold it in `streamed`.)
    home = streamed if hasattr(streamed, "worker_count") else sharded
    home.worker_count = lambda *args: workers  # type: ignore[attr-defined]
    sys.argv = ["agenteval", "score", *sys.argv[2:]]
    cli()


if __name__ == "__main__":
    main()
