"""The trajectory criteria's fast path: EXACT, IN_ORDER and ANY_ORDER decided on the
invocations' call keys give the scores of the call-by-call matchers, on arguments that
compare in Python's odd ways (1 == 1.0 == True, "1" != 1, None != {}, NaN != NaN, key order);
the keys follow the invocation when its calls change; and the criterion's inlined key loop
gives the results and reasons `assess_pair` gives call by call."""

from __future__ import annotations

import random

from agenteval.criteria.trajectory import _KEY_MATCHERS, _MATCHERS
from agenteval.schema import FunctionCall, MatchType
from tests.helpers import call, inv

_VALUES = [1, 1.0, True, "1", None, {}, [], float("nan"), {"a": 1, "b": 2}, {"b": 2, "a": 1}, [1, 2]]


def _random_calls(rng: random.Random) -> list[FunctionCall]:
    return [call(rng.choice(["f", "g"]), **({"x": rng.choice(_VALUES)} if rng.random() < 0.8 else {}))
            for _ in range(rng.randint(0, 4))]


def test_key_matchers_agree_with_the_call_matchers() -> None:
    rng = random.Random(11)
    nan = float("nan")
    shared = [call("f", x=nan)]  # the same NaN object on both sides: equal, as ADK finds it
    for _ in range(3000):
        got, want = _random_calls(rng), _random_calls(rng)
        if rng.random() < 0.2:
            got, want = got + shared, want + shared
        actual, expected = inv("q", "r", got), inv("q", "r", want)
        for kind, by_keys in _KEY_MATCHERS.items():
            for ignore_args in (False, True):
                slow = _MATCHERS[kind](actual.tool_calls(), expected.tool_calls(), ignore_args)
                fast = by_keys(actual.call_keys(ignore_args), expected.call_keys(ignore_args))
                assert fast == slow, (kind, ignore_args, got, want)
    assert set(_KEY_MATCHERS) == {MatchType.EXACT, MatchType.IN_ORDER, MatchType.ANY_ORDER}


def test_the_keys_follow_the_calls() -> None:
    one = inv("q", "r", [call("f", x=1)])
    assert one.call_keys(False) == (("f", {"x": 1}),)
    assert one.intermediate_data is not None
    one.intermediate_data.tool_uses.append(call("g"))  # type: ignore[union-attr]
    assert one.call_keys(True) == ("f", "g") and len(one.call_keys(False)) == 2
    one.intermediate_data = None
    assert one.tool_calls() == [] and one.call_keys(False) == ()


def test_the_keys_of_the_events_form_follow_added_events() -> None:
    from agenteval.schema import Content, InvocationEvent, InvocationEvents, Part

    def event(name: str) -> InvocationEvent:
        return InvocationEvent(author="a", content=Content(role="model", parts=[
            Part(function_call=FunctionCall(name=name, args={}))]))

    turn = inv("q", "r")
    turn.intermediate_data = InvocationEvents(invocation_events=[event("f")])
    assert turn.call_keys(True) == ("f",)
    turn.intermediate_data.invocation_events.append(event("g"))
    assert [c.name for c in turn.tool_calls()] == ["f", "g"] and turn.call_keys(True) == ("f", "g")
    turn.intermediate_data = InvocationEvents(invocation_events=[event("h")])
    assert turn.call_keys(True) == ("h",)
    assert turn == turn.model_copy(deep=True) and "_agenteval" not in turn.model_dump_json()


def test_the_inlined_key_loop_gives_the_call_by_call_results_and_reasons() -> None:
    """`ToolTrajectoryAvgScore.score` decides ADK's match types on call keys in one loop; with
    the key path switched off (`by_keys = None`) the same criterion matches call by call through
    `assess_pair`. Scores, overall and per-invocation reasons must be the same text."""
    from agenteval.criteria import EvalContext, default_registry

    rng = random.Random(29)
    registry = default_registry()
    for kind in ("EXACT", "IN_ORDER", "ANY_ORDER"):
        for ignore_args in (False, True):
            metric = registry.configure("tool_trajectory_avg_score", {
                "threshold": 0.5, "match_type": kind, "ignore_args": ignore_args, "per_agent": False})
            for _ in range(300):
                turns = rng.randint(0, 3)
                actual = [inv("q", "r", _random_calls(rng)) for _ in range(turns)]
                expected = [inv("q", "r", _random_calls(rng)) for _ in range(turns + rng.choice([0, 0, 1]))]
                # A second instance (`build` keeps one per metric) with the key path off.
                fast, slow = metric.build(), metric.spec.factory(metric.name, metric.criterion)
                slow.by_keys = None  # type: ignore[attr-defined]
                assert fast.by_keys is not None  # type: ignore[attr-defined]
                got = fast.score(EvalContext(actual=actual, expected=expected))
                want = slow.score(EvalContext(actual=actual, expected=expected))
                assert (got.score, got.reason) == (want.score, want.reason)
                assert [(p.score, p.reason) for p in got.per_invocation] == \
                    [(p.score, p.reason) for p in want.per_invocation]


def test_a_criterion_objects_settings_are_derived_once_and_only_for_it() -> None:
    from agenteval.criteria import default_registry

    registry = default_registry()
    exact = registry.configure("tool_trajectory_avg_score", {"threshold": 1.0, "ignore_tools": ["log"]})
    # Two instances of one configured criterion (as two runs of one config build).
    first, second = (exact.spec.factory(exact.name, exact.criterion) for _ in range(2))
    assert first is not second and first.ignore is second.ignore == frozenset({"log"})
    assert first.by_keys is None  # a tool ignored: decided call by call
    matching = registry.configure("tool_trajectory_avg_score",
                                  {"threshold": 1.0, "args_match": {"f": {"x": "text"}}})
    a, b = (matching.spec.factory(matching.name, matching.criterion) for _ in range(2))
    assert a.equal == b.equal and callable(a.equal) and a.by_keys is None
    for kind, by_keys in _KEY_MATCHERS.items():  # another criterion object: its own settings
        built = registry.configure("tool_trajectory_avg_score",
                                   {"threshold": 1.0, "match_type": kind.value}).build()
        assert built.by_keys is by_keys and built.equal is False and built.ignore == frozenset()
