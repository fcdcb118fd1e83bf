"""The scripted model and the concurrency limit."""

from __future__ import annotations

import anyio
import pytest

from agenteval.models import (
    LLM,
    Generation,
    LimitedLLM,
    Message,
    ModelError,
    ModelRequest,
    ModelResponse,
    ScriptedModel,
    ToolCallRequest,
    TransientModelError,
    Usage,
)

pytestmark = pytest.mark.anyio


def ask(text: str, n: int = 1) -> ModelRequest:
    return ModelRequest(messages=(Message("user", text),), n=n)


async def test_replies_in_order_and_requests_recorded() -> None:
    call = ToolCallRequest("roll_die", {"sides": 6})
    model = ScriptedModel(["one two", Generation("g", finish_reason="length"), [call]])
    assert isinstance(model, LLM)
    first = await model.generate(ask("hello there world"))
    assert first.text == "one two"
    assert first.usage == Usage(prompt_tokens=3, completion_tokens=2)
    assert (await model.generate(ask("b"))).generations[0].finish_reason == "length"
    third = await model.generate(ask("c"))
    assert third.generations[0].tool_calls == (call,) and third.text == ""
    assert [r.messages[0].content for r in model.requests] == ["hello there world", "b", "c"]
    with pytest.raises(ModelError, match="no replies left"):
        await model.generate(ask("d"))


async def test_samples_take_one_reply_each_and_responses_are_whole() -> None:
    whole = ModelResponse((Generation("x"), Generation("y")), Usage(1, 2), "m")
    model = ScriptedModel(["YES", "NO", "YES", whole])
    reply = await model.generate(ask("q", n=3))
    assert [g.text for g in reply.generations] == ["YES", "NO", "YES"]
    assert await model.generate(ask("q", n=2)) is whole
    assert model.remaining == 0


async def test_callable_script_and_scripted_errors() -> None:
    model = ScriptedModel(lambda request: request.messages[-1].content.upper())
    assert (await model.generate(ask("shout"))).text == "SHOUT"
    failing = ScriptedModel([TransientModelError("try later"), "ok"])
    with pytest.raises(TransientModelError):
        await failing.generate(ask("q"))
    assert (await failing.generate(ask("q"))).text == "ok"


async def test_limit_caps_concurrency() -> None:
    inner = ScriptedModel(lambda _: "ok", latency=0.05)
    limited = LimitedLLM(inner, max_concurrency=2)
    assert isinstance(limited, LLM) and limited.name == "scripted"
    async with anyio.create_task_group() as tg:
        for i in range(6):
            tg.start_soon(limited.generate, ask(str(i)))
    assert len(inner.requests) == 6
    assert inner.max_in_flight == 2
    limited.max_concurrency = 6
    inner.max_in_flight = 0
    async with anyio.create_task_group() as tg:
        for i in range(6):
            tg.start_soon(limited.generate, ask(str(i)))
    assert inner.max_in_flight == 6
    with pytest.raises(ValueError):
        LimitedLLM(inner, 0)
