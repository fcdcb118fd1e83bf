"""`models.http_clients`: an endpoint's clients, each with a few calls in flight."""

from __future__ import annotations

import re
import ssl
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

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


def test_sniffio_is_declared_and_httpcore_finds_it_without_a_search() -> None:
    # httpcore 1.0 runs `import sniffio` on every lock, event and cancellation shield it sets up
    # (several an HTTP call); when sniffio is not installed, each of those imports searches every
    # sys.path entry again (0.13 ms: an eighth of the event loop's CPU at 32 calls in flight,
    # bench/README.md session 34). A fresh install gets it only as a declared dependency.
    tomllib = pytest.importorskip("tomllib")
    with open(Path(__file__).parents[2] / "pyproject.toml", "rb") as f:
        deps = tomllib.load(f)["project"]["dependencies"]
    assert any(re.match(r"sniffio\b", d) for d in deps)
    code = ("import asyncio, importlib.abc, sys\n"
            "from httpcore._synchronization import current_async_library\n"
            "asked = []\n"
            "class Watch(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        asked.append(name)\n"
            "async def calls():\n"
            "    current_async_library()\n"
            "    sys.meta_path.insert(0, Watch())\n"
            "    for _ in range(3):\n"
            "        current_async_library()\n"
            "asyncio.run(calls())\n"
            "print(asked)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
