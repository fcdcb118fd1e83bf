"""Tool-trajectory criteria: ADK's match types, and partial-credit precision/recall/single-tool.

`tool_trajectory_avg_score` reproduces ADK 2.13.0 exactly: per invocation 1.0 on a match and
0.0 otherwise, averaged over invocations. Two calls are equal when their names are equal and,
unless `ignore_args`, their `args` compare equal as Python values (so 1 == 1.0, "1" != 1,
None != {}, and key order does not matter). Call ids are never compared. With `args_match`
(an agenteval extension, `agenteval.criteria.args_match`) arguments are compared per tool and
per argument as configured instead.

agenteval's multi-agent extensions (per-agent matching, `ignore_tools`, the SUBSET and SUPERSET
match types) are described in `agenteval.criteria.trajectory_agents`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from functools import lru_cache, partial
from typing import Any

from agenteval.criteria.args_match import ArgsComparer
from agenteval.criteria.base import (
    AgentUse,
    CriterionResult,
    EvalContext,
    InvocationScore,
    PerInvocationCriterion,
)
from agenteval.criteria.reasons import call_text, held_to
from agenteval.criteria.trajectory_agents import (
    Equal,
    agents_failing,
    authored_calls,
    per_agent_mode,
    per_agent_passed,
    per_agent_reason,
    subset_match,
    subset_reason,
    superset_reason,
    without,
)
from agenteval.schema import (
    FunctionCall,
    Invocation,
    InvocationEvents,
    MatchType,
    SingleToolUseCriterion,
    ToolTrajectoryCriterion,
)
from agenteval.schema.invocation import CALLS_MEMO

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


def unmatched(actual: Sequence[FunctionCall], expected: Sequence[FunctionCall],
              ignore_args: Equality) -> tuple[list[int], list[int]]:
    """(expected calls not matched, actual calls not used) by index, under the matching
    `matched_count` counts."""
    pool = list(range(len(actual)))
    missing = []
    for j, want in enumerate(expected):
        k = next((k for k in pool if calls_equal(actual[k], want, ignore_args)), None)
        if k is None:
            missing.append(j)
        else:
            pool.remove(k)
    return missing, pool


def any_order_match(actual: Sequence[FunctionCall], expected: Sequence[FunctionCall],
                    ignore_args: Equality) -> bool:
    """Every expected call appears in the actual list with its multiplicity; extras allowed."""
    return matched_count(actual, expected, ignore_args) == len(expected)


def _comparer(ignore_args: Equality) -> Equal:
    return lambda a, e: calls_equal(a, e, ignore_args)


def subset(actual: Sequence[FunctionCall], expected: Sequence[FunctionCall], ignore_args: Equality) -> bool:
    """SUBSET: every actual call is among the expected ones, with multiplicity; order-free."""
    return subset_match(actual, expected, _comparer(ignore_args))


_MATCHERS = {
    MatchType.EXACT: exact_match,
    MatchType.IN_ORDER: in_order_match,
    MatchType.ANY_ORDER: any_order_match,
    MatchType.SUBSET: subset,
    MatchType.SUPERSET: any_order_match,
}


# --- reasons: said only once the match is decided, so passing invocations cost little --------

def difference(actual: FunctionCall, expected: FunctionCall, ignore_args: Equality) -> str:
    """How an actual call differs from an expected one: both calls, and the first argument that
    differs (or is missing, or not expected) when the tools are the same."""
    note = _arg_note(actual, expected, ignore_args)
    return f"expected {call_text(expected)}, got {call_text(actual)}{note}"


def _arg_note(actual: FunctionCall, expected: FunctionCall, ignore_args: Equality) -> str:
    """`: argument city differs` (or `missing`, `not expected`); empty for different tools."""
    if actual.name != expected.name or ignore_args is True:
        return ""
    if callable(ignore_args):
        owner = getattr(ignore_args, "__self__", None)
        arg = owner.first_difference(actual, expected) if isinstance(owner, ArgsComparer) else None
    else:
        got, want = actual.args or {}, expected.args or {}
        arg = next((k for k in dict.fromkeys([*want, *got])
                    if k not in got or k not in want or got[k] != want[k]), None)
    if arg is None:
        return ""
    what = ("missing" if arg not in (actual.args or {}) else
            "not expected" if arg not in (expected.args or {}) else "differs")
    return f": argument {arg} {what}"


def _closest(actual: Sequence[FunctionCall], candidates: Sequence[int], want: FunctionCall,
             ignore_args: Equality) -> str:
    """`; closest: call k, name(...): argument a differs`, for the first call of the same tool
    among `candidates` (indices into `actual`), if any."""
    k = next((k for k in candidates if actual[k].name == want.name), None)
    if k is None:
        return ""
    return f"; closest: call {k + 1}, {call_text(actual[k])}{_arg_note(actual[k], want, ignore_args)}"


def _calls(n: int) -> str:
    return f"{n} call{'' if n == 1 else 's'}"


def exact_reason(actual: Sequence[FunctionCall], expected: Sequence[FunctionCall],
                 ignore_args: Equality) -> str:
    """Why EXACT failed: the first call that differs, or the first missing or extra call."""
    for k, (a, e) in enumerate(zip(actual, expected, strict=False)):
        if not calls_equal(a, e, ignore_args):
            return f"call {k + 1}: {difference(a, e, ignore_args)}"
    if len(actual) < len(expected):
        k = len(actual)
        return (f"missing call {k + 1} of {len(expected)}: expected {call_text(expected[k])}, "
                f"got {_calls(len(actual))}")
    k = len(expected)
    return (f"extra call {k + 1}: {call_text(actual[k])} (expected {_calls(len(expected))}, "
            f"got {len(actual)})")


def in_order_reason(actual: Sequence[FunctionCall], expected: Sequence[FunctionCall],
                    ignore_args: Equality) -> str:
    """Why IN_ORDER failed: the first expected call not found after the ones matched before it."""
    pending = 0
    after = 0  # actual calls consumed up to the last match
    for i, call in enumerate(actual):
        if pending < len(expected) and calls_equal(call, expected[pending], ignore_args):
            pending += 1
            after = i + 1
    want = expected[pending]
    where = f" after call {after}" if after else ""
    near = _closest(actual, range(after, len(actual)), want, ignore_args)
    earlier = next((k for k in range(after) if calls_equal(actual[k], want, ignore_args)), None)
    if not near and earlier is not None:
        near = f"; it was made earlier, at call {earlier + 1}"
    return (f"expected call {pending + 1} of {len(expected)}, {call_text(want)}, not made in "
            f"order{where}{near}")


def any_order_reason(actual: Sequence[FunctionCall], expected: Sequence[FunctionCall],
                     ignore_args: Equality) -> str:
    """Why ANY_ORDER failed: the first expected call with no equal actual call left."""
    missing, unused = unmatched(actual, expected, ignore_args)
    want = expected[missing[0]]
    return (f"expected call {call_text(want)} not made ({len(expected) - len(missing)} of "
            f"{len(expected)} matched){_closest(actual, unused, want, ignore_args)}")


def subset_why(actual: Sequence[FunctionCall], expected: Sequence[FunctionCall],
               ignore_args: Equality) -> str:
    """Why SUBSET failed: the first call made that was not expected."""
    return subset_reason(actual, expected, _comparer(ignore_args))


def superset_why(actual: Sequence[FunctionCall], expected: Sequence[FunctionCall],
                 ignore_args: Equality) -> str:
    """Why SUPERSET failed: ANY_ORDER's reason, saying which side must contain which."""
    return superset_reason(any_order_reason(actual, expected, ignore_args))


def _in_order_keys(actual: tuple[Any, ...], expected: tuple[Any, ...]) -> bool:
    """`in_order_match` on call keys (`Invocation.call_keys`)."""
    if actual == expected:  # most matching pairs: one C-level comparison
        return True
    pending = iter(expected)
    want = next(pending, _END)
    for key in actual:
        if want is _END:
            break
        if key == want:
            want = next(pending, _END)
    return want is _END


def _any_order_keys(actual: tuple[Any, ...], expected: tuple[Any, ...]) -> bool:
    """`any_order_match` on call keys: each expected call takes the first equal one left."""
    if actual == expected:  # most matching pairs: one C-level comparison
        return True
    pool = list(actual)
    try:
        for want in expected:
            pool.remove(want)
    except ValueError:
        return False
    return True


_END = object()
# The ADK match types on call keys, equal to `_MATCHERS` where `ignore_args` is a bool.
_KEY_MATCHERS: dict[MatchType, Callable[[tuple[Any, ...], tuple[Any, ...]], bool]] = {
    MatchType.EXACT: tuple.__eq__,
    MatchType.IN_ORDER: _in_order_keys,
    MatchType.ANY_ORDER: _any_order_keys,
}

_REASONS = {
    MatchType.EXACT: exact_reason,
    MatchType.IN_ORDER: in_order_reason,
    MatchType.ANY_ORDER: any_order_reason,
    MatchType.SUBSET: subset_why,
    MatchType.SUPERSET: superset_why,
}
_MATCHED = {
    MatchType.EXACT: "as expected",
    MatchType.IN_ORDER: "expected in order",
    MatchType.ANY_ORDER: "expected, in any order",
    MatchType.SUBSET: "expected, every call made among them",
    MatchType.SUPERSET: "expected, in any order",
}


def matched_reason(kind: MatchType, got: Sequence[FunctionCall], want: Sequence[FunctionCall]) -> str:
    """Why a match passed: how many calls matched and how, and the extra calls allowed."""
    return matched_text(kind, len(got), len(want))


@lru_cache(maxsize=4096)
def matched_text(kind: MatchType, got: int, want: int) -> str:
    """`matched_reason` from the numbers of calls made (`got`) and expected (`want`), which are
    all it says: one string per (kind, got, want), shared by every match that had them."""
    said = (f"{_calls(want)} {_MATCHED[kind]}" if want else
            "no calls expected" + (f", {_calls(got)} made" if got else ", none made"))
    if kind != MatchType.EXACT and got > want:
        said += f" ({got - want} more allowed)"
    return f"{kind.value}: {said}"


@lru_cache(maxsize=4096)
def _matched_score(kind: MatchType, got: int, want: int) -> InvocationScore:
    """A pair decided on call keys that matched: 1.0 with `matched_text`, one object shared by
    every such pair with these numbers of calls (an invocation's score is read, never changed),
    where an object per invocation (and a function making its reason) was more for the
    allocator and, where results are kept, for the collector to walk."""
    return InvocationScore(1.0, None, None, matched_text(kind, got, want))


_memo = getattr  # read as a local name in the key loop


# The reason of a pair decided on call keys that did not match (bound with `partial`: made only
# when read).


def _keyed_failed(kind: MatchType, equal: Equality, actual: Invocation, expected: Invocation) -> str:
    return f"{kind.value}: {_REASONS[kind](actual.tool_calls(), expected.tool_calls(), equal)}"


Settings = tuple[Equality, frozenset[str], Callable[[tuple[Any, ...], tuple[Any, ...]], bool] | None]
# Per criterion object (kept in its entry, so that a reused id is never mistaken for it): what
# its settings derive to. A run builds its criterion once (`ConfiguredMetric.build`; the
# criteria here are `reusable`), but every instance built from one config (another run, a copy
# of the metric) shares the derivation; a resolved config is not changed (its wire form,
# `ConfiguredMetric.wire_dict`, is computed once too): a config object edited after its first
# use is not derived again. Deriving per case was ~10% of a trajectory pass at 10,000 cases
# (bench/README.md, session 14 review).
_SETTINGS: dict[int, tuple[ToolTrajectoryCriterion, Settings]] = {}


def _settings(criterion: ToolTrajectoryCriterion) -> Settings:
    """How calls compare (`ignore_args`, or an `args_match` comparer), the tools ignored, and
    the match type on call keys where it applies: ADK's match types with ADK's equality and no
    tool ignored are decided on the invocations' memoised call keys (one C-level comparison for
    EXACT); None otherwise."""
    entry = _SETTINGS.get(id(criterion))
    if entry is not None and entry[0] is criterion:
        return entry[1]
    # The comparer is built here, so a bad matcher is a config error before anything runs (see
    # the registry).
    equal: Equality = (ArgsComparer(criterion.args_match).equal
                       if criterion.args_match and not criterion.ignore_args else criterion.ignore_args)
    ignore = frozenset(criterion.ignore_tools)
    by_keys = _KEY_MATCHERS.get(criterion.match_type) if equal.__class__ is bool and not ignore else None
    if len(_SETTINGS) >= 256:
        _SETTINGS.clear()
    _SETTINGS[id(criterion)] = (criterion, (equal, ignore, by_keys))
    return equal, ignore, by_keys


class _Trajectory(PerInvocationCriterion):
    """The trajectory criteria's common part: how calls compare (`ignore_args`, `args_match`)."""

    criterion_model = ToolTrajectoryCriterion
    criterion: ToolTrajectoryCriterion

    def __init__(self, metric_name: str, criterion: ToolTrajectoryCriterion) -> None:
        super().__init__(metric_name, criterion)
        self.equal, self.ignore, self.by_keys = _settings(criterion)
        if criterion.per_agent is not None and not isinstance(self, ToolTrajectoryAvgScore):
            raise ValueError(f"per_agent applies to tool_trajectory_avg_score only; {metric_name} "
                             "matches flat")

    def calls(self, inv: Invocation) -> list[FunctionCall]:
        """The turn's calls, without those to `ignore_tools`."""
        return without(inv.tool_calls(), self.ignore) if self.ignore else inv.tool_calls()


class ToolTrajectoryAvgScore(_Trajectory):
    """`tool_trajectory_avg_score`: 1/0 per invocation by match type, mean over the case.

    Reason per invocation: on a match, how many calls matched and how; otherwise (by match
    type) the first differing call and argument, or the missing or extra call (EXACT), or the
    first expected call not made in order (IN_ORDER) or not made at all (ANY_ORDER), with the
    closest call of the same tool.
    """

    reusable = True  # nothing of a case is kept

    def score_pair(self, actual: Invocation, expected: Invocation) -> float:
        return self.assess_pair(actual, expected).score or 0.0

    per_agent = False  # this case's mode: set on the copy `score` makes for a per-agent case

    def agent_use(self) -> AgentUse:
        setting = self.criterion.per_agent
        return "never" if setting is False else "always" if setting else "several"

    def score(self, ctx: EvalContext) -> CriterionResult:
        setting = self.criterion.per_agent
        if setting is not False:  # auto or on: is this case matched per agent?
            mode = per_agent_mode(setting, ctx.expected or ())
            if isinstance(mode, str):
                return CriterionResult(None, [], error=mode)
            if mode:
                case = copy.copy(self)
                case.per_agent = True
                return PerInvocationCriterion.score(case, ctx)
        by_keys, expected = self.by_keys, ctx.expected
        if by_keys is None or expected is None:
            return super().score(ctx)
        # `assess_pair`'s key path inlined: this loop is most of a trajectory pass, and a
        # method call per invocation a measurable share of it. (With `by_keys`, the criterion's
        # equality is `ignore_args` itself.)
        # Scores are built with positional arguments (keywords cost half as much again).
        kind, ignore_args = self.criterion.match_type, self.criterion.ignore_args
        per: list[InvocationScore] = []
        matched = 0
        exact = by_keys is tuple.__eq__
        for a, e in zip(ctx.actual, expected, strict=False):
            # `call_keys` inlined where both memos are current (see `Invocation.call_keys`).
            da, de = a.intermediate_data, e.intermediate_data
            ma = _memo(da, CALLS_MEMO, None) if da is not None else None
            me = _memo(de, CALLS_MEMO, None) if de is not None else None
            if (ignore_args or ma is None or me is None or ma[1] != len(ma[0])
                    or me[1] != len(me[0])):
                got, want = a.call_keys(ignore_args), e.call_keys(ignore_args)
            else:
                got, want = ma[3], me[3]
            if got == want if exact else by_keys(got, want):
                matched += 1
                per.append(_matched_score(kind, len(got), len(want)))
            else:
                per.append(InvocationScore(0.0, None, None, partial(_keyed_failed, kind, ignore_args, a, e)))
        # The left-to-right sum of ones and zeros is `matched` exactly: the same mean.
        return self.summarise(per, matched / len(per) if per else None)

    def assess_pair(self, actual: Invocation, expected: Invocation) -> InvocationScore:
        kind = self.criterion.match_type
        if self.per_agent and isinstance(expected.intermediate_data, InvocationEvents):
            return self.assess_per_agent(kind, actual, expected)
        if (by_keys := self.by_keys) is not None:  # the calls themselves are read for a reason only
            ignore_args = self.criterion.ignore_args
            got_keys, want_keys = actual.call_keys(ignore_args), expected.call_keys(ignore_args)
            if by_keys(got_keys, want_keys):
                return InvocationScore(1.0, reason=matched_text(kind, len(got_keys), len(want_keys)))
            return InvocationScore(0.0, reason=partial(_keyed_failed, kind, ignore_args, actual, expected))
        got, want = self.calls(actual), self.calls(expected)
        if _MATCHERS[kind](got, want, self.equal):
            return InvocationScore(1.0, reason=lambda: matched_reason(kind, got, want))
        equal = self.equal
        return InvocationScore(0.0, reason=lambda: f"{kind.value}: {_REASONS[kind](got, want, equal)}")


    def assess_per_agent(self, kind: MatchType, actual: Invocation, expected: Invocation) -> InvocationScore:
        """Each agent's calls matched on their own (see `trajectory_agents`)."""
        got, want = authored_calls(actual, self.ignore), authored_calls(expected, self.ignore)
        equal = self.equal

        def match(a: Sequence[FunctionCall], e: Sequence[FunctionCall]) -> bool:
            return _MATCHERS[kind](a, e, equal)

        def explain(a: Sequence[FunctionCall], e: Sequence[FunctionCall]) -> str:
            return _REASONS[kind](a, e, equal)

        failing = agents_failing(got, want, match)
        # Every named agent's verdict, for the agent tree of reports (None: its calls matched).
        verdicts: dict[str, str | None] = {a: None for a, _ in [*want, *got] if a is not None}
        if not failing:
            passed = f"{kind.value}: {per_agent_passed(want, got)}"
            return InvocationScore(1.0, reason=passed, agents=verdicts)
        same = _comparer(equal)
        for agent in failing:
            if agent is not None:
                verdicts[agent] = f"{kind.value}: {per_agent_reason(got, want, agent, explain, same)}"
        why = per_agent_reason(got, want, failing[0], explain, same)
        return InvocationScore(0.0, reason=f"{kind.value}: {why}", agents=verdicts)


class ToolTrajectoryPrecision(_Trajectory):
    """`tool_trajectory_precision`: matched actual calls / actual calls, per invocation.

    Matching is one-to-one and order-free (as ANY_ORDER); `ignore_args` compares names only.
    No actual calls scores 1.0 when none were expected and 0.0 otherwise. Reason: the count and
    the first actual call that matched no expected one.
    """

    reusable = True  # nothing of a case is kept

    def score_pair(self, actual: Invocation, expected: Invocation) -> float:
        return self.assess_pair(actual, expected).score or 0.0

    def assess_pair(self, actual: Invocation, expected: Invocation) -> InvocationScore:
        got, want = self.calls(actual), self.calls(expected)
        if not got:
            return (InvocationScore(1.0, reason="no calls made, none expected") if not want else
                    InvocationScore(0.0, reason=lambda: f"no calls made, {_calls(len(want))} expected"))
        missing, unused = unmatched(got, want, self.equal)

        def said() -> str:
            text = f"{len(got) - len(unused)} of {_calls(len(got))} made were expected"
            if unused:
                text += f"; first extra: call {unused[0] + 1}, {call_text(got[unused[0]])}"
            return text

        return InvocationScore((len(want) - len(missing)) / len(got), reason=said)


class ToolTrajectoryRecall(_Trajectory):
    """`tool_trajectory_recall`: matched expected calls / expected calls, per invocation.

    No expected calls scores 1.0. Reason: the count and the first expected call not made.
    """

    reusable = True  # nothing of a case is kept

    def score_pair(self, actual: Invocation, expected: Invocation) -> float:
        return self.assess_pair(actual, expected).score or 0.0

    def assess_pair(self, actual: Invocation, expected: Invocation) -> InvocationScore:
        got, want = self.calls(actual), self.calls(expected)
        if not want:
            return InvocationScore(1.0, reason="no calls expected")
        missing, _ = unmatched(got, want, self.equal)

        def said() -> str:
            text = f"{len(want) - len(missing)} of {_calls(len(want))} expected were made"
            if missing:
                text += f"; first missing: {call_text(want[missing[0]])}"
            return text

        return InvocationScore((len(want) - len(missing)) / len(want), reason=said)


class ToolTrajectorySingleToolUse(PerInvocationCriterion):
    """`tool_trajectory_single_tool_use`: was the tool `tool_name` called?

    Per invocation: 1.0 if that invocation called it. Overall: 1.0 if any invocation of the
    case called it (the check is for the conversation's trajectory as a whole), else 0.0.
    Reference-free: expected invocations are not read. Reasons name the tool and, overall, the
    first invocation that called it.
    """

    reusable = True  # nothing of a case is kept

    criterion_model = SingleToolUseCriterion
    criterion: SingleToolUseCriterion
    requires_expected = False

    def score(self, ctx: EvalContext) -> CriterionResult:
        name = self.criterion.tool_name
        scores = [
            1.0 if any(c.name == name for c in inv.tool_calls()) else 0.0 for inv in ctx.actual
        ]
        overall = max(scores) if scores else None
        called, not_called = f"{name} called", f"{name} not called"
        per = [InvocationScore(s, reason=called if s else not_called) for s in scores]
        if overall is None:
            return CriterionResult(overall, per)
        threshold = self.criterion.threshold

        def reason() -> str:
            why = (f"{name} called in invocation {scores.index(1.0)}" if overall
                   else f"{name} not called in any of {len(scores)} invocation(s)")
            return f"{held_to(overall, threshold)}: {why}"

        return CriterionResult(overall, per, reason=reason)
