"""The pydantic models' modules annotate with objects, not strings.

Under `from __future__ import annotations` every annotation is a string, which pydantic turns
into a `typing.ForwardRef` (compiled at run time) and evaluates as it defines the model: ≈ 33 M
instructions of `eval`'s start-up for these modules (bench/README.md, session 39).
"""

import __future__

import importlib
import pkgutil

import agenteval.schema

# The modules outside `schema/` whose models `eval` defines at start-up.
MODEL_MODULES = ["agenteval.runner.request", "agenteval.verdicts.sequential", "agenteval.datasets.legacy"]


def test_the_model_modules_do_not_defer_their_annotations() -> None:
    names = [f"agenteval.schema.{m.name}" for m in pkgutil.iter_modules(agenteval.schema.__path__)]
    deferred = [name for name in [*names, *MODEL_MODULES]
                if importlib.import_module(name).__dict__.get("annotations") is __future__.annotations]
    assert len(names) >= 14 and deferred == []
