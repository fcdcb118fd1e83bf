"""Whether a second copy of a result document is cheaper copied by the kernel than written again.

    python bench/bench_doc_copy.py [--mib 70] [--repeat 9]

A streamed `eval` writes its document to `--output` and to the run history (`store.output.
DocumentWriter`): each 1 MiB block is written to both. The alternative measured: write the first
file only, then copy it into the second with `os.copy_file_range` (or `shutil.copyfile`, which
uses it or sendfile). Each way makes the second file of `--mib` MiB from a first file just
written (in the page cache, as the document's is), into a new file; the figure is the process's
CPU (user + system, `time.process_time`) for the second file alone, median of `--repeat` rounds
taken in turn. Files under bench/out/doc_copy/ (removed at the end).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out" / "doc_copy"
BLOCK = os.urandom(1 << 20)


def write(path: Path, mib: int) -> None:
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(BLOCK)


def kernel_copy(src: Path, dst: Path) -> None:
    with open(src, "rb") as s, open(dst, "wb") as d:
        left = os.fstat(s.fileno()).st_size
        while left > 0:
            left -= os.copy_file_range(s.fileno(), d.fileno(), left)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=70)
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    first, second = OUT / "first.json", OUT / "second.json"
    ways: dict[str, Callable[[], None]] = {
        "written again": lambda: write(second, args.mib),
        "os.copy_file_range": lambda: kernel_copy(first, second),
        "shutil.copyfile": lambda: shutil.copyfile(first, second),
    }
    cpu: dict[str, list[float]] = {name: [] for name in ways}
    try:
        for _ in range(args.repeat):
            for name, make in ways.items():
                write(first, args.mib)
                second.unlink(missing_ok=True)
                t0 = time.process_time()
                make()
                cpu[name].append(time.process_time() - t0)
    finally:
        shutil.rmtree(OUT, ignore_errors=True)
    for name, times in cpu.items():
        print(f"{name}: {args.mib} MiB, CPU median {1000 * statistics.median(times):.0f} ms "
              f"({1000 * min(times):.0f}-{1000 * max(times):.0f})")


if __name__ == "__main__":
    main()
