"""Per-endpoint limits across a Ray cluster: one limiter actor per model endpoint.

`EndpointLimiter` is the body of a named Ray actor (made remote by the Ray executor, so this
module never imports Ray): a semaphore of `limit` slots plus the endpoint's requests- and
tokens-per-minute buckets. Every worker wraps each model it calls in a `ClusterLimitedLLM`,
which takes a slot before the call and gives it back after, so calls in flight to the endpoint
stay within the limit over the whole cluster, whatever the number of workers.

Calls made outside the workers (by the driver) take the same slots through `ClusterSlots`, which
the driver's model pool holds for the run (`ModelPool.share`): one limit per endpoint, whoever
calls it.

A worker that dies holds slots it will never give back: slots are held in the name of a worker
incarnation (`worker index:uuid`), and a restarted worker, before taking any, tells every
limiter to `forget` the earlier incarnations of its index (their slots come back; a slot
granted to one of them later is given back at once).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from typing import Any

from agenteval.models.base import LLM, ModelRequest, ModelResponse
from agenteval.models.rate import RateBucket


class EndpointLimiter:
    """Slots for calls to one endpoint (the body of a Ray async actor)."""

    def __init__(self, limit: int, requests_per_minute: float | None = None,
                 tokens_per_minute: float | None = None) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
        self._slots = asyncio.Semaphore(limit)
        self._held: Counter[str] = Counter()
        self._forgotten: set[str] = set()
        self._requests = RateBucket(requests_per_minute) if requests_per_minute else None
        self._tokens = RateBucket(tokens_per_minute) if tokens_per_minute else None
        self.in_flight = 0
        self.peak = 0  # the most slots ever held at once, for tests and benchmarks

    async def acquire(self, holder: str) -> bool:
        """Waits for a slot (and the rates) and takes it for `holder`; False when the holder
        was forgotten meanwhile (its process is gone: the slot is given back at once)."""
        await self._slots.acquire()
        if holder in self._forgotten:
            self._slots.release()
            return False
        self._held[holder] += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        if self._requests is not None:
            await self._requests.take()
        if self._tokens is not None:
            await self._tokens.take(0)  # wait while earlier replies' tokens are still owed
        return True

    def release(self, holder: str, tokens: int = 0) -> None:
        """Gives back one of `holder`'s slots, charging the `tokens` its reply used."""
        if self._tokens is not None and tokens:
            self._tokens.spend(tokens)
        if self._held[holder] > 0:  # a forgotten holder's late release gives back nothing twice
            self._held[holder] -= 1
            self.in_flight -= 1
            self._slots.release()

    def forget(self, worker: str, incarnation: str) -> None:
        """Gives back every slot held by an earlier incarnation of `worker` (one that died)."""
        for holder in [h for h in self._held if h.split(":")[0] == worker and h != incarnation]:
            count = self._held.pop(holder)
            self.in_flight -= count
            self._forgotten.add(holder)
            for _ in range(count):
                self._slots.release()

    def stats(self) -> dict[str, int]:
        return {"limit": self.limit, "in_flight": self.in_flight, "peak": self.peak}


@dataclass
class _Slot:
    """A slot this worker holds: calls it served, tokens they used, its give-back timer."""

    uses: int = 0
    tokens: int = 0
    timer: asyncio.TimerHandle | None = None


class ClusterLimitedLLM:
    """`inner` behind a slot of the endpoint's `EndpointLimiter` actor (`limiter`, a Ray actor
    handle), held by `holder` (this worker's incarnation) for the length of each call.

    Asking the actor costs two messages per call. With `reuse` (an endpoint without rates to
    keep, whose limiter counts slots, not requests), a slot whose call ended is kept for
    `LINGER` seconds for this worker's next call, unless one of this worker's calls is already
    waiting at the actor, and goes back after `REUSES` calls in a row, so a worker that keeps
    busy cannot keep other workers' calls waiting for long."""

    LINGER = 0.02
    REUSES = 8

    def __init__(self, inner: LLM, limiter: Any, holder: str, reuse: bool = True) -> None:
        self.inner = inner
        self._limiter = limiter
        self._holder = holder
        self._reuse = reuse
        self._idle: list[_Slot] = []
        self._waiting = 0  # this worker's calls waiting at the actor
        self.acquired = 0  # slots asked of the actor (a count, for tests and benchmarks)

    @property
    def name(self) -> str:
        return self.inner.name

    async def generate(self, request: ModelRequest) -> ModelResponse:
        """`inner.generate` once the cluster has a slot for it."""
        slot = self._idle.pop() if self._idle else None
        if slot is not None and slot.timer is not None:
            slot.timer.cancel()
        if slot is None:
            slot = await self._acquire()
        tokens = 0
        try:
            response = await self.inner.generate(request)
            tokens = response.usage.prompt_tokens + response.usage.completion_tokens
            return response
        finally:
            if slot is not None:
                self._done(slot, tokens)

    async def _acquire(self) -> _Slot | None:
        """A slot from the actor (None: refused, this holder being forgotten, never when alive)."""
        self.acquired += 1
        self._waiting += 1
        ref = self._limiter.acquire.remote(self._holder)
        try:
            granted = await ref
        except BaseException:
            # Cancelled (a case timeout) while waiting: the slot may still be granted later,
            # and must then be given back, or the cluster loses it for the rest of the run.
            ref.future().add_done_callback(self._give_back_if_granted)
            raise
        finally:
            self._waiting -= 1
        return _Slot() if granted else None

    def _done(self, slot: _Slot, tokens: int) -> None:
        slot.uses += 1
        slot.tokens += tokens
        if not self._reuse or slot.uses >= self.REUSES or self._waiting:
            self._give_back(slot)
            return
        slot.timer = asyncio.get_running_loop().call_later(self.LINGER, self._expire, slot)
        self._idle.append(slot)

    def _expire(self, slot: _Slot) -> None:
        if slot in self._idle:
            self._idle.remove(slot)
            self._give_back(slot)

    def _give_back(self, slot: _Slot) -> None:
        self._limiter.release.remote(self._holder, slot.tokens)  # no need to wait for it

    def _give_back_if_granted(self, future: Any) -> None:
        if not future.cancelled() and future.exception() is None and future.result():
            self._limiter.release.remote(self._holder, 0)


class ClusterSlots:
    """An endpoint's cluster-wide slots (its `EndpointLimiter` actor, `limiter`) taken by
    `holder` (the driver: never forgotten, being no worker) for the driver's own calls; a
    `models.limits.Slots`."""

    def __init__(self, limiter: Any, holder: str) -> None:
        self._limiter = limiter
        self._holder = holder

    async def acquire(self) -> None:
        ref = self._limiter.acquire.remote(self._holder)
        try:
            granted = await ref
        except BaseException:  # cancelled while waiting: a slot granted later goes back
            ref.future().add_done_callback(self._give_back_if_granted)
            raise
        if not granted:
            raise RuntimeError(f"the endpoint's limiter refused holder {self._holder!r}")

    def release(self) -> None:
        self._limiter.release.remote(self._holder, 0)

    def _give_back_if_granted(self, future: Any) -> None:
        if not future.cancelled() and future.exception() is None and future.result():
            self.release()


__all__ = ["ClusterLimitedLLM", "ClusterSlots", "EndpointLimiter"]
