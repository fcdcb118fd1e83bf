"""The CPU of `score`'s workers, in process (issue 29 item 4, session 21): the run's setup taken
from the `agenteval score` command line (its config resolved as the command resolves it), then
`shard_worker.score_chunk` over the first N cases of both files, with the cyclic GC off as in the
workers; best of R rounds, CPU µs a case, optionally under cProfile.

    python bench/profile_score_chunk.py [--n 2000] [--rounds 5] [--profile OUT.prof] \
        -- EXPECTED --actual ACTUAL --config_file_path CFG

With PYTHONPATH set to a tree, the same N cases time that tree's worker path (A/B in process).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import sys
import time
from typing import Any


class _Captured(BaseException):
    """Stops the command once its run's setup is made."""

    def __init__(self, setup: Any) -> None:
        super().__init__()
        self.setup = setup


def run_setup(argv: list[str]) -> Any:
    """The `ShardSetup` the sharded `agenteval score` of `argv` would give its workers."""
    from agenteval.cli.main import main as cli
    from agenteval.runner import shard_worker, sharded

    # (`runner.streamed` imports these two where it re-scores, since session 35: patched at home.)
    made = shard_worker.ShardSetup

    def capture(*a: Any, **k: Any) -> Any:
        raise _Captured(made(*a, **k))

    shard_worker.ShardSetup = capture  # type: ignore[misc,assignment]
    sharded.worker_count = lambda *args: 2  # type: ignore[assignment]
    sys.argv = ["agenteval", "score", *argv, "--output", "/dev/null"]
    try:
        cli()
    except _Captured as c:
        return c.setup
    except SystemExit:
        pass
    finally:
        shard_worker.ShardSetup = made  # type: ignore[misc]
    raise SystemExit("the command did not reach a sharded run")


def started_worker(argv: list[str], n: int) -> tuple[Any, list[Any], list[Any]]:
    """The run's setup for the `score` command line `argv`, this process started as one of its
    workers (`shard_worker.start`, the cyclic GC off as there), and the spans of the first `n`
    items of both files."""
    from agenteval.datasets.split import item_spans
    from agenteval.runner import shard_worker

    setup = run_setup(argv)
    expected = (item_spans(setup.expected_path, "eval_cases") or [])[:n]
    actual = (item_spans(setup.actual_path, "eval_cases") or [])[:n]
    shard_worker.start(setup)
    gc.disable()
    return setup, expected, actual


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", default=None, help="write a cProfile of one more round here")
    parser.add_argument("score_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    _, expected, actual = started_worker([a for a in args.score_args if a != "--"], args.n)
    from agenteval.runner import shard_worker

    n, best = len(expected), float("inf")
    for _ in range(args.rounds):
        started = time.process_time()
        out = shard_worker.score_chunk(0, expected, actual)
        best = min(best, time.process_time() - started)
        assert isinstance(out, list), out
        del out
    print(f"{n} cases: best of {args.rounds} {best / n * 1e6:.1f} µs CPU a case")
    if args.profile:
        cProfile.runctx("shard_worker.score_chunk(0, expected, actual)", globals(),
                        {"shard_worker": shard_worker, "expected": expected, "actual": actual},
                        args.profile)


if __name__ == "__main__":
    main()
