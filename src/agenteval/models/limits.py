"""A concurrency limit around any `LLM`, and giving up on an endpoint that keeps failing."""

from __future__ import annotations

import anyio

from agenteval.models.base import LLM, ModelError, ModelRequest, ModelResponse
from agenteval.models.rate import RateBucket

__all__ = ["LimitedLLM"]


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
            try:
                response = await self.inner.generate(request)
            except ModelError as e:
                self._failures += 1
                self._last_error = str(e)
                raise
            self._failures = 0
            if self._tokens is not None:
                self._tokens.spend(response.usage.prompt_tokens + response.usage.completion_tokens)
            return response
