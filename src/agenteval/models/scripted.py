"""A deterministic scripted `LLM` for tests.

Replies come from a list, in order, or from a callable `(request) -> reply`. Each sample of a
request takes one reply (so `n=3` takes three), except a `ModelResponse`, which is returned
whole for the request. A reply is one of:

- `str`: the sample's text;
- `Generation`: the sample as is;
- a sequence of `ToolCallRequest`: a sample with those tool calls and no text;
- `ModelResponse`: the whole response;
- an exception instance: raised (e.g. `TransientModelError` to test retries).

Usage is made up but deterministic: whitespace-separated words of the messages and replies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import anyio

from agenteval.models.base import (
    Generation,
    ModelError,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    Usage,
)

__all__ = ["Reply", "ScriptedModel"]

Reply = str | Generation | ModelResponse | Sequence[ToolCallRequest] | BaseException


class ScriptedModel:
    """Replies from a script; records every request it receives in `requests`."""

    def __init__(
        self,
        replies: Sequence[Reply] | Callable[[ModelRequest], Reply],
        *,
        name: str = "scripted",
        latency: float = 0.0,
    ) -> None:
        """`latency` seconds are slept (anyio.sleep) per request, for concurrency tests."""
        self._name = name
        self._script: Callable[[ModelRequest], Reply] | None = None
        self._replies: list[Reply] = []
        if callable(replies):
            self._script = replies
        else:
            self._replies = list(replies)
        self.latency = latency
        self.requests: list[ModelRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def name(self) -> str:
        return self._name

    @property
    def remaining(self) -> int:
        """Replies left in a list script (0 for a callable one)."""
        return len(self._replies)

    async def generate(self, request: ModelRequest) -> ModelResponse:
        """Returns the next scripted reply(s); ModelError when a list script runs out."""
        self.requests.append(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.latency > 0:
                await anyio.sleep(self.latency)
            generations: list[Generation] = []
            for _ in range(request.n):
                reply = self._next(request)
                if isinstance(reply, BaseException):
                    raise reply
                if isinstance(reply, ModelResponse):
                    if generations:
                        raise ModelError("a scripted ModelResponse must start a request")
                    return reply
                generations.append(_to_generation(reply))
        finally:
            self.in_flight -= 1
        prompt = sum(len(m.content.split()) for m in request.messages)
        completion = sum(len(g.text.split()) for g in generations)
        return ModelResponse(tuple(generations), Usage(prompt, completion), self._name)

    def _next(self, request: ModelRequest) -> Reply:
        if self._script is not None:
            return self._script(request)
        if not self._replies:
            raise ModelError(f"{self._name}: the script has no replies left")
        return self._replies.pop(0)


def _to_generation(reply: str | Generation | Sequence[ToolCallRequest]) -> Generation:
    if isinstance(reply, Generation):
        return reply
    if isinstance(reply, str):
        return Generation(text=reply, finish_reason="stop")
    calls = tuple(reply)
    if not all(isinstance(c, ToolCallRequest) for c in calls):
        raise TypeError(f"unsupported scripted reply: {reply!r}")
    return Generation(text="", tool_calls=calls, finish_reason="tool_calls")
