"""Per-argument matching in the trajectory criteria (`args_match`)."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.criteria import EvalContext, default_registry
from agenteval.criteria.args_match import ArgsComparer, build_matcher
from agenteval.errors import DataError
from agenteval.schema import FunctionCall
from tests.helpers import call, eval_set, inv


def eq(args_match: dict, actual: FunctionCall, expected: FunctionCall) -> bool:  # type: ignore[type-arg]
    return ArgsComparer(args_match).equal(actual, expected)


def test_placing_of_matchers() -> None:
    m = {"book": {"when": "ignore", "*": "text"}, "*": {"limit": {"match": "number", "abs": 1}}}
    assert eq(m, call("book", when="now", city=" PARIS "), call("book", when="later", city="paris"))
    # an ignored argument may be missing
    assert eq(m, call("book", city="paris"), call("book", when="later", city="paris"))
    assert not eq(m, call("book", city="rome"), call("book", city="paris"))
    assert eq(m, call("search", limit=10.5), call("search", limit=10))
    assert not eq(m, call("search", limit=12), call("search", limit=10))
    assert not eq(m, call("search", limit=10, extra=1), call("search", limit=10))  # extra argument
    assert not eq(m, call("other", q=1), call("search", q=1))


@pytest.mark.parametrize(("spec", "expected", "actual", "ok"), [
    ("exact", 1, 1.0, True), ("exact", "1", 1, False),
    ("subset", {"a": 1, "b": 2}, {"a": 1}, True), ("subset", {"a": 1}, {"a": 1, "c": 3}, False),
    ("superset", [1, 2], [2, 1, 3], True), ("superset", [1, 2, 2], [1, 2], False),
    ({"match": "regex", "pattern": r"ORD-\d{4}"}, "x", "ORD-1234", True),
    ({"match": "regex"}, r"\d+ items?", "3 items", True), ({"match": "regex"}, r"\d+", 3, False),
    ({"match": "number", "rel": 0.1}, 100, 109, True), ({"match": "number", "rel": 0.1}, 100, 111, False),
    ({"match": "number", "abs": 0.5}, True, 1, False),
    ("text", "New  York", "new york", True), ({"match": "text", "case": True}, "NY", "ny", False),
    ({"match": "text", "whitespace": True}, "a  b", "a b", False),
    ({"match": "callable", "path": "operator.le"}, 3, 5, True),
])
def test_matchers(spec: object, expected: object, actual: object, ok: bool) -> None:
    matcher = build_matcher(spec)
    assert matcher is not None and matcher(expected, actual) is ok


@pytest.mark.parametrize(("spec", "message"), [
    ("fuzzy", "unknown matcher 'fuzzy'"), ({"match": "regex", "pattern": "("}, "bad pattern"),
    ({"match": "number", "abs": "1"}, "must be numbers"), ({"match": "text", "casee": False}, "unknown key"),
    ({"match": "callable", "path": "no.such.fn"}, "cannot import 'no.such.fn'"), (3, "a matcher is"),
])
def test_bad_matchers_are_config_errors(spec: object, message: str) -> None:
    with pytest.raises(DataError, match=message) as info:
        default_registry().configure("tool_trajectory_avg_score",
                                     {"threshold": 1.0, "args_match": {"t": {"a": spec}}}, "cfg.json")
    assert str(info.value).startswith("cfg.json: criteria.tool_trajectory_avg_score.args_match.t.a: ")


def test_the_criteria_use_the_matchers_and_a_plain_config_is_unchanged() -> None:
    actual = [inv("q", "a", [call("get_weather", city="paris", unit="C")])]
    expected = [inv("q", "a", [call("get_weather", city="Paris", unit="celsius")])]
    ctx = EvalContext(actual=actual, expected=expected)
    registry = default_registry()
    plain = registry.configure("tool_trajectory_avg_score", 1.0).build()
    assert plain.score(ctx).score == 0.0
    matching = {"threshold": 1.0, "args_match": {"get_weather": {"city": "text", "unit": "ignore"}}}
    for name in ("tool_trajectory_avg_score", "tool_trajectory_precision", "tool_trajectory_recall"):
        assert registry.configure(name, matching).build().score(ctx).score == 1.0


def test_unknown_tools_and_arguments_name_the_key(tmp_path: Path) -> None:
    s = eval_set("s", {"c": [inv("q", "a", [call("get_weather", city="Paris")])]})
    path = tmp_path / "s.evalset.json"
    path.write_text(s.model_dump_json(exclude_none=True))
    for table, key, message in (
            ({"get_wether": {"city": "text"}}, "args_match.get_wether",
             "no expected tool call is named 'get_wether' (tools called: get_weather)"),
            ({"get_weather": {"town": "text"}}, "args_match.get_weather.town",
             "no expected call of 'get_weather' has an argument 'town' (arguments: city)"),
            ({"*": {"town": "text"}}, "args_match.*.town", "no expected call has an argument 'town'")):
        cfg = tmp_path / "cfg.json"
        cfg.write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": {
            "threshold": 1.0, "args_match": table}}}))
        r = CliRunner().invoke(cli, ["score", str(path), "--actual", str(path), "--config_file_path",
                                     str(cfg), "-o", str(tmp_path / "o.json")])
        assert r.exit_code == 2, r.output
        assert f"{cfg}: criteria.tool_trajectory_avg_score.{key}: {message}" in r.output
        assert not (tmp_path / "o.json").exists()
