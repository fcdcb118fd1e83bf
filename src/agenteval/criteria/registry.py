"""The criterion registry: metric names to specs, and validation of config entries.

Configuring turns an eval config's `criteria` into configured metrics, validating each entry
against its criterion model. Unlike ADK, an unknown metric name, an unknown key and an
out-of-range threshold are errors that name the config file and the key. The registry knows
nothing of the metrics registered in it: the built-in ones are added by
`agenteval.criteria.defaults`, custom ones by whoever registers them.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agenteval.criteria.spec import ConfiguredMetric, MetricSpec
from agenteval.errors import DataError, SettingError, from_validation_error
from agenteval.schema import BaseCriterion, EvalConfig

# ADK criteria agenteval does not compute, and why: said so, not "unknown" with a near name
# (`response_evaluation_score` suggested `response_match_score`, another criterion, another scale).
NOT_COMPUTED: dict[str, str] = {
    "response_evaluation_score": (
        "ADK's coherence score (1 to 5), which ADK computes on Vertex AI's evaluation service only; "
        "agenteval does not compute it (its judged criteria score 0 to 1 with their own judge): for "
        "a judged view of the response use rubric_based_final_response_quality_v1 with a rubric "
        "such as 'the response is coherent', or final_response_match_v2 against the expected "
        "response"),
}


class Registry:
    """Metric specs by name. `fork()` gives a copy that can take custom metrics privately.

    A metric may be registered by name with a function that makes its spec when it is first
    asked for (`register_deferred`): the built-in judged criteria are, so that a run that
    configures none of them never imports their modules (the judge's prompts and examples)."""

    def __init__(self, specs: dict[str, MetricSpec] | None = None) -> None:
        self._specs: dict[str, MetricSpec] = specs if specs is not None else {}
        self._deferred: dict[str, Callable[[], MetricSpec]] = {}

    @property
    def specs(self) -> dict[str, MetricSpec]:
        """Every spec by name, the deferred ones made first."""
        for name in list(self._deferred):
            self.get(name)
        return self._specs

    def register(self, spec: MetricSpec, *, replace_existing: bool = False) -> None:
        """Adds a metric; re-registering a name is an error unless `replace_existing`."""
        if (spec.name in self._specs or spec.name in self._deferred) and not replace_existing:
            raise ValueError(f"metric {spec.name!r} is already registered")
        self._deferred.pop(spec.name, None)
        self._specs[spec.name] = spec

    def register_deferred(self, name: str, make: Callable[[], MetricSpec]) -> None:
        """Adds a metric that is not informational by name, its spec made by `make` when the
        name is first looked up (`get`, `configure`, `specs`); as `register` otherwise."""
        if name in self._specs or name in self._deferred:
            raise ValueError(f"metric {name!r} is already registered")
        self._deferred[name] = make

    def get(self, name: str) -> MetricSpec | None:
        make = self._deferred.get(name)
        if make is not None:
            spec = make()
            if spec.name != name or spec.informational:
                raise ValueError(f"metric {name!r} was registered deferred and made as "
                                 f"{spec.name!r}{' (informational)' if spec.informational else ''}")
            self._specs[name] = spec
            del self._deferred[name]
        return self._specs.get(name)

    def names(self) -> list[str]:
        return sorted([*self._specs, *self._deferred])

    def fork(self) -> Registry:
        forked = Registry(dict(self._specs))
        forked._deferred = dict(self._deferred)
        return forked

    def informational(self) -> list[MetricSpec]:
        """Metrics reported on every run without being configured (none is deferred)."""
        return [s for s in self._specs.values() if s.informational]

    def configure(self, name: str, value: float | dict[str, Any],
                  source: str | Path | None = None) -> ConfiguredMetric:
        """Validates one `criteria` entry (a bare threshold or a criterion object)."""
        key = f"criteria.{name}"
        spec = self.get(name)
        if spec is None and name in NOT_COMPUTED:
            raise DataError(source, key, NOT_COMPUTED[name])
        if spec is None:
            close = difflib.get_close_matches(name, self.names(), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise DataError(source, key, f"unknown criterion; {hint}known: {', '.join(self.names())}")
        if spec.informational:
            raise DataError(source, key, "informational metric: it is always reported and "
                            "takes no threshold; remove it from criteria")
        raw: dict[str, Any] = dict(value) if isinstance(value, dict) else {"threshold": value}
        try:
            criterion = spec.criterion_model.model_validate(raw)
        except ValidationError as e:
            raise from_validation_error(source, e, key) from None
        try:  # a criterion that checks its own settings (trajectory matchers) does it when built
            spec.factory(name, criterion)
        except SettingError as e:  # a bad matcher says which (`where`: args_match.TOOL.ARG)
            raise DataError(source, f"{key}.{e.where}", str(e)) from None
        except ValueError as e:
            raise DataError(source, key, str(e)) from None
        t = criterion.threshold
        if not spec.min_value <= t <= spec.max_value:
            raise DataError(source, f"{key}.threshold" if isinstance(value, dict) else key,
                            f"threshold {t} is outside [{spec.min_value}, {spec.max_value}]")
        return ConfiguredMetric(spec, criterion)

    def settings(self, name: str, value: Any) -> Any:
        """A `criteria` entry with every setting it leaves out at its default (as `configure`
        reads it), for telling what two configs really set apart; the entry as written when it
        cannot be read so (a criterion not registered here, a value it refuses)."""
        spec = self.get(name)
        if spec is None or spec.informational or not isinstance(value, int | float | dict):
            return value
        try:
            raw = dict(value) if isinstance(value, dict) else {"threshold": value}
            return spec.criterion_model.model_validate(raw).model_dump(mode="json", exclude_none=True)
        except ValidationError:
            return value

    def resolve(self, config: EvalConfig, source: str | Path | None = None,
                include_informational: bool = True) -> list[ConfiguredMetric]:
        """Configured metrics for a config, in config order, then the informational ones.

        Only metrics registered here are known: the config's `custom_metrics` are registered by
        `agenteval.criteria.resolve_metrics`, which forks the registry first."""
        metrics = [self.configure(n, v, source) for n, v in config.criteria.items()]
        if include_informational:
            metrics += [
                ConfiguredMetric(s, BaseCriterion(threshold=0.0))
                for s in self.informational()
                if s.name not in config.criteria
            ]
        return metrics


__all__ = ["NOT_COMPUTED", "Registry"]
