"""The limiter actor's body and the model wrapper, without Ray: slots across holders, slots of a
dead worker incarnation given back, a call cancelled while waiting for a slot gives it back."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Generator
from typing import Any

from agenteval.models import ScriptedModel
from agenteval.models.base import Generation, Message, ModelRequest, ModelResponse
from agenteval.models.pool import ModelPool
from agenteval.runner.executors.cluster_limits import ClusterLimitedLLM, ClusterSlots, EndpointLimiter


def test_slots_are_shared_by_every_holder_and_come_back_on_release() -> None:
    async def main() -> None:
        limiter = EndpointLimiter(2)
        assert await limiter.acquire("0:a") and await limiter.acquire("1:b")
        third = asyncio.ensure_future(limiter.acquire("1:b"))
        await asyncio.sleep(0.01)
        assert not third.done() and limiter.stats() == {"limit": 2, "in_flight": 2, "peak": 2}
        limiter.release("0:a")
        assert await third and limiter.in_flight == 2
        limiter.release("0:a")  # holds none any more: gives back nothing
        assert limiter.in_flight == 2

    asyncio.run(main())


def test_a_dead_incarnations_slots_come_back_and_a_late_grant_is_returned() -> None:
    async def main() -> None:
        limiter = EndpointLimiter(2)
        assert await limiter.acquire("0:old") and await limiter.acquire("0:old")
        waiting = asyncio.ensure_future(limiter.acquire("0:old"))  # queued when the process died
        await asyncio.sleep(0.01)
        limiter.forget("0", "0:new")  # the restarted worker 0
        assert await waiting is False  # granted to a dead holder: given back at once
        assert limiter.in_flight == 0
        limiter.release("0:old")  # a release sent just before dying changes nothing
        assert await limiter.acquire("0:new") and await limiter.acquire("1:x")
        assert limiter.in_flight == 2 and limiter.peak == 2

    asyncio.run(main())


class _Ref:
    """An ObjectRef stand-in: awaitable, with `future()`."""

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self.task = asyncio.ensure_future(coro)

    def __await__(self) -> Generator[Any, None, Any]:
        return asyncio.shield(self.task).__await__()

    def future(self) -> asyncio.Future[Any]:
        return self.task


class _Handle:
    """An actor-handle stand-in calling the limiter in this loop."""

    def __init__(self, limiter: EndpointLimiter) -> None:
        outer = self

        class Method:
            def __init__(self, name: str) -> None:
                self.name = name

            def remote(self, *args: Any) -> _Ref:
                fn = getattr(outer.limiter, self.name)

                async def call() -> Any:
                    out = fn(*args)
                    return await out if asyncio.iscoroutine(out) else out

                return _Ref(call())

        self.limiter = limiter
        self.acquire, self.release = Method("acquire"), Method("release")


def test_the_wrapper_holds_a_slot_per_call_and_a_cancelled_wait_gives_its_slot_back() -> None:
    # Ordered by events, not sleeps: with sleeps, a loop woken late under load let the held call
    # end first, and the "waiting" call was cancelled while holding the slot, not waiting for it.
    async def main() -> None:
        limiter, inner = EndpointLimiter(1), _Gated()
        model = ClusterLimitedLLM(inner, _Handle(limiter), "0:a", reuse=False)
        request = ModelRequest(messages=(Message("user", "hello"),))
        calls = [asyncio.ensure_future(model.generate(request)) for _ in range(3)]
        await _until(lambda: inner.calls == 1 and model.acquired == 3)  # one in, two waiting
        assert limiter.in_flight == 1
        inner.gate.set()
        replies = await asyncio.wait_for(asyncio.gather(*calls), 10)
        assert [r.text for r in replies] == ["hi"] * 3 and inner.calls == 3 and limiter.peak == 1
        await _until(lambda: limiter.in_flight == 0)

        inner.gate.clear()
        held = asyncio.ensure_future(model.generate(request))
        await _until(lambda: inner.calls == 4)  # the held call has the slot, inside the model
        waiting = asyncio.ensure_future(model.generate(request))
        await _until(lambda: model.acquired == 5)  # the second is waiting at the limiter
        assert not waiting.done() and limiter.in_flight == 1
        waiting.cancel()  # a case timeout while waiting for the slot
        await _until(waiting.done)
        assert waiting.cancelled() and inner.calls == 4  # it never reached the model
        inner.gate.set()
        await asyncio.wait_for(held, 10)
        # The slot the held call gave back is granted to the cancelled wait, then given back.
        await _until(lambda: limiter.in_flight == 0)
        await asyncio.wait_for(model.generate(request), 10)  # the one slot serves a new call
        assert inner.calls == 5 and limiter.peak == 1

    asyncio.run(main())


def test_a_slot_serves_a_few_calls_of_its_worker_in_a_row_then_goes_back() -> None:
    async def main() -> None:
        limiter = EndpointLimiter(2)
        model = ClusterLimitedLLM(ScriptedModel(lambda req: "hi"), _Handle(limiter), "0:a")
        request = ModelRequest(messages=(Message("user", "hello"),))
        for _ in range(ClusterLimitedLLM.REUSES * 2):  # one case's calls, one after the other
            await model.generate(request)
        assert model.acquired == 2  # one slot per REUSES calls, not two messages per call
        await asyncio.sleep(0.01)
        assert limiter.in_flight == 0  # the second went back after its REUSES-th call
        await model.generate(request)
        await asyncio.sleep(ClusterLimitedLLM.LINGER * 3)
        assert limiter.in_flight == 0 and model.acquired == 3  # an unused slot goes back soon

    asyncio.run(main())


class _Gated:
    """A model whose calls end once the test opens its gate."""

    name = "m"

    def __init__(self) -> None:
        self.calls = 0
        self.gate = asyncio.Event()

    async def generate(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        await self.gate.wait()
        return ModelResponse((Generation("hi"),))


async def _until(condition: Callable[[], bool]) -> None:
    """Lets the loop run until `condition` holds (no clock involved)."""
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never held")


def test_a_slot_goes_back_at_once_when_a_call_of_its_worker_waits_at_the_limiter() -> None:
    # Ordered by events, not sleeps: a 0.01 s sleep against a 0.05 s call failed under load (the
    # loop woke after both, the first call's slot then lingered and the second took it).
    class Lingering(ClusterLimitedLLM):
        LINGER = 3600.0  # a slot kept for this worker would hold the waiting call for an hour

    async def main() -> None:
        limiter, inner = EndpointLimiter(1), _Gated()
        model = Lingering(inner, _Handle(limiter), "0:a")
        request = ModelRequest(messages=(Message("user", "hello"),))
        first = asyncio.ensure_future(model.generate(request))
        await _until(lambda: inner.calls == 1)  # the first call holds the slot
        second = asyncio.ensure_future(model.generate(request))
        await _until(lambda: model.acquired == 2)  # the second waits at the limiter
        inner.gate.set()
        await asyncio.wait_for(asyncio.gather(first, second), 10)
        assert inner.calls == 2 and limiter.peak == 1

    asyncio.run(main())


class _Counted:
    """A model that counts the calls in flight to it, whoever makes them."""

    name = "m"

    def __init__(self) -> None:
        self.in_flight = self.peak = 0

    async def generate(self, request: ModelRequest) -> ModelResponse:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        await asyncio.sleep(0.03)
        self.in_flight -= 1
        return ModelResponse((Generation("ok"),))


def test_the_drivers_calls_take_the_workers_slots() -> None:
    # The driver's pool holds ClusterSlots of the endpoint's limiter (ModelPool.share): its own
    # calls and the workers' together never pass the limit.
    async def main() -> None:
        limiter, endpoint = EndpointLimiter(2), _Counted()
        worker = ClusterLimitedLLM(endpoint, _Handle(limiter), "0:a", reuse=False)
        pool = ModelPool({}, provided={"m": endpoint})
        pool.share({"m": ClusterSlots(_Handle(limiter), "driver:t")})
        driver = pool.get("m")
        request = ModelRequest(messages=(Message("user", "hello"),))
        await asyncio.gather(*(m.generate(request) for m in [worker, driver] * 4))
        assert endpoint.peak == 2
        await asyncio.sleep(0.01)
        assert limiter.in_flight == 0
        pool.unshare()
        assert driver.shared is None
        await asyncio.gather(*(driver.generate(request) for _ in range(4)))
        assert endpoint.peak == 4  # the pool's own limit (4) alone again

    asyncio.run(main())
