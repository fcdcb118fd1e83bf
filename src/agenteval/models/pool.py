"""The models of one run: each endpoint built once, behind the run's own limits.

A `ModelPool` is handed to a run (agent, judges and user simulator all take their models from
it), so two runs in one process never change each other's limits. Limits are calls in flight
per endpoint, keyed by canonical model name (`parse_model_name(name).name`); an endpoint not
listed gets its backend's default (the embedded model's slots; for HTTP, `default_http`).
The embedded model's engine is shared by the whole process whatever the pool (loading it
twice would cost minutes and gigabytes); a pool only bounds its own calls into it.

The concurrency model: the limit of an endpoint bounds every call in flight to it from the run,
whoever makes it (the agent's turns, LLM judges, the user simulator), because each of them asks
the pool for the endpoint and gets the one `LimitedLLM` holding its slots. `--parallelism`
bounds case runs in flight; an HTTP endpoint without a configured limit gets the parallelism
(at least `DEFAULT_HTTP_CONCURRENCY`), so a judge waiting for a slot never lets more calls reach
the endpoint than the agent alone could make (tests/models/test_endpoint_concurrency.py counts
them on a stub). Executors that run turns in other processes bound the agent's calls there by
giving each worker its share of the limit (`runner.executors.process`) or by one limiter per
endpoint for the whole cluster (`runner.executors.cluster_limits`); the judges' calls, made in
this process, take the same slots: while such an executor runs, the pool's models of those
endpoints hold the slots shared with the workers as well as their own (`share`), so the calls in
flight to an endpoint stay within its limit over every process.

A caller may also hand the pool ready-made models under names of its own choosing (`provided`:
an `LLM` implementation of theirs, or a scripted model in tests); those names are used as they
are, without parsing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path

from agenteval.errors import DataError
from agenteval.models.base import LLM, ModelUnavailable
from agenteval.models.limits import LimitedLLM, Slots
from agenteval.models.resolve import DEFAULT_HTTP_CONCURRENCY, api_key, build_model, parse_model_name
from agenteval.schema.endpoint import EndpointOptions

__all__ = ["ModelPool", "check_limits"]


def _canonical_key(name: str) -> str:
    try:
        return parse_model_name(name).name
    except ModelUnavailable as e:
        raise DataError(None, f"endpoints.{name}", str(e)) from None


def check_limits(limits: Mapping[str, int], known: Mapping[str, object] | None = None) -> dict[str, int]:
    """Limits keyed by canonical model name (names in `known` as they are); a DataError naming
    a bad name or a limit below 1."""
    out: dict[str, int] = {}
    for name, limit in limits.items():
        try:
            canonical = name if known and name in known else parse_model_name(name).name
        except ModelUnavailable as e:
            raise DataError(None, f"model_calls.{name}", str(e)) from None
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise DataError(None, f"model_calls.{name}", "calls in flight must be an integer >= 1, "
                            f"got {limit!r}")
        out[canonical] = limit
    return out


class ModelPool:
    """Models by name for one run, each resolved once with `env` (API keys come from it)."""

    def __init__(self, env: Mapping[str, str], limits: Mapping[str, int] | None = None, *,
                 default_http: int = DEFAULT_HTTP_CONCURRENCY,
                 cache_dir: str | os.PathLike[str] | None = None,
                 provided: Mapping[str, LLM] | None = None,
                 endpoints: Mapping[str, EndpointOptions] | None = None) -> None:
        if default_http < 1:
            raise ValueError(f"default_http must be at least 1, got {default_http}")
        self._env = dict(env)
        self._limits = check_limits(limits or {}, provided)
        self._options = {name if provided and name in provided else _canonical_key(name): o
                         for name, o in (endpoints or {}).items()}
        self._default_http = default_http
        self._cache_dir = str(Path(cache_dir).expanduser()) if cache_dir is not None else None
        self._models: dict[str, LimitedLLM] = {
            name: LimitedLLM(llm, self._limits.get(name, default_http),
                             self.options(name).give_up_after, self.options(name).requests_per_minute,
                             self.options(name).tokens_per_minute)
            for name, llm in (provided or {}).items()}
        self._lock = threading.Lock()
        self._shared: dict[str, Slots] = {}

    def share(self, slots: Mapping[str, Slots]) -> None:
        """Calls to the endpoints named (canonical names) take a slot of `slots` too, from now
        on (models built later included); `unshare` ends it."""
        with self._lock:
            self._shared.update(slots)
            for name, model in self._models.items():
                if name in slots:
                    model.shared = slots[name]

    def unshare(self) -> None:
        """Calls take only this pool's slots again."""
        with self._lock:
            for name, model in self._models.items():
                if name in self._shared:
                    model.shared = None
            self._shared.clear()

    def get(self, name: str) -> LimitedLLM:
        """The model `name` selects; ModelUnavailable if it cannot be used here (unknown
        scheme, missing key, missing local extra), naming what to set or install."""
        with self._lock:
            if name in self._models:  # a provided model, or one resolved under this very name
                return self._models[name]
        spec = parse_model_name(name)
        with self._lock:
            model = self._models.get(spec.name)
            if model is None:
                limit = self._limits.get(spec.name)
                if limit is None and spec.backend != "local":
                    limit = self._default_http
                model = build_model(spec, api_key(spec, self._env), self._cache_dir, limit,
                                    self.options(spec.name))
                model.shared = self._shared.get(spec.name)
                self._models[spec.name] = model
        return model

    def options(self, name: str) -> EndpointOptions:
        """The settings of an endpoint (by canonical name): as configured, else the defaults."""
        return self._options.get(name) or EndpointOptions()

    def limits(self) -> dict[str, int]:
        """Calls in flight per endpoint: the configured limits, and those of every model used."""
        out = dict(self._limits)
        with self._lock:
            out.update({name: m.max_concurrency for name, m in self._models.items()})
        return out

    def names(self) -> list[str]:
        """Canonical names of the models used so far."""
        with self._lock:
            return list(self._models)
