"""One small async LLM interface, used by agents, judges and user simulators alike.

A backend turns a `ModelRequest` (chat messages, optional tool declarations, optional
constrained output, sampling settings, a number of samples) into a `ModelResponse` with one
`Generation` per sample and the token usage of the call.

Streaming is a hook, not a second method: whoever wants a reply as it is generated calls
`generate` inside `streaming_to(on_chunk)`. A backend that can stream (the embedded model,
OpenAI-compatible servers) then hands each piece of a one-sample request's text to `on_chunk`
while it generates, and returns the same `ModelResponse` as without the hook; wrappers
(limits, rates) pass it through untouched, because it travels with the calling context.
`generate_streaming` gives the whole text as one chunk for a backend that streams nothing.
Cancelling the call stops the generation (the HTTP stream is closed; the embedded engine is
told to stop at its next token).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from agenteval.errors import AgentEvalError

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call the model asked for."""

    name: str
    args: dict[str, Any]
    id: str | None = None


@dataclass(frozen=True)
class Message:
    """A chat message. `tool_calls` on assistant messages; `tool_call_id`/`name` on tool ones."""

    role: Role
    content: str
    tool_calls: tuple[ToolCallRequest, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class ToolSpec:
    """A tool declaration: name, description and a JSON schema of its parameters."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ModelRequest:
    """What to generate.

    `json_schema` or `grammar` (GBNF) constrain the output where the backend supports it;
    `n` asks for that many independent samples of the same prompt; `logprobs` > 0 asks for the
    log-probability of each generated token and of that many most likely alternatives at each
    position, where the backend gives them (the generations' `logprobs` are None otherwise).
    """

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    json_schema: dict[str, Any] | None = None
    grammar: str | None = None
    temperature: float = 0.0
    seed: int | None = None
    n: int = 1
    max_tokens: int = 512
    stop: tuple[str, ...] = ()
    logprobs: int = 0


@dataclass(frozen=True)
class Usage:
    """Token counts of one call (summed over samples)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens,
                     self.completion_tokens + other.completion_tokens,
                     self.cached_tokens + other.cached_tokens)


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token with its log-probability and the most likely alternatives at its
    position (token text, log-probability), as the backend reported them."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Generation:
    """One sample: its text, any tool calls the backend parsed out, and its tokens'
    log-probabilities when they were asked for and given."""

    text: str
    tool_calls: tuple[ToolCallRequest, ...] = ()
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None


@dataclass(frozen=True)
class ModelResponse:
    """All samples of one request, with usage and the model's own name for itself."""

    generations: tuple[Generation, ...]
    usage: Usage = field(default_factory=Usage)
    model: str = ""

    @property
    def text(self) -> str:
        """The first sample's text."""
        return self.generations[0].text if self.generations else ""


class ModelError(AgentEvalError):
    """A model call failed for good (bad request, refused, unparsable reply)."""


class TransientModelError(ModelError):
    """A model call failed in a way worth retrying (timeout, 429, 5xx, connection reset)."""


class ModelUnavailable(ModelError):
    """The backend cannot be used here (missing extra, missing key); the message says how to fix it."""


@runtime_checkable
class LLM(Protocol):
    """An async chat model."""

    @property
    def name(self) -> str:
        """The model string that selects this model (see `models.resolve`)."""
        ...

    async def generate(self, request: ModelRequest) -> ModelResponse:
        """Generates `request.n` samples; raises ModelError subclasses on failure."""
        ...


OnChunk = Callable[[str], None]
"""Told each piece of a reply's text as it is generated, in order, in the caller's event loop."""

_ON_CHUNK: ContextVar[OnChunk | None] = ContextVar("agenteval_on_chunk", default=None)


@contextmanager
def streaming_to(on_chunk: OnChunk | None) -> Iterator[None]:
    """Model calls made inside (in this context) stream their reply's text to `on_chunk`
    where the backend can; None turns streaming off (e.g. for calls nested in a streamed one)."""
    token = _ON_CHUNK.set(on_chunk)
    try:
        yield
    finally:
        _ON_CHUNK.reset(token)


def chunk_listener() -> OnChunk | None:
    """Where model calls made now stream their text (None: nowhere)."""
    return _ON_CHUNK.get()


def chunk_sink(request: ModelRequest) -> OnChunk | None:
    """For a backend: where to stream `request`'s reply, or None (nobody listens, or the
    request asks for several samples, which are not streamed)."""
    return _ON_CHUNK.get() if request.n == 1 else None


async def generate_streaming(llm: LLM, request: ModelRequest, on_chunk: OnChunk) -> ModelResponse:
    """`llm.generate(request)`, its text streamed to `on_chunk`: piece by piece where the
    backend streams, else whole, once, when the reply is in (nothing for an empty reply)."""
    streamed = False

    def heard(text: str) -> None:
        nonlocal streamed
        streamed = True
        on_chunk(text)

    with streaming_to(heard):
        response = await llm.generate(request)
    if not streamed and response.text:
        on_chunk(response.text)
    return response
