"""The OpenAI-compatible backend against a real HTTP server on 127.0.0.1 (a thread in the test)."""

from __future__ import annotations

import socket
import time
from typing import Any

import anyio
import pytest
from tests.fake_server import FakeServer, Step, reply

from agenteval.models import (
    Message,
    ModelError,
    ModelRequest,
    OpenAICompatModel,
    ToolCallRequest,
    ToolSpec,
    TransientModelError,
    Usage,
    resolve_model,
)
from agenteval.models import resolve as resolve_module

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(messages=(Message("user", "Is 7 prime?"),), max_tokens=8)


def model(base_url: str, **kwargs: Any) -> OpenAICompatModel:
    kwargs.setdefault("backoff_base", 0.01)
    return OpenAICompatModel(model="m", base_url=base_url, api_key="k", **kwargs)


async def test_retries_a_503_then_succeeds(server: FakeServer) -> None:
    server.steps = [Step(503, {"error": {"message": "overloaded"}}), Step(200, reply("YES"))]
    response = await model(server.base_url).generate(REQUEST)
    assert response.text == "YES"
    assert response.usage == Usage(10, 2, 4)
    assert response.model == "served-model"
    assert len(server.received) == 2
    assert server.paths[0] == "/v1/chat/completions"
    assert server.headers[0]["Authorization"] == "Bearer k"


async def test_honours_retry_after(server: FakeServer) -> None:
    server.steps = [Step(429, {"error": {"message": "slow down"}}, {"Retry-After": "0.4"}), Step()]
    start = time.monotonic()
    assert (await model(server.base_url).generate(REQUEST)).text == "YES"
    assert time.monotonic() - start >= 0.4


async def test_client_errors_raise_with_the_server_message(server: FakeServer) -> None:
    server.steps = [Step(400, {"error": {"message": "bad 'tools' field", "type": "invalid_request"}})]
    with pytest.raises(ModelError, match=r"HTTP 400 from http://127\.0\.0\.1:[0-9]+/v1/chat/completions: "
                       "bad 'tools' field") as info:
        await model(server.base_url).generate(REQUEST)
    assert not isinstance(info.value, TransientModelError)
    assert len(server.received) == 1  # not retried


async def test_gives_up_after_max_attempts(server: FakeServer) -> None:
    server.steps = [Step(502, {"error": {"message": "bad gateway"}})]
    with pytest.raises(TransientModelError, match="HTTP 502"):
        await model(server.base_url, max_attempts=3).generate(REQUEST)
    assert len(server.received) == 3


async def test_timeouts_and_refused_connections_are_transient(server: FakeServer) -> None:
    server.steps = [Step(delay=0.6)]
    with pytest.raises(TransientModelError, match="Timeout"):
        await model(server.base_url, timeout=0.2, max_attempts=2).generate(REQUEST)
    assert len(server.received) == 2
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    with pytest.raises(TransientModelError, match=r"cannot connect to http://127\.0\.0\.1"):
        await model(closed, max_attempts=2).generate(REQUEST)


async def test_error_body_with_status_200(server: FakeServer) -> None:
    server.steps = [Step(200, {"error": {"message": "model not loaded"}})]
    with pytest.raises(ModelError, match="model not loaded"):
        await model(server.base_url).generate(REQUEST)


async def test_request_body_and_tool_calls(server: FakeServer) -> None:
    structured = reply("")
    structured["choices"][0]["message"]["tool_calls"] = [
        {"id": "c9", "type": "function", "function": {"name": "roll_die", "arguments": '{"sides": 20}'}}
    ]
    text_call = reply('```json\n{"name": "roll_die", "arguments": {"sides": 6}}\n```')
    server.steps = [Step(200, structured), Step(200, text_call)]
    schema = {"type": "object", "properties": {"sides": {"type": "integer"}}}
    tool = ToolSpec("roll_die", "Roll a die.", schema)
    request = ModelRequest(
        messages=(Message("user", "Roll a d20."),), tools=(tool,), temperature=0.3, seed=5,
        max_tokens=16, stop=("\n\n",), json_schema={"type": "object"},
    )
    llm = model(server.base_url, max_tokens_field="max_completion_tokens", extra_body={"top_p": 0.9})
    first = await llm.generate(request)
    assert first.generations[0].tool_calls == (ToolCallRequest("roll_die", {"sides": 20}, "c9"),)
    second = await llm.generate(request)  # calls written as text are parsed as a fallback
    assert second.generations[0].tool_calls == (ToolCallRequest("roll_die", {"sides": 6}),)
    body = server.received[0]
    assert body["model"] == "m" and body["seed"] == 5 and body["temperature"] == 0.3
    assert body["max_completion_tokens"] == 16 and "max_tokens" not in body
    assert body["stop"] == ["\n\n"] and body["top_p"] == 0.9 and "n" not in body
    assert body["tools"][0]["function"]["name"] == "roll_die"
    assert body["response_format"]["json_schema"]["schema"] == {"type": "object"}


async def test_tops_up_concurrently_when_the_server_ignores_n(server: FakeServer) -> None:
    server.steps = [Step(200, reply("A")), Step(200, reply("B"), delay=0.3), Step(200, reply("C"), delay=0.3)]
    llm = model(server.base_url)
    response = await llm.generate(ModelRequest(messages=REQUEST.messages, n=3, seed=7, temperature=0.8))
    assert server.peak == 2  # the two missing samples at once, not one after another
    assert sorted(g.text for g in response.generations) == ["A", "B", "C"]
    asked = sorted((b.get("n", 1), b["seed"]) for b in server.received)
    assert asked == [(1, 8), (1, 9), (3, 7)]  # each missing sample its own seed
    assert response.usage == Usage(30, 6, 12)
    assert llm.samples_per_call == 1  # next time it asks one per call from the start


def test_one_instance_serves_several_event_loops(server: FakeServer) -> None:
    # A resolved model is shared process-wide; its pooled connections must not cross loops.
    server.steps = [Step()]
    llm = model(server.base_url)
    for _ in range(2):
        assert anyio.run(llm.generate, REQUEST).text == "YES"


async def test_resolved_openai_compat_name_uses_the_env_key(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resolve_module, "_REGISTRY", {})
    server.steps = [Step()]
    llm = resolve_model(f"openai-compat:judge@{server.base_url}", {"AGENTEVAL_API_KEY": "sekrit"})
    assert (await llm.generate(REQUEST)).text == "YES"
    assert server.headers[0]["Authorization"] == "Bearer sekrit"
    assert server.received[0]["model"] == "judge"


async def test_falls_back_to_one_sample_per_call_when_n_is_refused(server: FakeServer) -> None:
    refused = Step(400, {"error": {"message": "Value must be between 1 <= value <= 2"}})
    server.steps = [refused, Step(200, reply("A")), Step(200, reply("B")), Step(200, reply("C"))]
    llm = model(server.base_url)
    response = await llm.generate(ModelRequest(messages=REQUEST.messages, n=3, temperature=0.8))
    # The single samples are requested concurrently: the server may answer them in any order.
    assert sorted(g.text for g in response.generations) == ["A", "B", "C"]
    assert [b.get("n", 1) for b in server.received] == [3, 1, 1, 1]
    assert llm.samples_per_call == 1


def with_logprobs(text: str, tokens: list[tuple[str, float, list[tuple[str, float]]]]) -> dict[str, Any]:
    """A reply whose choice carries OpenAI-style `logprobs.content` for `tokens`."""
    body = reply(text)
    body["choices"][0]["logprobs"] = {"content": [
        {"token": t, "logprob": lp, "top_logprobs": [{"token": a, "logprob": alp} for a, alp in top]}
        for t, lp, top in tokens]}
    return body


async def test_asks_for_and_reads_log_probabilities(server: FakeServer) -> None:
    server.steps = [Step(200, with_logprobs("yes", [("yes", -0.1, [("yes", -0.1), ("no", -2.4)])]))]
    response = await model(server.base_url).generate(
        ModelRequest(messages=REQUEST.messages, logprobs=5))
    assert server.received[0]["logprobs"] is True and server.received[0]["top_logprobs"] == 5
    (token,) = response.generations[0].logprobs or ()
    assert token.token == "yes" and token.logprob == -0.1 and token.top == (("yes", -0.1), ("no", -2.4))
    plain = await model(server.base_url).generate(REQUEST)  # not asked: neither sent nor read
    assert "logprobs" not in server.received[1] and plain.generations[0].logprobs is None


async def test_a_server_that_refuses_log_probabilities_is_asked_without_them(server: FakeServer) -> None:
    refused = Step(400, {"error": {"message": "logprobs is not supported"}})
    server.steps = [refused, Step(200, reply("yes"))]
    llm = model(server.base_url)
    asking = ModelRequest(messages=REQUEST.messages, logprobs=5)
    first = await llm.generate(asking)
    assert first.text == "yes" and first.generations[0].logprobs is None and llm.logprobs_refused
    await llm.generate(asking)  # from then on, not asked for
    assert ["logprobs" in b for b in server.received] == [True, False, False]
    server.steps = [Step(400, {"error": {"message": "bad model"}})]
    with pytest.raises(ModelError, match="bad model"):  # refused for another reason: still an error
        await model(server.base_url).generate(asking)


async def test_a_cookie_the_server_sets_is_sent_back(server: FakeServer) -> None:
    server.steps = [Step(200, reply("YES"), {"Set-Cookie": "affinity=a1; Path=/"}), Step()]
    m = model(server.base_url)
    await m.generate(REQUEST)
    await m.generate(REQUEST)
    assert "Cookie" not in server.headers[0]
    assert server.headers[1]["Cookie"] == "affinity=a1"


async def test_a_reply_without_cookies_is_not_handed_to_the_cookie_jar(
        server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # httpx wraps each response and its request for `http.cookiejar` (about 0.2 M instructions
    # a call), which takes nothing from a response that sets no cookie.
    import http.cookiejar
    handed: list[object] = []
    monkeypatch.setattr(http.cookiejar.CookieJar, "extract_cookies",
                        lambda self, response, request: handed.append(response))
    server.steps = [Step(), Step()]
    m = model(server.base_url)
    await m.generate(REQUEST)
    await m.generate(REQUEST)
    assert handed == []
