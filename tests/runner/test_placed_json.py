"""`runner.placed_json`: what a `score` worker checks of a case's items' bytes before it writes the
case by orjson (`plain_numbers`), and a worker's writes with and without that guarantee."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from agenteval.datasets.stream import BYTE_SHAPES, has_exponents
from agenteval.runner import placed_json as pj
from agenteval.store.fast_json import placed_json
from agenteval.store.placing import placed_model_json


@pytest.mark.parametrize(("raw", "plain"), [
    (b'{"a": [1, 2.5, -3, 123456789012345.5, 99999999999999999999]}', True),
    (b'{"id": "adk-a447e7f593", "t": "up 1e3 times", "n": "2e5", "x": "52e599"}', True),
    (b'{\n "a": [\n  1e16,\n  2\n ]\n}', False),
    (b'{"a": -1.5E300}', False),
    (b'{"a": {"b": 1e2}}', False),  # an exponent at all: taken for large
    (b'{"a": 1234567890123456.0}', False),  # 16 digits before the point
    (b'{"a": "seen: 1e3, twice"}', False),  # text laid out as a value: costs the fast path only
])
def test_plain_numbers_finds_numbers_that_may_be_large_floats(raw: bytes, plain: bool) -> None:
    assert pj.plain_numbers(raw) is plain
    shape = raw.translate(BYTE_SHAPES)
    assert pj.plain_numbers(raw, shape) is plain
    assert pj.plain_numbers(raw, shape, has_exponents(raw)) is plain


def test_plain_numbers_does_not_look_at_an_ids_digits_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # `52e599` in an id has a number's shape: where the text holds no number written with an
    # exponent (`has_exponents`), such runs are not checked one by one.
    raw = b'{"id": "adk-a447e7f593", "x": "52e599", "n": [1, 2.5]}'

    def looked(*args: object) -> bool:
        raise AssertionError("looked at digit by digit")

    monkeypatch.setattr(pj, "_a_value", looked)
    assert pj.plain_numbers(raw) is True
    with pytest.raises(AssertionError, match="digit by digit"):
        pj.plain_numbers(raw.replace(b"2.5", b"2.5e3"))


def test_a_worker_writes_by_pydantic_when_a_metrics_wire_values_are_not_finite(tmp_path: Path) -> None:
    from agenteval.runner import shard_worker
    from agenteval.runner.shard_worker import ShardSetup
    from tests.runner.test_sharded import _JOB

    kept = shard_worker._setup, shard_worker._write
    try:
        metrics = _JOB.metrics()
        shard_worker.start(ShardSetup("e.json", "a.json", "s", metrics, "fail", "all"))
        assert shard_worker._write is placed_json
        odd = _JOB.metrics()
        odd[0].__dict__["wire_dict"] = {**odd[0].wire_dict, "criterion": {"threshold": float("nan")}}
        shard_worker.start(ShardSetup("e.json", "a.json", "s", odd, "fail", "all"))
        assert shard_worker._write is placed_model_json
    finally:
        shard_worker._setup, shard_worker._write = kept
        gc.enable()


@pytest.mark.parametrize("value", [b"1e20", b"-25000000000000000.5", b"0.5"])
def test_a_worker_writes_a_case_with_a_large_float_as_pydantic_does(tmp_path: Path, value: bytes) -> None:
    # A float read into a value typed `Any` (a call's args) is not checked as the case is
    # written: the worker looks for one in the items' bytes, and writes such a case by pydantic.
    from agenteval.datasets.split import item_spans
    from agenteval.runner import shard_worker
    from agenteval.runner.shard_worker import ShardSetup, score_chunk
    from tests.runner.test_sharded import _JOB, _sets

    kept = shard_worker._setup, shard_worker._write
    try:
        exp, act = _sets(tmp_path, n=4)
        for path in (exp, act):
            path.write_bytes(path.read_bytes().replace(b'"x": 1\n', b'"x": ' + value + b"\n"))
        spans = item_spans(exp, "eval_cases"), item_spans(act, "eval_cases")
        assert spans[0] is not None and spans[1] is not None
        shard_worker.start(ShardSetup(str(exp), str(act), "s", _JOB.metrics(), "fail", "all"))
        fast = score_chunk(0, *spans)
        shard_worker._write = placed_model_json
        slow = score_chunk(0, *spans)
        assert isinstance(fast, list) and isinstance(slow, list)
        assert [c.result for c in fast] == [c.result for c in slow]
        assert (b'"x": ' + (b"0.5" if value == b"0.5" else b"") in fast[1].result
                and (b"e+16" in fast[1].result or b"e+20" in fast[1].result or value == b"0.5"))
        assert [c.summary for c in fast] == [c.summary for c in slow]
    finally:
        shard_worker._setup, shard_worker._write = kept
        gc.enable()


