"""Model name strings, as used in configs and CLI flags.

Scheme:

- `local` (also `local:qwen2.5-coder-1.5b`): the embedded model, Qwen2.5-Coder-1.5B-Instruct
  on llama.cpp in-process; needs `pip install 'agenteval[local]'`, no key.
- `openai:<model>`: https://api.openai.com/v1, key from OPENAI_API_KEY.
- `gemini:<model>`: https://generativelanguage.googleapis.com/v1beta/openai/, key from
  GEMINI_API_KEY or GOOGLE_API_KEY.
- `ollama:<model>`: http://localhost:11434/v1, no key.
- `openai-compat:<model>@<base_url>`: any OpenAI-compatible server, key from
  AGENTEVAL_API_KEY if set (none otherwise).
- a bare `gemini-...` name such as `gemini-2.5-flash` (ADK's default judge model) means
  `gemini:gemini-2.5-flash`.

`resolve_model(name, env)` takes the environment from the caller (the CLI passes os.environ;
library code never reads it). It is for code that uses a model directly: resolving the same name
(with the same key and cache dir) again in a process returns the same instance, so its
concurrency limit is shared process-wide. Every model comes wrapped in a `LimitedLLM`;
`max_concurrency` defaults to the local model's slot count, or 4 for HTTP backends, and when
given for an already resolved name it changes that shared limit. A run does not use this: it
gets its models from its own `ModelPool` (`agenteval.models.pool`), whose limits are its own.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agenteval.models.base import ModelUnavailable
from agenteval.models.limits import LimitedLLM
from agenteval.schema.endpoint import EndpointOptions

__all__ = ["DEFAULT_HTTP_CONCURRENCY", "ModelSpec", "api_key", "build_model", "parse_model_name",
           "resolve_model"]

DEFAULT_HTTP_CONCURRENCY = 4
LOCAL_ALIASES = ("local", "local:qwen2.5-coder-1.5b")
OPENAI_URL = "https://api.openai.com/v1"
GEMINI_URL = "https://generativelanguage.googleapis.com/v1beta/openai/"
OLLAMA_URL = "http://localhost:11434/v1"
_SCHEMES = "local, openai:<model>, gemini:<model>, ollama:<model>, openai-compat:<model>@<base_url>"


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model string: canonical name, backend, model id, URL and the key variables
    to look in (in order; empty when no key is used)."""

    name: str
    backend: str  # "local" or "http"
    model: str = ""
    base_url: str = ""
    key_vars: tuple[str, ...] = ()
    key_required: bool = False


def parse_model_name(name: str) -> ModelSpec:
    """Parses `name` (see the module docstring); ModelUnavailable if it is not understood."""
    text = name.strip()
    if text in LOCAL_ALIASES:
        return ModelSpec("local", "local")
    scheme, sep, rest = text.partition(":")
    if not sep and text.startswith("gemini-") and text != "gemini-":  # (a version after it)
        scheme, rest = "gemini", text
    if scheme == "openai" and rest:
        return ModelSpec(f"openai:{rest}", "http", rest, OPENAI_URL, ("OPENAI_API_KEY",), True)
    if scheme == "gemini" and rest:
        keys = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
        return ModelSpec(f"gemini:{rest}", "http", rest, GEMINI_URL, keys, True)
    if scheme == "ollama" and rest:
        return ModelSpec(f"ollama:{rest}", "http", rest, OLLAMA_URL)
    if scheme == "openai-compat":
        model, _, url = rest.partition("@")
        if not model or not url.startswith(("http://", "https://")):
            raise ModelUnavailable(
                f"model {name!r}: write openai-compat:<model>@<base_url>, "
                "e.g. openai-compat:qwen2.5@http://localhost:8000/v1"
            )
        return ModelSpec(f"openai-compat:{model}@{url}", "http", model, url, ("AGENTEVAL_API_KEY",))
    raise ModelUnavailable(f"unknown model {name!r}; use one of: {_SCHEMES}, or gemini-<version>")


_REGISTRY: dict[tuple[str, str | None, str | None], LimitedLLM] = {}
_REGISTRY_LOCK = threading.Lock()


def resolve_model(
    name: str,
    env: Mapping[str, str],
    *,
    max_concurrency: int | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> LimitedLLM:
    """The model `name` selects, shared process-wide; ModelUnavailable if it cannot be used
    here (unknown scheme, missing key, missing local extra), naming what to set or install.

    `cache_dir` is where the local model's file is assembled (default
    `~/.cache/agenteval/models`); HTTP backends ignore it.
    """
    spec = parse_model_name(name)
    key_value = api_key(spec, env)
    directory = str(Path(cache_dir).expanduser()) if cache_dir is not None else None
    key = (spec.name, key_value, directory if spec.backend == "local" else None)
    with _REGISTRY_LOCK:
        model = _REGISTRY.get(key)
        if model is None:
            model = _REGISTRY[key] = build_model(spec, key_value, directory, max_concurrency)
        elif max_concurrency is not None:
            model.max_concurrency = max_concurrency
    return model


def api_key(spec: ModelSpec, env: Mapping[str, str]) -> str | None:
    """The API key for `spec` from `env`; ModelUnavailable when a required key is missing."""
    value = next((env[v] for v in spec.key_vars if env.get(v)), None)
    if spec.key_required and value is None:
        raise ModelUnavailable(f"model {spec.name!r} needs an API key: set {' or '.join(spec.key_vars)}")
    return value


def check_local_available(cache_dir: str | os.PathLike[str] | None = None) -> None:
    """`models.local.check_local_available`, imported when a run asks for the embedded model:
    its module (asyncio, urllib, its slots) is not for every command that parses a model name."""
    from agenteval.models.local import check_local_available as check

    check(cache_dir)


def build_model(
    spec: ModelSpec, key: str | None, cache_dir: str | None, max_concurrency: int | None,
    options: EndpointOptions | None = None,
) -> LimitedLLM:
    """A new model for `spec` behind its own limit (default: the local model's slots, or 4
    for HTTP), with the endpoint's timeout, attempts and give-up rule (`options`, default
    `EndpointOptions()`). The local model's engine is shared by every instance in the process."""
    options = options or EndpointOptions()
    if spec.backend == "local":
        from agenteval.models.local import LocalModel

        check_local_available(cache_dir)
        local = LocalModel(name=spec.name, cache_dir=cache_dir,
                           deterministic=options.deterministic)
        limit = 1 if local.deterministic else max_concurrency or local.slots  # one call at a time
        return LimitedLLM(local, limit, options.give_up_after, options.requests_per_minute,
                          options.tokens_per_minute)
    from agenteval.models.openai_compat import OpenAICompatModel  # httpx: only an HTTP model needs it

    http = OpenAICompatModel(
        model=spec.model,
        base_url=spec.base_url,
        api_key=key,
        name=spec.name,
        timeout=options.timeout,
        max_attempts=options.attempts,
        # OpenAI's newer models refuse `max_tokens`; all of its chat models take this one.
        max_tokens_field="max_completion_tokens" if spec.base_url == OPENAI_URL else "max_tokens",
    )
    return LimitedLLM(http, max_concurrency or DEFAULT_HTTP_CONCURRENCY, options.give_up_after,
                      options.requests_per_minute, options.tokens_per_minute)
