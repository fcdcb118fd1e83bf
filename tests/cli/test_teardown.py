"""The console script's fast exit tells a thread on its way out from one the command gave up on."""

from __future__ import annotations

import threading

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
