"""Metrics registered by name, their spec made when first looked up (`Registry.register_deferred`):
the built-in criteria that are not informational, so a run imports only the criteria it uses."""

import json
import subprocess
import sys

import pytest

from agenteval.criteria import Registry, default_registry
from agenteval.criteria.builtin import builtin_specs, register_builtins
from agenteval.criteria.rouge import ResponseMatchScore
from agenteval.criteria.spec import MetricSpec, spec_for_class
from agenteval.errors import DataError
from agenteval.schema import EvalConfig

_JUDGED_MODULES = ["agenteval.criteria.judge.base", "agenteval.criteria.judge.response",
                   "agenteval.criteria.judge.rubrics", "agenteval.criteria.judge.hallucinations",
                   "agenteval.criteria.judge.multi_turn", "agenteval.criteria.judge.simulator_quality",
                   "agenteval.criteria.judge.trajectory_judge", "agenteval.criteria.judge.rubric_checks",
                   "agenteval.criteria.handoffs"]


def _fresh(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout))


def test_a_deterministic_config_imports_no_judged_criterion() -> None:
    code = ("import sys, json; from agenteval.criteria import default_registry, resolve_metrics; "
            "from agenteval.schema import EvalConfig; "
            "names = default_registry().names(); "
            "resolve_metrics(EvalConfig(criteria={'tool_trajectory_avg_score': 1.0, "
            "'response_match_score': 0.8})); "
            f"print(json.dumps([m for m in {_JUDGED_MODULES!r} if m in sys.modules]))")
    assert _fresh(code) == []
    # A judged one imports its own module (and the judge's base), not the other judged ones'.
    code = code.replace("'response_match_score': 0.8", "'safety_v1': 0.5")
    assert _fresh(code) == ["agenteval.criteria.judge.base", "agenteval.criteria.judge.response"]


def test_the_default_registry_holds_every_builtin_as_its_class_makes_it() -> None:
    registry = register_builtins(Registry())
    eager = builtin_specs()
    assert registry.names() == sorted(s.name for s in eager)
    # Each spec, made when looked up, is the one its class gives (description, range, whether
    # it needs an expected conversation, its criterion model).
    for spec in eager:
        assert registry.get(spec.name) == spec
    assert [s.name for s in registry.informational()] == [s.name for s in eager if s.informational]
    assert registry.specs == {s.name: s for s in eager}


def test_a_deferred_metric_is_made_once_and_only_when_looked_up() -> None:
    made: list[str] = []

    def make() -> MetricSpec:
        made.append("rouge")
        return spec_for_class("mine", ResponseMatchScore)

    registry = Registry()
    registry.register_deferred("mine", make)
    assert registry.names() == ["mine"] and made == [] and registry.informational() == []
    forked = registry.fork()
    assert registry.configure("mine", 0.5).spec.factory is ResponseMatchScore
    assert registry.get("mine") is registry.get("mine") and made == ["rouge"]
    assert forked.get("mine") is not None and made == ["rouge", "rouge"]  # (a fork makes its own)
    with pytest.raises(ValueError, match="already registered"):
        registry.register_deferred("mine", make)
    with pytest.raises(ValueError, match="already registered"):
        forked.register(spec_for_class("mine", ResponseMatchScore))
    with pytest.raises(DataError, match="unknown criterion; did you mean 'mine'"):
        registry.configure("mne", 0.5)


def test_a_deferred_metric_made_under_another_name_or_informational_is_refused() -> None:
    registry = Registry()
    registry.register_deferred("a", lambda: spec_for_class("b", ResponseMatchScore))
    registry.register_deferred("c", lambda: spec_for_class("c", ResponseMatchScore, informational=True))
    with pytest.raises(ValueError, match="made as 'b'"):
        registry.get("a")
    with pytest.raises(ValueError, match="informational"):
        registry.get("c")


def test_a_registered_spec_replaces_a_deferred_one_of_its_name() -> None:
    registry = register_builtins(Registry())
    mine = spec_for_class("safety_v1", ResponseMatchScore)
    registry.register(mine, replace_existing=True)
    assert registry.get("safety_v1") is mine
    metrics = default_registry().fork()
    metrics.register(mine, replace_existing=True)
    assert metrics.resolve(EvalConfig(criteria={"safety_v1": 0.5}))[0].spec is mine
    assert default_registry().get("safety_v1") != mine
