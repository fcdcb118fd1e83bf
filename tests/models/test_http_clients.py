"""`models.http_clients`: an endpoint's clients, each with a few calls in flight."""

from __future__ import annotations

import ssl
from contextlib import ExitStack

import anyio
import httpx
import pytest

from agenteval.models.http_clients import PER_CLIENT, Clients, tls_context


def _clients() -> Clients:
    return Clients(httpx.AsyncClient)


def test_one_call_at_a_time_always_uses_the_first_client() -> None:
    clients = _clients()
    seen = set()
    for _ in range(10):
        with clients.lease() as client:
            seen.add(id(client))
    assert len(seen) == 1 and len(clients.clients) == 1


def test_a_client_holds_at_most_per_client_calls_and_the_next_is_made_when_needed() -> None:
    clients = _clients()
    with ExitStack() as held:
        leased = [held.enter_context(clients.lease()) for _ in range(2 * PER_CLIENT + 1)]
        assert len(clients.clients) == 3
        for k, client in enumerate(clients.clients):
            assert leased.count(client) == min(PER_CLIENT, 2 * PER_CLIENT + 1 - k * PER_CLIENT)
    # All given back: the first client serves again, and no more are made.
    with clients.lease() as client:
        assert client is clients.clients[0]
    assert len(clients.clients) == 3


def test_a_call_that_fails_gives_its_client_back() -> None:
    clients = _clients()
    with pytest.raises(RuntimeError), clients.lease():
        raise RuntimeError("the call failed")
    with ExitStack() as held:
        for _ in range(PER_CLIENT):
            held.enter_context(clients.lease())
        assert len(clients.clients) == 1


def test_a_closed_client_is_made_again() -> None:
    clients = _clients()
    with clients.lease() as first:
        pass
    anyio.run(first.aclose)
    with clients.lease() as second:
        assert second is not first and not second.is_closed
    assert clients.clients == [second]


def test_the_tls_context_is_made_once() -> None:
    assert isinstance(tls_context(), ssl.SSLContext)
    assert tls_context() is tls_context()
