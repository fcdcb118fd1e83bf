"""A run's `mock_tools` settings (`agents.mock_tools`), from its config and criteria.

Calls compare with the expected ones under the run's argument matching: that of
`tool_trajectory_avg_score` when configured, else of the first other trajectory criterion
(`args_match`, or `ignore_args`: the tool name alone), else exact equality. The settings
pickle (the comparison is rebuilt from the criterion's plain data where it is used), so that
worker processes can serve calls as this process does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from agenteval.agents.mock_tools import MockTools, exact_call
from agenteval.criteria import ConfiguredMetric
from agenteval.criteria.args_match import ArgsComparer
from agenteval.schema import EvalConfig, FunctionCall
from agenteval.schema.criterion import ToolTrajectoryCriterion

_PREFERRED = "tool_trajectory_avg_score"


@lru_cache(maxsize=32)
def _comparer(args_match: str) -> ArgsComparer:
    return ArgsComparer(json.loads(args_match))


@dataclass(frozen=True)
class CriterionArgs:
    """Call equality as a trajectory criterion compares calls (picklable: plain data)."""

    args_match: str | None = None  # the criterion's args_match as sorted JSON
    ignore_args: bool = False

    def __call__(self, actual: FunctionCall, expected: FunctionCall) -> bool:
        if self.ignore_args:
            return actual.name == expected.name
        if self.args_match is None:
            return exact_call(actual, expected)
        return _comparer(self.args_match).equal(actual, expected)


def call_equality(metrics: Sequence[ConfiguredMetric]) -> CriterionArgs:
    """How the run's trajectory criteria compare calls (see the module docstring)."""
    trajectory = sorted((m for m in metrics if isinstance(m.criterion, ToolTrajectoryCriterion)),
                        key=lambda m: m.name != _PREFERRED)
    if not trajectory:
        return CriterionArgs()
    criterion: Any = trajectory[0].criterion
    table = criterion.args_match
    return CriterionArgs(json.dumps(table, sort_keys=True) if table else None, criterion.ignore_args)


def tool_mocking(config: EvalConfig, metrics: Sequence[ConfiguredMetric]) -> MockTools | None:
    """The run's `mock_tools` settings; None when every tool runs live."""
    return MockTools.from_setting(config.mock_tools, config.mock_tools_strict, call_equality(metrics))


__all__ = ["CriterionArgs", "call_equality", "tool_mocking"]
