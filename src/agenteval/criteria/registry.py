"""The criterion registry: metric names to specs, and validation of config entries.

Configuring turns an eval config's `criteria` into configured metrics, validating each entry
against its criterion model. Unlike ADK, an unknown metric name, an unknown key and an
out-of-range threshold are errors that name the config file and the key. The registry knows
nothing of the metrics registered in it: the built-in ones are added by
`agenteval.criteria.defaults`, custom ones by whoever registers them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agenteval.criteria.spec import ConfiguredMetric, MetricSpec
from agenteval.errors import DataError, from_validation_error
from agenteval.schema import BaseCriterion, EvalConfig


@dataclass
class Registry:
    """Metric specs by name. `fork()` gives a copy that can take custom metrics privately."""

    specs: dict[str, MetricSpec] = field(default_factory=dict)

    def register(self, spec: MetricSpec, *, replace_existing: bool = False) -> None:
        """Adds a metric; re-registering a name is an error unless `replace_existing`."""
        if spec.name in self.specs and not replace_existing:
            raise ValueError(f"metric {spec.name!r} is already registered")
        self.specs[spec.name] = spec

    def get(self, name: str) -> MetricSpec | None:
        return self.specs.get(name)

    def names(self) -> list[str]:
        return sorted(self.specs)

    def fork(self) -> Registry:
        return Registry(dict(self.specs))

    def informational(self) -> list[MetricSpec]:
        """Metrics reported on every run without being configured."""
        return [s for s in self.specs.values() if s.informational]

    def configure(self, name: str, value: float | dict[str, Any],
                  source: str | Path | None = None) -> ConfiguredMetric:
        """Validates one `criteria` entry (a bare threshold or a criterion object)."""
        key = f"criteria.{name}"
        spec = self.specs.get(name)
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
        except ValueError as e:
            raise DataError(source, key, str(e)) from None
        t = criterion.threshold
        if not spec.min_value <= t <= spec.max_value:
            raise DataError(source, f"{key}.threshold" if isinstance(value, dict) else key,
                            f"threshold {t} is outside [{spec.min_value}, {spec.max_value}]")
        return ConfiguredMetric(spec, criterion)

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


def with_specs(registry: Registry, specs: Iterable[MetricSpec]) -> Registry:
    for spec in specs:
        registry.register(spec)
    return registry



__all__ = ["Registry", "with_specs"]
