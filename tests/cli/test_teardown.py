"""The console script's fast exit tells a thread on its way out from one the command gave up on;
its run is settled out of the collector's reach only when armed."""

from __future__ import annotations

import gc
import threading

import pytest

from agenteval.cli import teardown


def _thread(seconds: float) -> tuple[threading.Thread, threading.Event]:
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, args=(seconds,), daemon=False)
    t.start()
    return t, stop


def test_a_thread_ending_within_the_grace_is_not_abandoned() -> None:
    # An idle worker thread told to stop when the event loop closed ends a moment later.
    t, _ = _thread(0.05)
    assert teardown._abandoned_threads() is False
    assert not t.is_alive()


def test_a_thread_still_running_after_the_grace_is_abandoned() -> None:
    t, stop = _thread(30)
    try:
        assert teardown._abandoned_threads() is True
    finally:
        stop.set()
        t.join()


def test_daemon_threads_are_not_waited_for() -> None:
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    try:
        assert teardown._abandoned_threads() is False
    finally:
        stop.set()
        t.join()


def test_settle_freezes_what_is_alive_in_an_armed_process_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # In process (not armed) the collector is left alone: a test run's objects stay collectable.
    before = gc.get_freeze_count()
    teardown.settle()
    assert gc.get_freeze_count() == before
    monkeypatch.setattr(teardown, "_armed", True)
    alive = [[] for _ in range(10)]  # (lists: tracked by the collector)
    try:
        teardown.settle()
        assert gc.get_freeze_count() >= before + len(alive)
    finally:
        gc.unfreeze()


def test_imports_run_without_the_collector_then_settle_in_an_armed_process_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # In process: the collector is left running and nothing is frozen.
    before = gc.get_freeze_count()
    with teardown.imports_settled():
        assert gc.isenabled()
    assert gc.get_freeze_count() == before
    monkeypatch.setattr(teardown, "_armed", True)
    try:
        with teardown.imports_settled():
            assert not gc.isenabled()  # (eval's imports: ~150 collections that free next to nothing)
            alive = [[] for _ in range(10)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= before + len(alive)
    finally:
        gc.enable()
        gc.unfreeze()


def test_a_collector_turned_off_before_the_imports_stays_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(teardown, "_armed", True)
    gc.disable()
    try:
        with teardown.imports_settled():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_failed_imports_get_the_collector_back_with_nothing_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(teardown, "_armed", True)
    before = gc.get_freeze_count()
    try:
        with pytest.raises(ImportError), teardown.imports_settled():
            raise ImportError("a broken install")
        assert gc.isenabled() and gc.get_freeze_count() == before
    finally:
        gc.enable()
