"""Any OpenAI-compatible chat-completions endpoint over HTTP.

Works with vLLM, Ollama, llama.cpp's server, OpenAI and Gemini's OpenAI-compatible endpoint.
Transient failures (connect errors, timeouts, dropped connections, HTTP 408/429/500/502/503/504)
are retried up to `max_attempts` calls in all, waiting `Retry-After` when the server sends it
and otherwise an exponential backoff with jitter; other 4xx replies raise `ModelError` with
the server's message. Servers that return fewer than `n` choices (some ignore `n`) are asked
again for the rest, with `seed + k` for the k-th sample when a seed is set; a server that
rejects `n > 1` with a 400/422 is asked for one sample per call from then on. Likewise a server
that rejects `logprobs` (a 400/422 that a request without them does not get) is asked without
them from then on; the generations then carry no log-probabilities, as from a server that
ignores the parameter.

Streaming (a one-sample call inside `base.streaming_to`): the request is sent with
`stream: true` and the reply's text handed on as its server-sent chunks arrive; the response is
the same as without streaming (`openai_wire.ChunkAssembler`). A failure before the first chunk
is retried as above; one after it is not (its text was handed on already). A server that
rejects `stream` (400/422) is asked without it from then on, and its text is handed on whole;
one that answers a streamed request with plain JSON is read as such. Cancelling the call closes
the connection, which stops a server that watches for it (llama.cpp's and vLLM's do).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import re
import time
import weakref
from collections.abc import Mapping
from typing import Any

import anyio

from agenteval.models.base import (
    Generation,
    ModelError,
    ModelRequest,
    ModelResponse,
    OnChunk,
    TransientModelError,
    Usage,
    chunk_sink,
)
from agenteval.models.http_clients import Clients, tls_context
from agenteval.models.http_lib import httpx  # (without its command-line client: http_lib)
from agenteval.models.http_stream import faster_streams
from agenteval.models.openai_wire import (
    ChunkAssembler,
    build_body,
    parse_choice,
    parse_usage,
    server_error_message,
)

__all__ = ["TRANSIENT_STATUS", "OpenAICompatModel"]

log = logging.getLogger(__name__)

TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_ClientsByLoop = weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Clients]
_TRANSIENT_EXC = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


class _Rejected(ModelError):
    """HTTP 400/422: the server refused the request as malformed."""


class OpenAICompatModel:
    """An `LLM` served by an OpenAI-compatible `/chat/completions` endpoint."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str | None = None,
        name: str | None = None,
        timeout: float = 120.0,
        max_attempts: int = 5,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        max_retry_after: float = 120.0,
        max_tokens_field: str = "max_tokens",
        samples_per_call: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """`timeout` bounds each HTTP call (s); `max_attempts` counts the first call;
        `max_tokens_field` is `max_completion_tokens` for OpenAI's newer models;
        `samples_per_call` caps `n` per call (None: ask for all at once); `extra_body`
        is merged into every request body (vendor-specific parameters)."""
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._url_text = f"{self.base_url}/chat/completions"
        # Parsed once: httpx parses a URL given as text on every request (87 K instructions a call).
        # One httpx refuses stays text, so that the call fails as it always did.
        self._url: httpx.URL | str
        try:
            self._url = httpx.URL(self._url_text)
        except httpx.InvalidURL:
            self._url = self._url_text
        self._name = name or f"openai-compat:{model}@{base_url}"
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.max_retry_after = max_retry_after
        self.max_tokens_field = max_tokens_field
        self.samples_per_call = samples_per_call
        self.extra_body = dict(extra_body or {})
        self.logprobs_refused = False  # set once the server rejected a request for them
        self.stream_refused = False  # set once the server rejected `stream: true`
        self._transport = transport
        # Clients per asyncio loop: pooled connections cannot cross event loops, and a resolved
        # model is shared process-wide (e.g. across tests that each run a loop).
        self._clients: _ClientsByLoop = weakref.WeakKeyDictionary()
        self._other_clients: Clients | None = None

    @property
    def name(self) -> str:
        return self._name

    async def generate(self, request: ModelRequest) -> ModelResponse:
        """Asks for `request.n` samples in one call; when the server gives fewer (it ignores or
        refuses `n`), the missing ones are asked for concurrently, one per call, each with its
        own seed, rather than one after another. Streamed when asked (see the module)."""
        on_chunk = chunk_sink(request)
        if on_chunk is not None and not self.stream_refused:
            try:
                reply = await self._ask(request, 1, request.seed, on_chunk)
            except _Rejected:
                # Refused with `stream`: refused without it too, or the server cannot stream.
                reply = await self._ask(request, 1, request.seed)
                log.info("%s refused stream: true; asking without it", self.name)
                self.stream_refused = True
                on_chunk(parse_choice(reply["choices"][0], request).text)
            return ModelResponse((parse_choice(reply["choices"][0], request),), parse_usage(reply),
                                 str(reply.get("model") or self.model))
        generations: list[Generation] = []
        usage = Usage()
        model = self.model
        first = request.n if self.samples_per_call is None else min(request.n, self.samples_per_call)
        try:
            replies = [await self._ask(request, first, request.seed)]
        except _Rejected:
            if first == 1:
                raise
            # Some servers cap or refuse `n` (llama.cpp: n <= its slots); ask one at a time.
            log.info("%s refused n=%d; asking for one sample per call", self.name, first)
            self.samples_per_call = 1
            replies = [await self._ask(request, 1, request.seed)]
        got = len(replies[0].get("choices", []))
        missing = request.n - min(got, first)
        if missing > 0:
            if got < first:  # asked for n, got fewer: the server ignores `n`
                self.samples_per_call = 1
            done = min(got, first)
            seeds = [None if request.seed is None else request.seed + done + i for i in range(missing)]
            extra: list[dict[str, Any] | None] = [None] * missing

            async def one(i: int) -> None:
                extra[i] = await self._ask(request, 1, seeds[i])

            async with anyio.create_task_group() as tg:
                for i in range(missing):
                    tg.start_soon(one, i)
            replies += [r for r in extra if r is not None]
        for reply, want in zip(replies, [first] + [1] * (len(replies) - 1), strict=True):
            generations.extend(parse_choice(c, request) for c in reply["choices"][:want])
            usage += parse_usage(reply)
            model = str(reply.get("model") or model)
        return ModelResponse(tuple(generations[: request.n]), usage, model)

    async def _ask(self, request: ModelRequest, n: int, seed: int | None,
                   on_chunk: OnChunk | None = None) -> dict[str, Any]:
        """One call for `n` samples (streamed to `on_chunk` when given: then `n` is 1); ModelError
        when the reply has no choices."""
        body = build_body(request, model=self.model, n=n, seed=seed, max_tokens_field=self.max_tokens_field)
        if on_chunk is not None:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        body.update(self.extra_body)
        if self.logprobs_refused:
            body.pop("logprobs", None)
            body.pop("top_logprobs", None)
        try:
            reply = await self._post(body, on_chunk)
        except _Rejected:
            if "logprobs" not in body:
                raise
            body.pop("logprobs")
            body.pop("top_logprobs", None)
            reply = await self._post(body, on_chunk)  # still rejected: not for the log-probabilities
            log.info("%s refused logprobs; asking without them", self.name)
            self.logprobs_refused = True
        choices = reply.get("choices")
        if not isinstance(choices, list) or not choices:
            raise ModelError(f"the reply from {self.base_url} has no choices: {str(reply)[:300]}")
        return reply

    async def aclose(self) -> None:
        """Closes the HTTP clients (optional; they are also closed with their loop)."""
        groups = [*self._clients.values(), *([self._other_clients] if self._other_clients else [])]
        self._clients.clear()
        self._other_clients = None
        for client in [c for group in groups for c in group.clients]:
            await client.aclose()

    async def _post(self, body: dict[str, Any], on_chunk: OnChunk | None = None) -> dict[str, Any]:
        """The reply's JSON (assembled from its chunks when streamed to `on_chunk`); ModelError
        saying what happened (status and server message, timeout, unreachable host, dropped
        connection), after `max_attempts` tries for transient ones (none once a chunk was
        handed on)."""
        url = self._url_text
        for attempt in range(1, self.max_attempts + 1):
            retry_after: float | None = None
            assembler = ChunkAssembler(on_chunk) if on_chunk is not None else None
            try:
                with self._loop_clients().lease() as client:
                    if assembler is None:
                        response = await client.post(self._url, json=body, headers=self._headers)
                    else:
                        async with client.stream("POST", self._url, json=body,
                                                 headers=self._headers) as response:
                            if response.is_success:
                                return await self._events(response, assembler)
                            await response.aread()
            except _TRANSIENT_EXC as exc:
                error: ModelError = TransientModelError(_transport_error(exc, url, self.timeout))
                if assembler is not None and assembler.chunks:
                    raise error from exc
            except httpx.HTTPError as exc:
                raise ModelError(_transport_error(exc, url, self.timeout)) from exc
            else:
                if response.is_success:
                    return self._json(response)
                message = f"HTTP {response.status_code} from {url}: {_error_text(response)}"
                if response.status_code in (400, 422):
                    raise _Rejected(message)
                if response.status_code not in TRANSIENT_STATUS:
                    raise ModelError(message)
                error = TransientModelError(message)
                retry_after = _retry_after_seconds(response.headers.get("retry-after"))
            if attempt == self.max_attempts:
                if self.max_attempts > 1:
                    raise type(error)(f"{error} (after {self.max_attempts} attempts)")
                raise error
            delay = self._delay(attempt, retry_after)
            log.info("%s; retry %d/%d in %.2f s", error, attempt, self.max_attempts - 1, delay)
            await anyio.sleep(delay)
        raise AssertionError("unreachable")  # the loop always returns or raises

    async def _events(self, response: httpx.Response, assembler: ChunkAssembler) -> dict[str, Any]:
        """The reply of a streamed response, its `data:` lines fed to `assembler` as they come;
        a server that answered with plain JSON instead is read as such, its text handed on whole."""
        if "text/event-stream" not in response.headers.get("content-type", ""):
            await response.aread()
            reply = self._json(response)
            choices = reply.get("choices")
            if isinstance(choices, list) and choices and isinstance(choices[0], dict):
                text = (choices[0].get("message") or {}).get("content")
                if isinstance(text, str) and text:
                    assembler.on_chunk(text)
            return reply
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue  # comments, event names, blank separators
            data = line[5:].strip()
            if data == "[DONE]":
                break
            try:
                chunk = json.loads(data)
            except ValueError as exc:
                raise ModelError(f"a chunk of the streamed reply from {response.url} is not JSON: "
                                 f"{data[:200]!r}") from exc
            assembler.add(chunk)
        return assembler.reply()

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        # "Equal jitter": half the exponential step, plus a random part of the other half.
        step = min(self.backoff_max, self.backoff_base * 2.0 ** (attempt - 1))
        return step / 2 + random.uniform(0, step / 2)

    def _json(self, response: httpx.Response) -> dict[str, Any]:
        try:
            payload = response.json()
        except ValueError as exc:
            raise ModelError(f"the reply from {response.url} (HTTP {response.status_code}) is not "
                             f"JSON: {_body_text(response)!r}") from exc
        if not isinstance(payload, dict):
            raise ModelError(f"unexpected reply from {response.url}: {str(payload)[:300]}")
        if payload.get("error"):  # some servers report errors with status 200
            raise ModelError(f"{response.url} answered HTTP {response.status_code} with an error: "
                             f"{server_error_message(payload)}")
        return payload

    def _loop_clients(self) -> Clients:
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # not asyncio (trio)
            loop = None
        clients = self._clients.get(loop) if loop is not None else self._other_clients
        if clients is None:
            clients = Clients(self._new_client)
            if loop is not None:
                self._clients[loop] = clients
            else:
                self._other_clients = clients
        return clients

    def _new_client(self) -> httpx.AsyncClient:
        client = httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
            transport=self._transport,
            # (No TLS context at all where no call can use one.)
            verify=tls_context() if self.base_url.startswith("https://") else False,
        )
        client._cookies = _Cookies()  # (the `cookies` setter would copy it into a plain jar)
        if self._transport is None:
            faster_streams(client)
        return client


class _Cookies(httpx.Cookies):
    """A client's cookies, taken from a response only when it sets some: httpx hands every
    response, with its request, to `http.cookiejar` in urllib's shapes (about 0.2 M instructions
    a call), and the jar takes nothing from a response without a `Set-Cookie` or `Set-Cookie2`
    header (bench/README.md, session 35)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        headers = response.headers
        if "set-cookie" in headers or "set-cookie2" in headers:
            super().extract_cookies(response)


def _error_text(response: httpx.Response) -> str:
    """The server's own error message: from a JSON error body, else the body's text."""
    try:
        return server_error_message(response.json())[:500]
    except ValueError:
        return _body_text(response) or response.reason_phrase


def _body_text(response: httpx.Response, limit: int = 300) -> str:
    """A body as readable text: an HTML page by its title (or its text without tags)."""
    text = response.text
    if "<html" in text[:500].lower() or "html" in response.headers.get("content-type", ""):
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.I | re.S)
        text = title.group(1) if title else re.sub(r"<[^>]+>", " ", text)
    return " ".join(text.split())[:limit]


def _transport_error(exc: httpx.HTTPError, url: str, timeout: float) -> str:
    """What went wrong on the way to `url`, in words."""
    if isinstance(exc, httpx.TimeoutException):
        return f"no reply from {url} within {timeout:g} s ({type(exc).__name__})"
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect to {url}: {exc or type(exc).__name__}"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"the connection to {url} was dropped: {exc or type(exc).__name__}"
    return f"{type(exc).__name__} on {url}: {exc}"


def _retry_after_seconds(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date); None if absent/bad."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, float(when.timestamp()) - time.time())
