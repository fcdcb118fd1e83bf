"""The embedded model streaming for real (marked `model`; skipped when `agenteval[local]` is
missing): the same greedy reply in pieces, and a cancelled call stops the engine."""

from __future__ import annotations

import time

import anyio
import httpx
import pytest
from tests.models.local_marks import EMBEDDED_MODEL

from agenteval.models import LocalModel, Message, ModelRequest
from agenteval.models.base import generate_streaming

pytestmark = EMBEDDED_MODEL


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # each extra backend costs real inference


async def _busy_slots(model: LocalModel) -> int:
    """Slots of the engine generating now (llama.cpp's own /slots report)."""
    base, key = await model.http_endpoint()
    async with httpx.AsyncClient() as client:
        r = await client.get(base.removesuffix("/v1") + "/slots", headers={"Authorization": f"Bearer {key}"})
    r.raise_for_status()
    return sum(1 for s in r.json() if s.get("is_processing"))


async def test_a_streamed_reply_is_the_same_reply_in_pieces_and_cancelling_stops_the_engine() -> None:
    model = LocalModel()
    request = ModelRequest(messages=(Message("user", "Count from 1 to 3, separated by spaces."),),
                           max_tokens=6)
    whole = await model.generate(request)
    pieces: list[str] = []
    streamed = await generate_streaming(model, request, pieces.append)
    assert len(pieces) > 1 and "".join(pieces) == streamed.text == whole.text
    assert streamed.usage.completion_tokens == whole.usage.completion_tokens

    long = ModelRequest(messages=(Message("user", "Count from 1 to 300, separated by spaces."),),
                        max_tokens=600)
    heard: list[str] = []
    with anyio.CancelScope() as scope:
        def on_chunk(text: str) -> None:
            heard.append(text)
            if len(heard) == 2:
                scope.cancel()
        await generate_streaming(model, long, on_chunk)
    assert scope.cancelled_caught
    # The engine stops at its next token: its slot goes idle with a few pieces more at most
    # (600 tokens would take minutes here). The bound only keeps a broken stop from hanging.
    deadline = time.monotonic() + 120
    while await _busy_slots(model) and time.monotonic() < deadline:
        await anyio.sleep(0.2)
    await anyio.sleep(0.2)  # pieces already handed to the event loop arrive
    assert await _busy_slots(model) == 0 and len(heard) <= 5
