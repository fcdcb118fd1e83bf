"""A concurrency limit around any `LLM`, and giving up on an endpoint that keeps failing.

Where calls to one endpoint are also made in other processes (worker processes, a Ray
cluster), the wrapper takes, besides its own slot, one of the endpoint's `Slots` shared with
them for the length of each call, so that the calls in flight over all processes stay within
the endpoint's limit (`SharedSlots`; `runner.executors.cluster_limits.ClusterSlots`).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.synchronize
from multiprocessing.context import BaseContext
from typing import Protocol

import anyio

from agenteval.models.base import LLM, ModelError, ModelRequest, ModelResponse
from agenteval.models.rate import RateBucket

__all__ = ["LimitedLLM", "SharedSlots", "Slots"]


class Slots(Protocol):
    """Slots for calls to one endpoint, shared with other processes."""

    async def acquire(self) -> None:
        """Waits for a slot and takes it (nothing taken when cancelled meanwhile)."""

    def release(self) -> None:
        """Gives back a slot taken by `acquire`."""


class SharedSlots:
    """`limit` slots of one endpoint shared by this process and the processes it starts with
    multiprocessing (a semaphore of the OS, handed to them as they are spawned). A wait polls,
    from 1 ms up to `POLL` apart: a thread blocked on the semaphore could not be cancelled
    without losing the slot it might take later."""

    POLL = 0.02

    def __init__(self, limit: int, context: BaseContext | None = None) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
        # An OS semaphore counts to SEM_VALUE_MAX (2**31 - 1 on Linux, 32767 on macOS; not in
        # typeshed): so many calls in flight are no limit already, a larger count an OverflowError.
        most: int = getattr(multiprocessing.synchronize, "SEM_VALUE_MAX", 32767)
        self._slots = (context or multiprocessing.get_context("spawn")).BoundedSemaphore(min(limit, most))

    async def acquire(self) -> None:
        wait = 0.001
        while not self._slots.acquire(False):
            await anyio.sleep(wait)
            wait = min(wait * 2, self.POLL)

    def release(self) -> None:
        self._slots.release()


class LimitedLLM:
    """Lets at most `max_concurrency` `generate` calls into `inner` at once; others wait.

    The limit belongs to this wrapper, so every caller sharing the wrapper shares the limit.
    With `give_up_after` N, once N calls in a row have failed (each after the backend's own
    retries), later calls fail at once with the last error instead of waiting on a dead
    endpoint again; a success in between resets the count. `requests_per_minute` and
    `tokens_per_minute` keep every caller of the wrapper to those rates together.
    """

    def __init__(self, inner: LLM, max_concurrency: int, give_up_after: int | None = None,
                 requests_per_minute: float | None = None, tokens_per_minute: float | None = None) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        if give_up_after is not None and give_up_after < 1:
            raise ValueError(f"give_up_after must be at least 1, got {give_up_after}")
        self.inner = inner
        self._limiter = anyio.CapacityLimiter(max_concurrency)
        self.give_up_after = give_up_after
        self._failures = 0
        self._last_error: str | None = None
        self._requests = RateBucket(requests_per_minute) if requests_per_minute else None
        self._tokens = RateBucket(tokens_per_minute) if tokens_per_minute else None
        self.shared: Slots | None = None  # the endpoint's slots shared with other processes

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def max_concurrency(self) -> int:
        return int(self._limiter.total_tokens)

    @max_concurrency.setter
    def max_concurrency(self, value: int) -> None:
        # CapacityLimiter lets waiters in at once when the limit grows.
        if value < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {value}")
        self._limiter.total_tokens = value

    def _given_up(self) -> bool:
        return self.give_up_after is not None and self._failures >= self.give_up_after

    async def generate(self, request: ModelRequest) -> ModelResponse:
        """`inner.generate`, once a slot is free (or at once a ModelError, given up)."""
        if self._given_up():
            raise ModelError(f"not asked: the last {self._failures} calls to {self.name} failed; "
                             f"the last error: {self._last_error}")
        async with self._limiter:
            if self._given_up():  # decided while this call waited for its slot
                raise ModelError(f"not asked: the last {self._failures} calls to {self.name} "
                                 f"failed; the last error: {self._last_error}")
            if self._requests is not None:
                await self._requests.take()
            if self._tokens is not None:
                await self._tokens.take(0)  # wait while earlier replies' tokens are still owed
            shared = self.shared
            if shared is not None:
                await shared.acquire()
            try:
                response = await self.inner.generate(request)
            except ModelError as e:
                self._failures += 1
                self._last_error = str(e)
                raise
            finally:
                if shared is not None:
                    shared.release()
            self._failures = 0
            if self._tokens is not None:
                self._tokens.spend(response.usage.prompt_tokens + response.usage.completion_tokens)
            return response
