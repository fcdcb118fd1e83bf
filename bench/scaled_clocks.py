"""`agenteval` with the run journal's clocks scaled, for instruction counts under valgrind.

    PYTHONPATH=TREE/src valgrind --tool=callgrind ... python bench/scaled_clocks.py 50 eval AGENT SET ...

The journal's writer closes a batch after `FLUSH_SECONDS` of wall time (or at `FLUSH_CASES`), and
the history's stage thread paces its stages by wall time. Under valgrind a run goes ~50x slower,
so a window holds ~50x fewer case runs than natively, and each batch and stage costs its fixed
overhead again: 557 batches for 1,000 trivial cases on a loaded machine, where a native run
makes 16-22 (bench/README.md, session 41). With the clocks scaled by the first argument (the
slowdown), the batches and stages are a native run's, and the count stops following the load.
"""

from __future__ import annotations

import sys

from agenteval.store import journal_writer, kept_copy


def main() -> None:
    scale = float(sys.argv.pop(1))
    journal_writer.FLUSH_SECONDS *= scale
    journal_writer.STAMP_SECONDS *= scale
    kept_copy.EVERY *= scale
    kept_copy.PAUSE *= scale
    kept_copy.start.__defaults__ = (kept_copy.EVERY,)  # (its default was bound at definition)
    from agenteval.cli.entry import main as cli

    sys.argv[0] = "agenteval"
    cli()


if __name__ == "__main__":
    main()
