"""`runner.cpus`: the idle CPUs that decide how many worker processes `score` starts, measured
over the command's start-up (its own CPU counted as idle) rather than over a short sleep."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agenteval.runner import cpus
from agenteval.runner.cpus import CpuSample, idle_between


def _at(at: float, own: float, *ticks: tuple[int, int]) -> CpuSample:
    return CpuSample(dict(enumerate(ticks)), own, at)


def test_this_process_start_up_counts_as_idle() -> None:
    # Two CPUs over 0.5 s (100 ticks): this process imported on one of them (0.4 s of its own
    # CPU), the other sat idle. Other processes leave both CPUs idle: two workers. Counting the
    # start-up's own ticks as busy would have said 1.2 CPUs, i.e. one process.
    before = _at(10.0, 1.0, (1000, 5000), (2000, 5000))
    after = _at(10.5, 1.4, (1010, 5050), (2050, 5050))
    assert idle_between(before, after, [0, 1], 100.0) == pytest.approx(2.0)
    # Another program busy on the second CPU all along: one CPU is idle.
    busy = _at(10.5, 1.4, (1010, 5050), (2000, 5050))
    assert idle_between(before, busy, [0, 1], 100.0) == pytest.approx(1.0)
    # Only the CPUs asked about count (this process's affinity: its own CPU ran on them).
    assert idle_between(_at(10.0, 1.0, (1000, 5000)), _at(10.5, 1.0, (1000, 5000), (2000, 5050)),
                        [1], 100.0) is None
    assert idle_between(before, _at(10.5, 1.2, (1000, 5050), (2030, 5050)), [1], 100.0) == pytest.approx(1.0)


def test_own_cpu_beyond_the_ticks_counts_as_all_idle() -> None:
    # The process's accounting and the CPUs' ticks round differently: never more than all.
    before = _at(0.0, 0.0, (0, 100), (0, 100))
    after = _at(0.5, 0.9, (10, 150), (60, 150))
    assert idle_between(before, after, [0, 1], 100.0) == 2.0


def test_no_measure_without_every_cpu_or_without_ticks() -> None:
    before = _at(0.0, 0.0, (0, 100))
    assert idle_between(before, _at(0.3, 0.0, (5, 130)), [0, 1], 100.0) is None
    assert idle_between(before, _at(0.3, 0.0, (0, 100)), [0], 100.0) is None


class Clock:
    """A fake monotonic clock; `sleep` records its waits and moves the clock on."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The clock of `cpus` (its `sample`, `time.monotonic` and `time.sleep`): two CPUs that
    are idle all along, while this process uses none of its own."""
    c = Clock()

    def sample() -> CpuSample:
        t = int(100 * c.now)
        return CpuSample({0: (t, t), 1: (t, t)}, 0.0, c.now)

    monkeypatch.setattr(cpus, "sample", sample)
    monkeypatch.setattr(cpus.time, "monotonic", lambda: c.now)
    monkeypatch.setattr(cpus.time, "sleep", c.sleep)
    monkeypatch.setattr(cpus, "_start", None)
    return c


def test_a_fresh_start_mark_is_the_window_and_nothing_sleeps(clock: Clock) -> None:
    cpus.mark_start()
    clock.now += 0.8  # the imports
    assert cpus.idle_cpus([0, 1]) == 2.0
    assert clock.slept == []


def test_a_short_window_is_made_up_by_sleeping(clock: Clock) -> None:
    cpus.mark_start()
    clock.now += 0.1
    assert cpus.idle_cpus([0, 1]) == 2.0
    assert clock.slept == [pytest.approx(cpus.LEAST_WINDOW - 0.1)]


def test_an_old_mark_or_none_samples_afresh(clock: Clock) -> None:
    assert cpus.idle_cpus([0, 1]) == 2.0  # never marked (a library caller)
    cpus.mark_start()
    clock.now += cpus.MARK_LASTS + 1  # the web UI, hours later
    assert cpus.idle_cpus([0, 1]) == 2.0
    assert clock.slept == [cpus.LEAST_WINDOW, cpus.LEAST_WINDOW]


def test_without_proc_stat_the_load_average_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpus, "sample", lambda: None)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    assert cpus.idle_cpus([0, 1]) == 1.5
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 9.0, 9.0))
    assert cpus.idle_cpus([0, 1]) == 0.0


@pytest.mark.skipif(not Path("/proc/stat").is_file(), reason="no /proc/stat here")
def test_samples_hold_every_cpu_of_proc_stat() -> None:
    mine = sorted(os.sched_getaffinity(0))
    before = cpus.sample()
    assert before is not None and set(mine) <= set(before.ticks)
    assert all(0 <= idle <= total for idle, total in before.ticks.values())
    assert 0.0 <= cpus.idle_cpus(mine, least=0.05) <= len(mine)


def test_the_command_line_marks_its_start(monkeypatch: pytest.MonkeyPatch) -> None:
    from agenteval.cli import main, teardown

    monkeypatch.setattr(cpus, "_start", None)
    monkeypatch.setattr(teardown, "arm", lambda: None)
    monkeypatch.setattr(teardown, "exit_fast", lambda code: None)
    with pytest.raises(SystemExit):
        main.main(["--version"])
    assert cpus._start is not None or cpus.sample() is None
