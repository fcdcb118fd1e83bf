"""The default registry (every built-in criterion), Python-side registration into it, and
resolution of an eval config against a registry, custom metrics included."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agenteval.criteria.base import Criterion
from agenteval.criteria.custom import config_specs, function_spec
from agenteval.criteria.plugins import load_plugin
from agenteval.criteria.registry import Registry
from agenteval.criteria.spec import ConfiguredMetric, spec_for_class
from agenteval.errors import DataError
from agenteval.schema import EvalConfig

_DEFAULT: Registry | None = None


def default_registry() -> Registry:
    """The process-wide registry holding every built-in criterion (and whatever was registered
    into it from Python)."""
    global _DEFAULT
    if _DEFAULT is None:
        # Imported on first use; the judged criteria's modules (the judge's prompts) are
        # imported where a config names them (`builtin.register_builtins`).
        from agenteval.criteria.builtin import register_builtins

        _DEFAULT = register_builtins(Registry())
    return _DEFAULT


def resolve_metrics(config: EvalConfig, source: str | Path | None = None,
                    registry: Registry | None = None,
                    include_informational: bool = True) -> list[ConfiguredMetric]:
    """The config's metrics, validated against `registry` (default: the default registry); the
    config's `custom_metrics` are imported and registered into a private fork first."""
    registry = registry or default_registry()
    _add_plugins(registry, config, source)
    if config.custom_metrics:
        registry = registry.fork()
        for spec in config_specs(config, source):
            registry.register(spec, replace_existing=True)
    return registry.resolve(config, source, include_informational)


def _add_plugins(registry: Registry, config: EvalConfig, source: str | Path | None) -> None:
    """Registers the plugin criteria the config names that the registry does not know yet."""
    custom = set(config.custom_metrics or {})
    for name in config.criteria:
        if registry.get(name) is None and name not in custom:
            try:
                spec = load_plugin(name)
            except ValueError as e:
                raise DataError(source, f"criteria.{name}", str(e)) from None
            if spec is not None:
                registry.register(spec)


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


def register_function(name: str, fn: Callable[..., Any], *, registry: Registry | None = None,
                      description: str = "", min_value: float = 0.0,
                      max_value: float = 1.0) -> None:
    """Registers a custom metric function from Python (the default registry if None)."""
    (registry or default_registry()).register(function_spec(
        name, fn, description=description, min_value=min_value, max_value=max_value))


__all__ = ["default_registry", "register_criterion", "register_function", "resolve_metrics"]
