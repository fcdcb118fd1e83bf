"""The nesting limit on JSON input: exact on the bytes (strings and escapes included), located
when crossed, and what it admits can be validated, written and read back."""

import contextlib
import json
import random
from pathlib import Path
from typing import Any

import pytest

from agenteval.datasets import (
    load_eval_config,
    load_eval_set,
    load_session_file,
    nesting,
    parse_eval_set,
    read_json,
    write_model,
)
from agenteval.datasets.files import parse_json
from agenteval.datasets.nesting import MAX_DEPTH, deepest_path, too_deep
from agenteval.errors import DataError


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


_CHARS = ['[', ']', '{', '}', '"', '\\', 'a', ' ', ':', ',', '\n', 'é']


def _random_value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth <= 0 or roll < 0.3:
        text = "".join(rng.choice(_CHARS) for _ in range(rng.randint(0, 5)))
        return rng.choice([1, None, True, 2.5, text])
    if roll < 0.65:
        return [_random_value(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {"".join(rng.choice(_CHARS) for _ in range(3)): _random_value(rng, depth - 1)
            for _ in range(rng.randint(0, 3))}


@pytest.mark.parametrize("many_escapes", [False, True])
def test_depth_is_exact_whatever_the_strings_hold(monkeypatch: pytest.MonkeyPatch,
                                                   many_escapes: bool) -> None:
    if many_escapes:  # the regex path taken when escapes are too many for a loop
        monkeypatch.setattr(nesting, "_MANY_ESCAPES", 0)
    rng = random.Random(7)
    for _ in range(2000):
        value = _random_value(rng, rng.randint(0, 9))
        text = json.dumps(value, ensure_ascii=rng.random() < 0.5).encode()
        depth = _depth(value)
        for limit in range(10):
            assert too_deep(text, limit) == (depth > limit), (text, limit)
            assert (deepest_path(text, limit) is not None) == (depth > limit), (text, limit)


def test_brackets_and_escaped_quotes_in_strings_do_not_count() -> None:
    text = json.dumps({"a": ['"[[[[', "\\", "\\\"{{{{"]}).encode()
    assert not too_deep(text, 2)
    assert too_deep(text, 1)


def test_the_path_names_where_the_limit_is_crossed() -> None:
    text = b'{"eval_cases": [{"a": 1}, {"s": {"x.y": [[1]]}}]}'
    assert deepest_path(text, 4) == "eval_cases[1].s.x.y"
    assert deepest_path(b"[[[[1]]]]", 2) == "[0][0]"
    assert deepest_path(b"[[1]]", 2) is None


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _eval_set(state: str) -> str:
    return ('{"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": [], '
            f'"session_input": {{"app_name": "a", "user_id": "u", "state": {{"x": {state}}}}}}}]}}')


@pytest.mark.parametrize("depth", [MAX_DEPTH - 4, 150, 10_000])
def test_a_too_deep_eval_set_is_located_not_a_traceback(tmp_path: Path, depth: int) -> None:
    # The state's value sits 5 levels down (root, eval_cases, case, session_input, state).
    p = tmp_path / "deep.evalset.json"
    p.write_text(_eval_set(_nested(depth)))
    with pytest.raises(DataError) as err:
        load_eval_set(p)
    assert err.value.file == str(p)
    assert err.value.path.startswith("eval_cases[0].session_input.state.x[0][0]")
    # The container at level 101: eval_cases[0], then state.x and 95 more levels of [0].
    assert err.value.path.count("[0]") == 1 + MAX_DEPTH - 5
    assert err.value.message.startswith("nested more than 100 levels deep")


def test_deep_legacy_file_config_and_session(tmp_path: Path) -> None:
    legacy = tmp_path / "deep.test.json"
    legacy.write_text(f'[{{"query": "q", "expected_tool_use": [{{"tool_name": "t", '
                      f'"tool_input": {{"a": {_nested(10_000)}}}}}]}}]')
    config = tmp_path / "cfg.json"
    config.write_text(f'{{"criteria": {{"m": {{"threshold": 1, "x": {_nested(10_000)}}}}}}}')
    session = tmp_path / "s.session.json"
    session.write_text(f'{{"state": {{"a": {_nested(10_000)}}}}}')
    for path, load, where in [(legacy, load_eval_set, "[0].expected_tool_use[0].tool_input.a[0]"),
                              (config, load_eval_config, "criteria.m.x[0]"),
                              (session, load_session_file, "state.a[0]")]:
        with pytest.raises(DataError) as err:
            load(path)
        assert err.value.file == str(path) and err.value.path.startswith(where)


def test_the_deepest_eval_set_allowed_loads_writes_and_loads_again(tmp_path: Path) -> None:
    p = tmp_path / "deep.evalset.json"
    p.write_text(_eval_set(_nested(MAX_DEPTH - 5)))
    eval_set = load_eval_set(p)
    assert parse_eval_set(p, read_json(p)) == eval_set  # the general path agrees
    out = tmp_path / "out.evalset.json"
    write_model(out, eval_set)
    assert load_eval_set(out) == eval_set
    assert _depth(read_json(out)) == MAX_DEPTH


@pytest.mark.parametrize("text", [
    "[" * 10_000,
    '{"a": ' * 10_000,
    '{"eval_set_id": "s", "eval_cases": ' + "[" * 10_000 + "]" * 5,
    "[" * 10_000 + '"' + "]" * 10_000,  # an unterminated string swallows the closing brackets
    '["\\\\"' + ", [" * 10_000,
])
def test_malformed_deep_input_is_refused_before_the_parser_recurses(text: str) -> None:
    with pytest.raises(DataError) as err:
        parse_json("f.json", text.encode(), MAX_DEPTH)
    assert "nested more than 100 levels deep" in err.value.message


def test_no_truncation_or_garbling_of_deep_input_reaches_a_recursion_error() -> None:
    rng = random.Random(3)
    whole = json.dumps({"a": [{"b": "x\\\"[{"}] * 3, "c": json.loads(_nested(300))}).encode()
    for _ in range(300):
        text = bytearray(whole[:rng.randint(0, len(whole))])
        for _ in range(rng.randint(0, 3)):
            if text:
                text[rng.randrange(len(text))] = rng.choice(b'[]{}",:\\ ')
        with contextlib.suppress(DataError):  # malformed, or too deep: never a RecursionError
            parse_json("f.json", bytes(text), MAX_DEPTH)
