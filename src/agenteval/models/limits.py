"""A concurrency limit around any `LLM`."""

from __future__ import annotations

import anyio

from agenteval.models.base import LLM, ModelRequest, ModelResponse

__all__ = ["LimitedLLM"]


class LimitedLLM:
    """Lets at most `max_concurrency` `generate` calls into `inner` at once; others wait.

    The limit belongs to this wrapper, so every caller sharing the wrapper shares the limit.
    """

    def __init__(self, inner: LLM, max_concurrency: int) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        self.inner = inner
        self._limiter = anyio.CapacityLimiter(max_concurrency)

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

    async def generate(self, request: ModelRequest) -> ModelResponse:
        """`inner.generate`, once a slot is free."""
        async with self._limiter:
            return await self.inner.generate(request)
