"""Keeping to a rate: requests or tokens per minute, for everything that calls one endpoint."""

from __future__ import annotations

import time

import anyio


class RateBucket:
    """A token bucket holding at most one minute's allowance, refilled continuously.

    `take(n)` waits until `n` units are there and takes them; `spend(n)` takes units already
    used (tokens a reply reported), possibly going below zero, so later calls wait for the debt
    to be repaid. A lock keeps waiters in order.
    """

    def __init__(self, per_minute: float) -> None:
        if per_minute <= 0:
            raise ValueError(f"a rate must be positive, got {per_minute}")
        self.per_second = per_minute / 60.0
        self.capacity = per_minute
        self.level = per_minute
        self._at = time.monotonic()
        self._lock = anyio.Lock()

    def _refill(self) -> None:
        now = time.monotonic()
        self.level = min(self.capacity, self.level + (now - self._at) * self.per_second)
        self._at = now

    async def take(self, n: float = 1.0) -> None:
        async with self._lock:
            self._refill()
            while self.level < min(n, self.capacity):
                await anyio.sleep((min(n, self.capacity) - self.level) / self.per_second)
                self._refill()
            self.level -= n

    def spend(self, n: float) -> None:
        self._refill()
        self.level -= n


__all__ = ["RateBucket"]
