"""Tool-trajectory criteria: ADK's match types, and partial-credit precision/recall/single-tool.

`tool_trajectory_avg_score` reproduces ADK 2.13.0 exactly: per invocation 1.0 on a match and
0.0 otherwise, averaged over invocations. Two calls are equal when their names are equal and,
unless `ignore_args`, their `args` compare equal as Python values (so 1 == 1.0, "1" != 1,
None != {}, and key order does not matter). Call ids are never compared. With `args_match`
(an agenteval extension, `agenteval.criteria.args_match`) arguments are compared per tool and
per argument as configured instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agenteval.criteria.args_match import ArgsComparer
from agenteval.criteria.base import (
    CriterionResult,
    EvalContext,
    InvocationScore,
    PerInvocationCriterion,
)
from agenteval.schema import (
    FunctionCall,
    Invocation,
    MatchType,
    SingleToolUseCriterion,
    ToolTrajectoryCriterion,
)

# How two calls (actual, expected) compare: `ignore_args` as ADK has it, or a comparer.
Equality = bool | Callable[[FunctionCall, FunctionCall], bool]


def calls_equal(a: FunctionCall, b: FunctionCall, ignore_args: Equality) -> bool:
    """Same tool name and, unless ignored, equal arguments (or as the comparer says)."""
    if callable(ignore_args):
        return ignore_args(a, b)
    return a.name == b.name and (ignore_args or a.args == b.args)


def exact_match(actual: Sequence[FunctionCall], expected: Sequence[FunctionCall],
                ignore_args: Equality) -> bool:
    """Same length and pairwise equal in order."""
    return len(actual) == len(expected) and all(
        calls_equal(a, e, ignore_args) for a, e in zip(actual, expected, strict=False)
    )


def in_order_match(actual: Sequence[FunctionCall], expected: Sequence[FunctionCall],
                   ignore_args: Equality) -> bool:
    """Every expected call appears in the actual list, in order; extra calls are allowed."""
    pending = iter(expected)
    want = next(pending, None)
    for call in actual:
        if want is None:
            break
        if calls_equal(call, want, ignore_args):
            want = next(pending, None)
    return want is None


def matched_count(actual: Sequence[FunctionCall], expected: Sequence[FunctionCall],
                  ignore_args: Equality) -> int:
    """Size of a largest one-to-one matching between equal expected and actual calls.

    Call equality is an equivalence relation, so taking the first unused equal call for each
    expected call already gives a largest matching.
    """
    pool = list(actual)
    found = 0
    for want in expected:
        for i, call in enumerate(pool):
            if calls_equal(call, want, ignore_args):
                del pool[i]
                found += 1
                break
    return found


def any_order_match(actual: Sequence[FunctionCall], expected: Sequence[FunctionCall],
                    ignore_args: Equality) -> bool:
    """Every expected call appears in the actual list with its multiplicity; extras allowed."""
    return matched_count(actual, expected, ignore_args) == len(expected)


_MATCHERS = {
    MatchType.EXACT: exact_match,
    MatchType.IN_ORDER: in_order_match,
    MatchType.ANY_ORDER: any_order_match,
}


class _Trajectory(PerInvocationCriterion):
    """The trajectory criteria's common part: how calls compare (`ignore_args`, `args_match`)."""

    criterion_model = ToolTrajectoryCriterion
    criterion: ToolTrajectoryCriterion

    def __init__(self, metric_name: str, criterion: ToolTrajectoryCriterion) -> None:
        super().__init__(metric_name, criterion)
        # Built here, so a bad matcher is a config error before anything runs (see the registry).
        self.equal: Equality = (ArgsComparer(criterion.args_match).equal
                                if criterion.args_match and not criterion.ignore_args
                                else criterion.ignore_args)


class ToolTrajectoryAvgScore(_Trajectory):
    """`tool_trajectory_avg_score`: 1/0 per invocation by match type, mean over the case."""

    def score_pair(self, actual: Invocation, expected: Invocation) -> float:
        match = _MATCHERS[self.criterion.match_type]
        ok = match(actual.tool_calls(), expected.tool_calls(), self.equal)
        return 1.0 if ok else 0.0


class ToolTrajectoryPrecision(_Trajectory):
    """`tool_trajectory_precision`: matched actual calls / actual calls, per invocation.

    Matching is one-to-one and order-free (as ANY_ORDER); `ignore_args` compares names only.
    No actual calls scores 1.0 when none were expected and 0.0 otherwise.
    """

    def score_pair(self, actual: Invocation, expected: Invocation) -> float:
        got, want = actual.tool_calls(), expected.tool_calls()
        if not got:
            return 1.0 if not want else 0.0
        return matched_count(got, want, self.equal) / len(got)


class ToolTrajectoryRecall(_Trajectory):
    """`tool_trajectory_recall`: matched expected calls / expected calls, per invocation.

    No expected calls scores 1.0.
    """

    def score_pair(self, actual: Invocation, expected: Invocation) -> float:
        got, want = actual.tool_calls(), expected.tool_calls()
        if not want:
            return 1.0
        return matched_count(got, want, self.equal) / len(want)


class ToolTrajectorySingleToolUse(PerInvocationCriterion):
    """`tool_trajectory_single_tool_use`: was the tool `tool_name` called?

    Per invocation: 1.0 if that invocation called it. Overall: 1.0 if any invocation of the
    case called it (the check is for the conversation's trajectory as a whole), else 0.0.
    Reference-free: expected invocations are not read.
    """

    criterion_model = SingleToolUseCriterion
    criterion: SingleToolUseCriterion
    requires_expected = False

    def score(self, ctx: EvalContext) -> CriterionResult:
        name = self.criterion.tool_name
        scores = [
            1.0 if any(c.name == name for c in inv.tool_calls()) else 0.0 for inv in ctx.actual
        ]
        overall = max(scores) if scores else None
        return CriterionResult(overall, [InvocationScore(s) for s in scores])
