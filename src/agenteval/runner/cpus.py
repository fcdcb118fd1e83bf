"""How many CPUs other processes leave idle, for choosing how many worker processes a run
starts (`sharded.worker_count`).

Measured as the idle share of the CPU clock ticks in /proc/stat over a window, with this
process's own CPU in that window counted as idle (it is the run's own work, which its workers
take over). The window is the command's start-up where the command marked it (`mark_start`:
the CLI does, first thing; its imports and checks take most of a second), else a short sleep.
A tenth of a second asleep, taken right after a busy moment (a previous program's last
writes, a benchmark's previous contender), saw a core busy and chose one process where two
were free: a run 1.5 times as long. Stdlib only: the CLI imports this before anything else.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

LEAST_WINDOW = 0.25
"""Seconds a window spans at least: a shorter one is made up by sleeping (at 100 ticks a second
on 2 CPUs, a quarter of a second is 50 ticks, so one tick is 2% of them)."""

MARK_LASTS = 10.0
"""Seconds a start mark is used for: a process that runs longer (the web UI, a library caller
that marked long ago) samples afresh, since its start says nothing about the machine now."""


@dataclass(frozen=True)
class CpuSample:
    """The moment's clock ticks since boot, (idle, all) per CPU, from /proc/stat; this process's
    own CPU seconds (user + system, all its threads); the monotonic clock."""

    ticks: Mapping[int, tuple[int, int]]
    own: float
    at: float


def sample() -> CpuSample | None:
    """The CPUs' ticks now; None where /proc/stat cannot be read so (not Linux)."""
    ticks: dict[int, tuple[int, int]] = {}
    try:
        with open("/proc/stat", "rb") as f:
            for line in f:
                if not line.startswith(b"cpu") or line[3:4] == b" ":  # the all-CPU line
                    if ticks:
                        break  # the per-CPU lines are together, first after the total
                    continue
                name, _, rest = line.partition(b" ")
                values = [int(x) for x in rest.split()[:8]]  # user .. steal
                ticks[int(name[3:])] = (values[3] + values[4], sum(values))  # idle + iowait
    except (OSError, ValueError, IndexError):
        return None
    times = os.times()
    return CpuSample(ticks, times.user + times.system, time.monotonic()) if ticks else None


_start: CpuSample | None = None


def mark_start() -> None:
    """Marks this moment as the start of the window the next choice of processes measures
    (`idle_cpus`). For the command line's entry point: its imports fill the window."""
    global _start
    _start = sample()


def idle_between(before: CpuSample, after: CpuSample, cpus: Sequence[int],
                 ticks_per_second: float) -> float | None:
    """How many of `cpus` were idle from `before` to `after`: their idle share of the ticks
    (this process's own CPU counted as idle), times their number. None where the samples do not
    both hold every CPU or no tick passed."""
    idle = total = 0
    for cpu in cpus:
        if cpu not in before.ticks or cpu not in after.ticks:
            return None
        idle += after.ticks[cpu][0] - before.ticks[cpu][0]
        total += after.ticks[cpu][1] - before.ticks[cpu][1]
    if total <= 0:
        return None
    own = (after.own - before.own) * ticks_per_second
    return len(cpus) * min(total, idle + own) / total


def idle_cpus(cpus: Sequence[int], least: float = LEAST_WINDOW) -> float:
    """How many of `cpus` other processes leave idle now (`idle_between`), over the window since
    `mark_start` where it was marked less than `MARK_LASTS` ago, else over a fresh one; a
    window shorter than `least` is made up by sleeping. Where /proc/stat is not, the CPUs less
    the 1-minute load average (which trails by a minute); where that is not either, all of
    them."""
    now = time.monotonic()
    before = _start if _start is not None and now - _start.at < MARK_LASTS else None
    if before is None:
        before = sample()
    if before is not None:
        if (wait := least - (now - before.at)) > 0:
            time.sleep(wait)
        after = sample()
        if after is not None:
            idle = idle_between(before, after, cpus, _ticks_per_second())
            if idle is not None:
                return idle
    try:
        return max(0.0, len(cpus) - os.getloadavg()[0])
    except (AttributeError, OSError):  # no load average here: every CPU counts
        return float(len(cpus))


def _ticks_per_second() -> float:
    try:
        return float(os.sysconf("SC_CLK_TCK"))
    except (AttributeError, ValueError, OSError):
        return 100.0


__all__ = ["LEAST_WINDOW", "MARK_LASTS", "CpuSample", "idle_between", "idle_cpus", "mark_start", "sample"]
