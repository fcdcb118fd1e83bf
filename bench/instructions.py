"""Instructions a whole process executes, counted by valgrind's cachegrind (load-proof).

Threads run one at a time under valgrind, so the count holds at any load, where CPU seconds do
not on a shared machine; it ignores cache misses and stalls (a proxy of CPU time, not a measure).
Shared by the `bench_*_instructions.py` scripts and `bench_frames.py`.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence

_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def count(argv: Sequence[str], src: str, *, out: str = "/dev/null", exits: Sequence[int] = (0,)) -> int:
    """The instructions of `argv` (the interpreter's own binary first: valgrind would count a
    shim's shell) run under cachegrind with `src` as PYTHONPATH, its per-function counts written
    to `out`; an exit status not in `exits`, or no count, ends the bench with the run's stderr."""
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}", *argv]
    run = subprocess.run(cmd, env={**os.environ, "PYTHONPATH": src}, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    found = _REFS.search(run.stderr)
    if run.returncode not in exits or found is None:
        raise SystemExit(f"{' '.join(argv)}: exit {run.returncode}\n{run.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))
