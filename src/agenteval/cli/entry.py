"""The console script's (and `python -m agenteval`'s) entry point, kept apart from `main`.

The script pip writes imports its entry point's module outside any handler, and importing the
command line (click, the options, `main`) is most of a command's first half second: Ctrl-C
then ended with Python's own KeyboardInterrupt traceback. This module imports nothing at its
top, so that import is over at once; the command line's import is done inside `main`, where
Ctrl-C exits 130 quietly, as it does once a command runs.
"""

from __future__ import annotations

import sys
from typing import Any


def main(argv: list[str] | None = None) -> Any:
    """Import the command line and run it (`agenteval.cli.main.main`); 130 on Ctrl-C meanwhile."""
    try:
        from agenteval.cli.main import main as run
    except KeyboardInterrupt:
        # (What was half imported is dropped with the process; nothing was read or written yet.)
        sys.stderr.write("\ninterrupted\n")
        return 130
    return run(argv)
