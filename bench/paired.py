"""Time two whole commands in turn (A B A B ...) and give their ratios pair by pair.

Usage: python bench/paired.py -n 4 --a 'agenteval score ...' --b 'agenteval score ...'
(each command is one string split as a shell splits words; put `env X=1` in front for a
variable). Each run's CPU is the operating system's accounting of the finished child and its
children (`os.wait4`: user + system), wall a monotonic clock around it, and peak the largest
resident set among the processes it waited for. Pairing keeps the ratio meaningful when the
machine's speed drifts: quote the median ratio; min and max show how noisy the machine was.
The 1-minute load is printed beside every pair.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import time


def run(cmd: list[str], expected: int = 0) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS in MiB of one whole run, which
    must exit with `expected` (a score with failing cases exits 1)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != expected:
        raise SystemExit(f"exit {os.waitstatus_to_exitcode(status)}: {shlex.join(cmd)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=4, help="pairs (default 4), after one unrecorded pair")
    parser.add_argument("--a", required=True, help="command A (the change)")
    parser.add_argument("--b", required=True, help="command B (the baseline or the yardstick)")
    parser.add_argument("--exit", type=int, default=0, help="the exit status both must give (default 0)")
    args = parser.parse_args()
    a, b = shlex.split(args.a), shlex.split(args.b)
    run(a, args.exit), run(b, args.exit)  # warm-up: page cache, bytecode
    rows: dict[str, list[tuple[float, float, float]]] = {"A": [], "B": []}
    for i in range(args.n):
        order = (("A", a), ("B", b)) if i % 2 == 0 else (("B", b), ("A", a))  # who goes first alternates
        for name, cmd in order:
            rows[name].append(run(cmd, args.exit))
        load = os.getloadavg()[0]
        ra, rb = rows["A"][-1], rows["B"][-1]
        print(f"pair {i + 1}: A {ra[0]:.2f} s wall / {ra[1]:.2f} s CPU, B {rb[0]:.2f} / {rb[1]:.2f}"
              f"  (load {load:.1f})", flush=True)
    for name in ("A", "B"):
        wall, cpu, peak = zip(*rows[name], strict=True)
        print(f"{name}: wall {spread(list(wall))} s, CPU {spread(list(cpu))} s, peak {max(peak):.0f} MiB")
    for k, label in ((0, "wall"), (1, "CPU")):
        ratios = [x[k] / y[k] for x, y in zip(rows["A"], rows["B"], strict=True)]
        print(f"A/B {label}: {spread(ratios)}")


if __name__ == "__main__":
    main()
