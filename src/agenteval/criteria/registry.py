"""The criterion registry: metric names to criterion classes, and config resolution.

Resolution turns an eval config's `criteria` into configured metrics, validating each entry
against its criterion model. Unlike ADK, an unknown metric name, an unknown key and an
out-of-range threshold are errors that name the config file and the key.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agenteval.criteria.base import Criterion
from agenteval.errors import DataError, from_validation_error
from agenteval.schema import BaseCriterion, EvalConfig, EvalMetric


@dataclass(frozen=True)
class MetricSpec:
    """A registered metric: how to build its criterion and what scores mean."""

    name: str
    factory: Callable[[str, BaseCriterion], Criterion]
    criterion_model: type[BaseCriterion]
    description: str = ""
    min_value: float = 0.0
    max_value: float = 1.0
    informational: bool = False  # reported, never gating; a threshold is not allowed
    requires_expected: bool = False
    custom_function_path: str | None = None


@dataclass(frozen=True)
class ConfiguredMetric:
    """A metric as configured for a run: its spec, its validated criterion, its wire form."""

    spec: MetricSpec
    criterion: BaseCriterion

    @property
    def name(self) -> str:
        return self.spec.name

    def build(self) -> Criterion:
        """A fresh criterion instance."""
        return self.spec.factory(self.spec.name, self.criterion)

    @cached_property
    def wire_dict(self) -> dict[str, Any]:
        """`wire()` as a dict, computed once (it is copied into every per-invocation result)."""
        return self.wire().model_dump()

    def wire(self) -> EvalMetric:
        """The metric as written into results (ADK's EvalMetric layout)."""
        if self.spec.informational:
            return EvalMetric(metric_name=self.name)
        return EvalMetric(
            metric_name=self.name,
            threshold=self.criterion.threshold,
            criterion=self.criterion.model_dump(exclude_none=True),
            custom_function_path=self.spec.custom_function_path,
        )


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
        t = criterion.threshold
        if not spec.min_value <= t <= spec.max_value:
            raise DataError(source, f"{key}.threshold" if isinstance(value, dict) else key,
                            f"threshold {t} is outside [{spec.min_value}, {spec.max_value}]")
        return ConfiguredMetric(spec, criterion)

    def resolve(self, config: EvalConfig, source: str | Path | None = None,
                include_informational: bool = True) -> list[ConfiguredMetric]:
        """Configured metrics for a config, in config order, then the informational ones."""
        registry = self
        if config.custom_metrics:
            from agenteval.criteria.custom import register_config_metrics

            registry = self.fork()
            register_config_metrics(registry, config, source)
        metrics = [registry.configure(n, v, source) for n, v in config.criteria.items()]
        if include_informational:
            metrics += [
                ConfiguredMetric(s, BaseCriterion(threshold=0.0))
                for s in registry.informational()
                if s.name not in config.criteria
            ]
        return metrics


def spec_for_class(name: str, cls: type[Criterion], description: str = "",
                   min_value: float = 0.0, max_value: float = 1.0,
                   informational: bool = False) -> MetricSpec:
    """A spec whose factory is a Criterion subclass."""
    return MetricSpec(
        name=name,
        factory=cls,
        criterion_model=cls.criterion_model,
        description=description or (cls.__doc__ or "").strip().splitlines()[0],
        min_value=min_value,
        max_value=max_value,
        informational=informational,
        requires_expected=cls.requires_expected,
    )


def with_specs(registry: Registry, specs: Iterable[MetricSpec]) -> Registry:
    for spec in specs:
        registry.register(spec)
    return registry


_DEFAULT: Registry | None = None


def default_registry() -> Registry:
    """The process-wide registry holding every built-in criterion."""
    global _DEFAULT
    if _DEFAULT is None:
        from agenteval.criteria.builtin import builtin_specs

        _DEFAULT = with_specs(Registry(), builtin_specs())
    return _DEFAULT


def register_criterion(name: str, *, description: str = "", min_value: float = 0.0,
                       max_value: float = 1.0,
                       registry: Registry | None = None) -> Callable[[type[Criterion]],
                                                                     type[Criterion]]:
    """Class decorator adding a Criterion subclass to a registry (the default one if None)."""

    def add(cls: type[Criterion]) -> type[Criterion]:
        spec = spec_for_class(name, cls, description, min_value, max_value)
        (registry or default_registry()).register(spec)
        return cls

    return add


__all__ = [
    "ConfiguredMetric",
    "MetricSpec",
    "Registry",
    "default_registry",
    "register_criterion",
    "spec_for_class",
]
