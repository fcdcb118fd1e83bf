"""An endpoint's HTTP clients in one event loop, each holding a few of its calls in flight.

httpcore 1.0's connection pool looks at every connection it holds on each request and on each
release (its expiry check polls every idle socket), so one client's CPU per call grows with the
calls in flight. At 32 in flight on a 200 ms stub, 600 calls spent about a quarter of the run's
CPU there (bench/README.md, session 30). A `Clients` hands each call the first client with
fewer than `PER_CLIENT` calls in flight, and makes another when none has: one call at a time
always uses the first client (its connection kept alive as before), and a pool never holds many
more connections than `PER_CLIENT`.
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from agenteval.models.http_lib import httpx  # (without its command-line client: http_lib)

PER_CLIENT = 4
"""Calls in flight per client before the next client is used."""


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS context of every https client (httpx's default: its CA bundle, `SSL_CERT_FILE`,
    `SSL_CERT_DIR`), made once per process: loading the CA bundle costs about 50 ms."""
    return httpx.create_ssl_context()


class Clients:
    """Clients made by `make` as the calls in flight need them (see the module)."""

    def __init__(self, make: Callable[[], httpx.AsyncClient]) -> None:
        self._make = make
        self.clients: list[httpx.AsyncClient] = []
        self._busy: list[int] = []

    @contextmanager
    def lease(self) -> Iterator[httpx.AsyncClient]:
        """A client for one call, counted as busy until the block ends."""
        busy = self._busy
        i = next((k for k, n in enumerate(busy) if n < PER_CLIENT), len(busy))
        if i == len(busy):
            self.clients.append(self._make())
            busy.append(0)
        client = self.clients[i]
        if client.is_closed:  # (closed by its owner: made again)
            client = self.clients[i] = self._make()
        busy[i] += 1
        try:
            yield client
        finally:
            busy[i] -= 1


__all__ = ["PER_CLIENT", "Clients", "tls_context"]
