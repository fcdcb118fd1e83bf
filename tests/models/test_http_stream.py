"""`models.http_stream`: a request in one write, the idle check without anyio's attribute dict."""

import asyncio
import socket
from typing import Any

import httpcore

from agenteval.models import http_stream
from agenteval.models.openai_compat import OpenAICompatModel


def _reply(body: bytes) -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n\r\n" + body)


class _Inner(httpcore.AsyncNetworkStream):
    """Records what it is asked; answers each read with `reply` once per request written."""

    def __init__(self, reply: bytes, fail_writes: bool = False) -> None:
        self.log: list[Any] = []
        self.reply = reply
        self.fail_writes = fail_writes
        self.sock = socket.socket()

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.log.append(("write", buffer, timeout))
        if self.fail_writes:
            raise httpcore.WriteError("peer gone")

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.log.append(("read", timeout))
        return self.reply

    async def aclose(self) -> None:
        self.sock.close()

    def get_extra_info(self, info: str) -> Any:
        self.log.append(("info", info))
        return self.sock if info == "socket" else None


class _InnerBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, stream: _Inner) -> None:
        self.stream = stream

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None, socket_options: Any = None) -> Any:
        return self.stream


def test_a_clients_request_goes_out_in_one_write() -> None:
    # httpcore writes a request's head and body apart: two sends and two event-loop turns a call.
    model = OpenAICompatModel(model="m", base_url="http://127.0.0.1:9/v1", max_attempts=1)
    inner = _Inner(_reply(b'{"choices": [{"message": {"role": "assistant", "content": "hi"}}]}'))

    async def call() -> Any:
        with model._loop_clients().lease() as client:
            pool = client._transport._pool
            assert isinstance(pool._network_backend, http_stream._Backend)  # fails before
            pool._network_backend._inner = _InnerBackend(inner)
            return await client.post(model._url, json={"hello": "world"})

    response = asyncio.run(call())
    assert response.json()["choices"][0]["message"]["content"] == "hi"
    writes = [e for e in inner.log if e[0] == "write"]
    assert len(writes) == 1
    head, _, body = writes[0][1].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /v1/chat/completions HTTP/1.1") and body == b'{"hello":"world"}'
    assert inner.log.index(writes[0]) < inner.log.index(next(e for e in inner.log if e[0] == "read"))


def _stream(inner: _Inner) -> Any:
    return asyncio.run(http_stream._Backend(_InnerBackend(inner)).connect_tcp("h", 1))


def test_a_head_alone_is_sent_before_the_read_with_its_own_timeout() -> None:
    inner = _Inner(b"reply")
    stream = _stream(inner)

    async def go() -> bytes:
        await stream.write(b"GET / HTTP/1.1\r\n\r\n", timeout=3.0)
        assert not [e for e in inner.log if e[0] == "write"]  # held
        return await stream.read(100, timeout=7.0)

    assert asyncio.run(go()) == b"reply"
    assert [e for e in inner.log if e[0] != "info"] == [
        ("write", b"GET / HTTP/1.1\r\n\r\n", 3.0), ("read", 7.0)]


def test_a_failed_held_write_is_left_to_the_read_as_httpcore_does() -> None:
    inner = _Inner(b"HTTP/1.1 413 ...", fail_writes=True)
    stream = _stream(inner)

    async def go() -> bytes:
        await stream.write(b"HEAD", timeout=1.0)
        return await stream.read(100)

    assert asyncio.run(go()) == b"HTTP/1.1 413 ..."


def test_only_the_first_small_write_after_a_read_is_held() -> None:
    inner = _Inner(b"r")
    stream = _stream(inner)
    big = b"x" * (http_stream.HOLD_MAX + 1)

    async def go() -> None:
        await stream.write(big)  # too large to hold: sent at once
        await stream.write(b"a")
        await stream.write(b"b")
        await stream.read(10)
        await stream.write(b"head")  # held again after a read
        await stream.write(b"body")

    asyncio.run(go())
    assert [e[1] for e in inner.log if e[0] == "write"] == [big, b"a", b"b", b"headbody"]


def test_the_idle_check_polls_the_socket_looked_up_once() -> None:
    inner = _Inner(b"")
    stream = _stream(inner)
    a, b = socket.socketpair()
    inner.sock = a
    stream._socket = a
    try:
        assert stream.get_extra_info("is_readable") is False
        b.send(b"!")
        assert stream.get_extra_info("is_readable") is True
        assert ("info", "is_readable") not in inner.log  # (anyio's dict of lambdas, before)
        assert stream.get_extra_info("server_addr") is None and ("info", "server_addr") in inner.log
    finally:
        a.close()
        b.close()


def test_a_client_is_wrapped_once_and_other_transports_left_alone() -> None:
    import httpx
    client = httpx.AsyncClient()
    http_stream.faster_streams(client)
    http_stream.faster_streams(client)
    backend = client._transport._pool._network_backend
    assert isinstance(backend, http_stream._Backend)
    assert not isinstance(backend._inner, http_stream._Backend)
    mocked = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(200)))
    http_stream.faster_streams(mocked)  # (no pool: nothing to do)
    assert isinstance(mocked._transport, httpx.MockTransport)


def test_a_read_says_the_loop_waits_on_a_reply(monkeypatch: Any) -> None:
    # The run's deferred work (agenteval.lazy.while_waiting) takes a model's latency.
    said: list[list[Any]] = []
    inner = _Inner(b"reply")
    stream = _stream(inner)
    monkeypatch.setattr(http_stream, "waiting", lambda: said.append(list(inner.log)))

    async def go() -> bytes:
        await stream.write(b"GET / HTTP/1.1\r\n\r\n", timeout=3.0)
        return await stream.read(100)

    assert asyncio.run(go()) == b"reply"
    assert len(said) == 1 and ("write", b"GET / HTTP/1.1\r\n\r\n", 3.0) in said[0]  # after the send
    assert ("read", None) not in said[0]
