"""Streaming a reply as it is generated (`models.base.streaming_to`): the OpenAI-compatible
backend over server-sent chunks from a real HTTP server on 127.0.0.1, the wire assembler, the
one-chunk fallback, cancellation, and the built-in agent holding written tool calls back."""

from __future__ import annotations

import json
import time

import anyio
import pytest
from tests.fake_server import FakeServer, Step, reply

from agenteval.agents import Agent
from agenteval.agents.base import SessionSpec
from agenteval.agents.builtin import BuiltinSession
from agenteval.models import Message, ModelRequest, OpenAICompatModel
from agenteval.models.base import ModelError, generate_streaming, streaming_to
from agenteval.models.limits import LimitedLLM
from agenteval.models.openai_wire import ChunkAssembler, parse_choice
from agenteval.models.scripted import ScriptedModel
from agenteval.schema import Content

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(messages=(Message("user", "Say hello."),), max_tokens=64)


def model(base_url: str) -> OpenAICompatModel:
    return OpenAICompatModel(model="m", base_url=base_url, api_key="k", backoff_base=0.01)


async def test_a_reply_streams_in_the_servers_chunks_through_a_limited_model(server: FakeServer) -> None:
    server.steps = [Step(chunks=("Hel", "lo", " world"))]
    pieces: list[str] = []
    response = await generate_streaming(LimitedLLM(model(server.base_url), 2), REQUEST, pieces.append)
    assert pieces == ["Hel", "lo", " world"]
    assert response.text == "Hello world" and response.generations[0].finish_reason == "stop"
    assert response.usage.completion_tokens == 3 and response.model == "served-model"
    body = server.received[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


async def test_no_listener_or_several_samples_are_not_streamed(server: FakeServer) -> None:
    server.steps = [Step(chunks=("a", "b"))]
    assert (await model(server.base_url).generate(REQUEST)).text == "ab"
    pieces: list[str] = []
    with streaming_to(pieces.append):
        await model(server.base_url).generate(ModelRequest(messages=REQUEST.messages, n=2))
    assert "stream" not in server.received[0] and "stream" not in server.received[1]
    assert pieces == []


async def test_a_server_refusing_stream_is_asked_without_it_from_then_on(server: FakeServer) -> None:
    server.steps = [Step(400, {"error": {"message": "unknown field stream"}}), Step(200, reply("whole"))]
    llm = model(server.base_url)
    pieces: list[str] = []
    assert (await generate_streaming(llm, REQUEST, pieces.append)).text == "whole"
    assert (await generate_streaming(llm, REQUEST, pieces.append)).text == "whole"
    assert pieces == ["whole", "whole"] and llm.stream_refused
    assert [b.get("stream") for b in server.received] == [True, None, None]


async def test_a_plain_json_answer_to_a_streamed_request_is_one_chunk(server: FakeServer) -> None:
    server.steps = [Step(200, reply("plain"))]
    pieces: list[str] = []
    assert (await generate_streaming(model(server.base_url), REQUEST, pieces.append)).text == "plain"
    assert pieces == ["plain"]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # trio here: its cancel() takes no reason
async def test_cancelling_the_call_closes_the_stream(server: FakeServer) -> None:
    """Stop really stops: the server sees its stream closed long before its last chunk."""
    server.steps = [Step(chunks=tuple(f"w{i} " for i in range(40)), chunk_delay=0.05)]
    pieces: list[str] = []
    with anyio.CancelScope() as scope:
        def heard(text: str) -> None:
            pieces.append(text)
            if len(pieces) == 3:
                scope.cancel()
        await generate_streaming(model(server.base_url), REQUEST, heard)
    assert scope.cancelled_caught and pieces == ["w0 ", "w1 ", "w2 "]
    deadline = time.monotonic() + 5
    while server.streams_cut == 0 and time.monotonic() < deadline:
        await anyio.sleep(0.02)
    assert server.streams_cut == 1 and server.chunks_sent < 10


async def test_an_error_in_the_stream_is_a_model_error(server: FakeServer) -> None:
    pieces: list[str] = []
    assembler = ChunkAssembler(pieces.append)
    assembler.add({"choices": [{"index": 0, "delta": {"content": "par"}}]})
    with pytest.raises(ModelError, match="context too long"):
        assembler.add({"error": {"message": "context too long"}})
    assert pieces == ["par"]


def test_tool_call_deltas_are_assembled_not_handed_on() -> None:
    pieces: list[str] = []
    assembler = ChunkAssembler(pieces.append)
    deltas = [{"role": "assistant", "tool_calls": [{"index": 0, "id": "c1", "function": {"name": "roll_die",
                                                                                       "arguments": ""}}]},
              {"tool_calls": [{"index": 0, "function": {"arguments": '{"sid'}}]},
              {"tool_calls": [{"index": 0, "function": {"arguments": 'es": 6}'}}]}]
    for delta in deltas:
        assembler.add({"model": "m1", "choices": [{"index": 0, "delta": delta}]})
    assembler.add({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls",
                                "logprobs": {"content": [{"token": "x", "logprob": -0.5}]}}]})
    assembler.add({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 5}})
    out = assembler.reply()
    generation = parse_choice(out["choices"][0], ModelRequest(messages=(), logprobs=1))
    assert pieces == [] and out["model"] == "m1" and out["usage"]["completion_tokens"] == 5
    assert [(c.name, c.args, c.id) for c in generation.tool_calls] == [("roll_die", {"sides": 6}, "c1")]
    assert generation.finish_reason == "tool_calls" and generation.logprobs is not None


async def test_a_backend_that_does_not_stream_gives_one_chunk() -> None:
    pieces: list[str] = []
    response = await generate_streaming(ScriptedModel(["all at once"]), REQUEST, pieces.append)
    assert pieces == ["all at once"] and response.text == "all at once"


def roll_die(sides: int) -> int:
    """Roll a die.

    Args:
        sides: The number of sides.
    """
    return 4


async def test_the_agent_streams_its_answer_but_not_its_written_tool_calls(server: FakeServer) -> None:
    call = json.dumps({"tool_calls": [{"name": "roll_die", "arguments": {"sides": 6}}]})
    server.steps = [Step(chunks=("  ", call[:5], call[5:])), Step(chunks=("You rolled", " a 4."))]
    llm = model(server.base_url)
    session = BuiltinSession(Agent(name="dice", model=llm, tools=[roll_die]), llm,
                             SessionSpec("dice", "u", "s", {}))
    pieces: list[str] = []
    with streaming_to(pieces.append):
        result = await session.send(Content.from_text("roll a die"))
    assert pieces == ["You rolled", " a 4."]
    assert result.final_response is not None and result.final_response.text() == "You rolled a 4."
    calls = [p.function_call.name for e in result.events if e.content
             for p in e.content.parts or () if p.function_call]
    assert calls == ["roll_die"]
    assert all(b["stream"] for b in server.received) and server.received[0]["tools"]
