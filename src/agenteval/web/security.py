"""The server's gate, in front of every route (an ASGI middleware).

In order: the `Host` header must name an allowed host (by default the loopback names: a page
on another site that re-points its own name at 127.0.0.1 cannot talk to the server); with a
token, every request must carry it (`Authorization: Bearer T`, or the `agenteval_token` cookie
that visiting `/?token=T` sets); and a request that changes state (POST, PUT, PATCH, DELETE)
must come from the server's own page: its `Origin` (or, without one, its `Referer`) must be
this server's origin. Refusals are 403 with a JSON `detail`. Every response says
`nosniff` and may not be framed.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Collection
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "agenteval_token"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_HEADERS = [(b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY"),
            (b"referrer-policy", b"same-origin")]


def _host_name(host: str) -> str:
    """`127.0.0.1:8000` → `127.0.0.1`; `[::1]:8000` → `::1`."""
    if host.startswith("["):
        return host[1:].partition("]")[0].lower()
    return host.rpartition(":")[0].lower() if host.count(":") == 1 else host.lower()


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme and parts.netloc else ""


class Gate:
    """The checks above around `app`. `allowed_hosts` None allows any host name (a server
    bound to every interface, reached by names it cannot know)."""

    def __init__(self, app: ASGIApp, *, token: str | None,
                 allowed_hosts: Collection[str] | None) -> None:
        self.app = app
        self.token = token
        self.allowed = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        problem = self._refusal(scope, headers, host)
        if problem == "set-cookie":
            await self._set_cookie(send)
            return
        if problem is not None:
            await _json(send, 403, {"detail": problem})
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_HEADERS]
            await send(message)

        await self.app(scope, receive, secured)

    def _refusal(self, scope: Scope, headers: dict[str, str], host: str) -> str | None:
        if self.allowed is not None and _host_name(host) not in self.allowed:
            return f"host {host!r} is not this server's (allowed: {', '.join(sorted(self.allowed))})"
        if self.token is not None:
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            if scope["path"] == "/" and query.get("token"):
                return "set-cookie" if self._is_token(query["token"][0]) else "wrong token"
            if not self._authorised(headers):
                return ("this server needs its token: visit /?token=T once, or send "
                        "'Authorization: Bearer T'")
        if scope["method"] in UNSAFE_METHODS:
            own = f"{scope.get('scheme', 'http')}://{host}".lower()
            origin = headers.get("origin") or _origin(headers.get("referer", ""))
            if not origin or origin.lower() != own:
                return (f"{scope['method']} from origin {origin or '(none)'!r} refused: requests that "
                        f"change state must come from this server's page ({own})")
        return None

    def _is_token(self, given: str) -> bool:
        assert self.token is not None
        return hmac.compare_digest(given.encode(), self.token.encode())

    def _authorised(self, headers: dict[str, str]) -> bool:
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer ") and self._is_token(auth[7:].strip()):
            return True
        cookie: SimpleCookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed cookie header carries no token
            return False
        morsel = cookie.get(COOKIE)
        return morsel is not None and self._is_token(morsel.value)

    async def _set_cookie(self, send: Send) -> None:
        """The token was right: keep it in a cookie and go to the page without it in the URL."""
        assert self.token is not None
        cookie = f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/"
        await send({"type": "http.response.start", "status": 303,
                    "headers": [(b"location", b"/"), (b"set-cookie", cookie.encode("latin-1")),
                                (b"content-length", b"0"), *_HEADERS]})
        await send({"type": "http.response.body", "body": b""})


async def _json(send: Send, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(data)).encode()), *_HEADERS]})
    await send({"type": "http.response.body", "body": data})


__all__ = ["COOKIE", "LOOPBACK_HOSTS", "Gate"]
