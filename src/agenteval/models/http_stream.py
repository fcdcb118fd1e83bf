"""httpcore's network streams with two per-call costs taken off (bench/README.md, session 37).

1. **A request goes out in one write.** httpcore writes a request's head and then its body, two
   sends (each an event-loop turn, anyio's timeout scope and, on a local endpoint, the receiving
   end's TCP work done in this process). A stream here holds the head, the first write after it
   was connected or last read, and sends it with the next write (the body) or, for a request
   without a body, before its next read. Nothing is held across a read, so what was written
   always reaches the server before a reply is awaited; a held head's send fails as httpcore
   would see it fail alone: in the body's write, or, before a read, ignored as httpcore ignores
   a failed request write, the read then reporting what the server did.
2. **"Is this idle connection readable?"** httpcore asks this of every idle connection of a pool
   on each request and release (its keep-alive check); anyio answers by building a dict of its
   socket's attributes each time (a `getpeername` system call among them). The socket is looked
   up once per stream here and polled as before.

`faster_streams(client)` puts this under an httpx client's own connection pool.
"""

from __future__ import annotations

import contextlib
import ssl
from typing import Any

from agenteval.lazy import waiting
from agenteval.models.http_lib import httpcore, httpx, is_socket_readable  # (see http_lib)

HOLD_MAX = 16_384
"""The largest head held for the next write (bytes); a larger first write is sent at once."""


class _Stream(httpcore.AsyncNetworkStream):
    """A stream of `inner`'s (see the module)."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._socket = inner.get_extra_info("socket")
        self._held = b""
        self._held_timeout: float | None = None
        self._fresh = True  # nothing written since the connect or the last read

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        if self._fresh and len(buffer) <= HOLD_MAX:
            self._fresh = False
            self._held, self._held_timeout = buffer, timeout
            return
        self._fresh = False
        if self._held:
            buffer, self._held = self._held + buffer, b""
        await self._inner.write(buffer, timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._fresh = True
        if self._held:
            held, self._held = self._held, b""
            # As httpcore treats a failed request write: the read then says what happened.
            with contextlib.suppress(httpcore.WriteError):
                await self._inner.write(held, self._held_timeout)
        waiting()  # a request is out: the run's deferred work may take its latency
        return await self._inner.read(max_bytes, timeout)

    async def aclose(self) -> None:
        self._held = b""
        await self._inner.aclose()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        return _Stream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable" and self._socket is not None:
            return is_socket_readable(self._socket)
        return self._inner.get_extra_info(info)


class _Backend(httpcore.AsyncNetworkBackend):
    """`inner`'s connections, each as a `_Stream`."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend) -> None:
        self._inner = inner

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        return _Stream(await self._inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options))

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        return _Stream(await self._inner.connect_unix_socket(
            path, timeout=timeout, socket_options=socket_options))

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def faster_streams(client: httpx.AsyncClient) -> None:
    """Puts the connection pool of `client`'s transport (httpx's own, not a proxy's) on streams
    of this module, once; a client whose transport has no such pool is left as it is."""
    pool = getattr(getattr(client, "_transport", None), "_pool", None)
    if type(pool) is httpcore.AsyncConnectionPool and not isinstance(pool._network_backend, _Backend):
        pool._network_backend = _Backend(pool._network_backend)


__all__ = ["HOLD_MAX", "faster_streams"]
