import pytest

from agenteval.criteria import EvalContext, default_registry
from agenteval.criteria.trajectory import any_order_match, exact_match, in_order_match
from agenteval.schema import FunctionCall
from tests.helpers import call, inv

f, g, h = call("f", x=1), call("g"), call("h", y=[1, 2])


@pytest.mark.parametrize(("actual", "expected", "exact", "in_order", "any_order"), [
    ([], [], True, True, True),
    ([f], [], False, True, True),
    ([], [f], False, False, False),
    ([f, g], [f, g], True, True, True),
    ([g, f], [f, g], False, False, True),
    ([f, h, g], [f, g], False, True, True),
    ([f], [f, f], False, False, False),
    ([f, g, f], [f, f], False, True, True),
])
def test_match_types(actual: list[FunctionCall], expected: list[FunctionCall], exact: bool,
                     in_order: bool, any_order: bool) -> None:
    assert exact_match(actual, expected, False) is exact
    assert in_order_match(actual, expected, False) is in_order
    assert any_order_match(actual, expected, False) is any_order


def test_argument_equality_follows_python_values() -> None:
    assert exact_match([call("f", n=1)], [call("f", n=1.0)], False)
    assert not exact_match([call("f", n="1")], [call("f", n=1)], False)
    assert not exact_match([FunctionCall(name="f", args=None)], [FunctionCall(name="f", args={})], False)
    assert exact_match([call("f", q={"a": 1, "b": 2})], [call("f", q={"b": 2, "a": 1})], False)
    assert exact_match([FunctionCall(id="1", name="f", args={})], [FunctionCall(id="2", name="f", args={})],
                       False)
    assert exact_match([call("f", n=2)], [call("f", n=1)], True)


def _score(name: str, value: object, actual: list, expected: list) -> tuple:  # type: ignore[type-arg]
    metric = default_registry().configure(name, value)  # type: ignore[arg-type]
    r = metric.build().score(EvalContext(actual=actual, expected=expected))
    return r.score, [p.score for p in r.per_invocation]


def test_avg_score_is_mean_of_binary_invocation_scores() -> None:
    actual = [inv(calls=[f]), inv(calls=[g]), inv()]
    expected = [inv(calls=[f]), inv(calls=[f]), inv()]
    assert _score("tool_trajectory_avg_score", 1.0, actual, expected) == (2 / 3, [1.0, 0.0, 1.0])


def test_precision_and_recall_give_partial_credit() -> None:
    actual = [inv(calls=[f, g, h, g]), inv(calls=[]), inv(calls=[])]
    expected = [inv(calls=[f, g, call("z")]), inv(calls=[f]), inv(calls=[])]
    p, per_p = _score("tool_trajectory_precision", 0.5, actual, expected)
    r, per_r = _score("tool_trajectory_recall", 0.5, actual, expected)
    assert per_p == [0.5, 0.0, 1.0]
    assert per_r == [2 / 3, 0.0, 1.0]
    assert p == pytest.approx(0.5) and r == pytest.approx(5 / 9)


def test_precision_recall_ignore_args() -> None:
    actual = [inv(calls=[call("f", x=2)])]
    expected = [inv(calls=[call("f", x=1)])]
    assert _score("tool_trajectory_recall", {"threshold": 1, "ignore_args": True}, actual, expected)[0] == 1.0
    assert _score("tool_trajectory_recall", 1.0, actual, expected)[0] == 0.0


def test_single_tool_use() -> None:
    actual = [inv(calls=[g]), inv(calls=[f])]
    cfg = {"threshold": 1.0, "tool_name": "f"}
    assert _score("tool_trajectory_single_tool_use", cfg, actual, []) == (1.0, [0.0, 1.0])
    cfg["tool_name"] = "nope"
    assert _score("tool_trajectory_single_tool_use", cfg, actual, [])[0] == 0.0
