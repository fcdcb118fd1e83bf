"""Criteria from other packages, through the `agenteval.criteria` entry-point group.

A package declares, in its pyproject.toml,

    [project.entry-points."agenteval.criteria"]
    polite_v1 = "my_package.criteria:Polite"

where the entry point's name is the metric name a config uses and its object is a `Criterion`
subclass (or a `MetricSpec`, or a function returning one). Nothing is imported at start-up: the
group is read (package metadata only) when a config names a criterion the registry does not
know, and only that entry point is loaded.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

from agenteval.criteria.base import Criterion
from agenteval.criteria.spec import MetricSpec, spec_for_class

GROUP = "agenteval.criteria"


def plugin_names() -> list[str]:
    """Names of the criteria other installed packages offer (read from their metadata)."""
    return sorted({ep.name for ep in importlib.metadata.entry_points(group=GROUP)})


def load_plugin(name: str) -> MetricSpec | None:
    """The spec of the plugin criterion `name`, its module imported now; None when no package
    offers it. ValueError when its object is not a criterion."""
    found = [ep for ep in importlib.metadata.entry_points(group=GROUP) if ep.name == name]
    if not found:
        return None
    try:
        obj: Any = found[0].load()
    except Exception as e:  # the plugin's own import failure: say whose
        raise ValueError(f"the criterion plugin {name!r} ({found[0].value}) failed to import: "
                         f"{type(e).__name__}: {e}") from None
    if isinstance(obj, type) and issubclass(obj, Criterion):
        return spec_for_class(name, obj)
    if callable(obj) and not isinstance(obj, type):
        obj = obj()
    if isinstance(obj, MetricSpec):
        return obj
    raise ValueError(f"the criterion plugin {name!r} ({found[0].value}) is neither a Criterion "
                     "subclass nor a MetricSpec")


__all__ = ["GROUP", "load_plugin", "plugin_names"]
