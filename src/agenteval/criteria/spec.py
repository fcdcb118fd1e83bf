"""Metric specs: how a metric's criterion is built and what its scores mean, and a metric as
configured for a run (its spec with a validated criterion)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Any

from agenteval.criteria.base import Criterion
from agenteval.schema import BaseCriterion, EvalMetric, JudgeCertificateNote
from agenteval.schema.base import utf8_text


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

    def __post_init__(self) -> None:
        # A name is a key of every result document, so one UTF-8 cannot hold (a lone surrogate,
        # possible only from Python) is refused here; a description is only shown, so it is
        # kept with U+FFFD in place of each.
        if utf8_text(self.name)[1]:
            raise ValueError(f"metric name {self.name!r} holds an unpaired surrogate, which no "
                             "result document (UTF-8) can hold")
        description, replaced = utf8_text(self.description)
        if replaced:
            object.__setattr__(self, "description", description)  # (frozen: as dataclasses set it)


# Where `ConfiguredMetric.build` keeps a reusable criterion: a key of the instance's `__dict__`
# (not a field: it is not compared, hashed or copied by `dataclasses.replace`).
_KEPT = "_kept_criterion"


@dataclass(frozen=True)
class ConfiguredMetric:
    """A metric as configured for a run: its spec, its validated criterion, its wire form."""

    spec: MetricSpec
    criterion: BaseCriterion
    # A judged metric's calibration certificate in this run (set when a run is prepared;
    # `criteria.judge.certificates.certify`): shown beside its scores, and advisory makes it
    # stop gating.
    certification: JudgeCertificateNote | None = None
    # A rubric criterion whose certificate names its rubrics: the notes a case gets by the rubric
    # texts it is judged on (`certificates.rubric_certifications`; a case may add rubrics the
    # certificate was not measured on). Empty: `certification` applies to every case.
    rubric_certifications: tuple[tuple[frozenset[str] | None, JudgeCertificateNote], ...] = ()

    @property
    def name(self) -> str:
        return self.spec.name

    def build(self) -> Criterion:
        """The metric's criterion: built on the first call and kept for every later one when its
        class is `reusable` (stateless between cases), else a fresh instance per call. Building
        per case was a share of a large run's scoring glue (`_Trajectory.__init__`)."""
        kept: Criterion | None = self.__dict__.get(_KEPT)
        if kept is not None:
            return kept
        criterion = self.spec.factory(self.spec.name, self.criterion)
        if criterion.reusable:
            self.__dict__[_KEPT] = criterion  # (frozen: set as `cached_property` sets its value)
        return criterion

    def __getstate__(self) -> dict[str, Any]:
        # The kept criterion stays with this process (a worker builds its own): it may hold
        # what does not pickle (an `args_match` comparer's functions).
        state = dict(self.__dict__)
        state.pop(_KEPT, None)
        return state

    @cached_property
    def wire_dict(self) -> dict[str, Any]:
        """`wire()` as a dict, computed once (it is copied into every per-invocation result),
        with the enum members of its criterion given as their values: the same JSON, but
        pydantic-core writes an enum found in a value typed `Any` through `Enum.value`, a
        Python-level property (an `EXACT` match type made each trajectory result 2-5 µs
        slower to serialise)."""
        wire = self.wire().model_dump()
        if wire["criterion"] is not None:
            wire["criterion"] = _enum_values(wire["criterion"])
        return wire

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


def _enum_values(value: Any) -> Any:
    """`value` (a dump's dicts and lists) with every enum member replaced by its value."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {k: _enum_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_enum_values(v) for v in value]
    return value


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


__all__ = ["ConfiguredMetric", "MetricSpec", "spec_for_class"]
