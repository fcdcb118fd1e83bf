"""Putting a freshly written file in place of an existing one of the same size (a result
document written again over the last run's): `os.replace` against `agenteval.datasets.replace`
(the names exchanged, the old file freed by a thread), A B A B with the order alternating.

    python bench/bench_replace.py [--mb 260] [--rounds 4] [--dir bench/out/replace]

Per round and side: the wall and CPU of the call itself (what a run waits for after its last
case), and the wall until the old file's blocks are freed (the closing thread, joined). Each
new file is written just before (its pages dirty, as a run's document is when it commits).
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path

from agenteval.datasets.replace import replace


def _write(path: Path, mb: int, block: bytes) -> None:
    with open(path, "wb") as f:
        for _ in range(mb):
            f.write(block)


def _freed() -> None:
    for t in threading.enumerate():
        if t.name == "agenteval-free":
            t.join()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=260, help="file size (default 260, a 10,000-case document)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--dir", type=Path, default=Path(__file__).parent / "out" / "replace")
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    target, new = args.dir / "result.json", args.dir / ".result.json.tmp"
    block = os.urandom(1 << 20)
    sides: dict[str, Callable[[Path, Path], None]] = {"os.replace": os.replace, "datasets.replace": replace}
    got: dict[str, list[tuple[float, float, float]]] = {name: [] for name in sides}
    try:
        for r in range(args.rounds):
            for name in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
                _write(target, args.mb, block)
                _write(new, args.mb, block)
                t0, c0 = time.monotonic(), time.process_time()
                sides[name](new, target)
                t1, c1 = time.monotonic(), time.process_time()
                _freed()
                got[name].append((t1 - t0, c1 - c0, time.monotonic() - t0))
                print(f"round {r} {name:16} call {1000 * (t1 - t0):7.1f} ms wall "
                      f"{1000 * (c1 - c0):6.1f} ms CPU; "
                      f"old file freed after {1000 * (time.monotonic() - t0):7.1f} ms "
                      f"(load {os.getloadavg()[0]:.1f})", flush=True)
    finally:
        _freed()
        for p in (target, new):
            p.unlink(missing_ok=True)
    for name, rows in got.items():
        print(f"{name:16} median call {1000 * statistics.median(w for w, _, _ in rows):7.1f} ms wall, "
              f"{1000 * statistics.median(c for _, c, _ in rows):6.1f} ms CPU; freed after "
              f"{1000 * statistics.median(f for _, _, f in rows):7.1f} ms")


if __name__ == "__main__":
    main()
