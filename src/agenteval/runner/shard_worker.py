"""The worker side of a sharded `score` (`runner.sharded`): a worker process parses, pairs,
scores and serialises a chunk of cases at a time, and sends back each case's result and summary
as the JSON the result document holds, with the few numbers the run's totals and progress need.

A worker never reports bad input itself: whatever it cannot take (an item that does not parse or
validate, a case paired with another eval id, a conversation of another length, a criterion that
waits) comes back as a `Refusal`, and the run is read again as a stream in one process, whose
errors (file, case and field) are the ones the user sees.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, TypeVar

from pydantic import BaseModel

from agenteval.criteria.spec import ConfiguredMetric
from agenteval.datasets.nesting import MAX_DEPTH
from agenteval.datasets.scan import DepthScan
from agenteval.datasets.split import Span
from agenteval.datasets.stream import BYTE_SHAPES, has_exponents, read_item
from agenteval.errors import DataError
from agenteval.runner.placed_json import plain_numbers
from agenteval.runner.recorded import paired_case
from agenteval.runner.scoring import NotEvaluatedPolicy, score_case
from agenteval.schema import EvalCase, EvalStatus
from agenteval.store.fast_json import placed_json, plain
from agenteval.store.output import LISTED
from agenteval.store.placing import placed_model_json
from agenteval.verdicts.aggregate import summarise_case
from agenteval.verdicts.outcome import runs_duration, runs_tokens

T = TypeVar("T")


@dataclass(frozen=True)
class ShardSetup:
    """What every chunk of a run needs: the two files, the eval set and how to score."""

    expected_path: str
    actual_path: str
    eval_set_id: str
    metrics: Sequence[ConfiguredMetric]
    policy: NotEvaluatedPolicy
    gating: str


@dataclass
class Scored:
    """One case scored: its result's and summary's JSON (indented, None values kept, and
    indented again for their place in the document's lists, as `files.list_item` serialises
    them but for the separator), and what the totals and progress count. (Not frozen: a frozen
    dataclass sets each field through `object.__setattr__`, four times the cost, a case each.)"""

    eval_id: str
    result: bytes
    summary: bytes
    status: EvalStatus
    error: str | None
    metric_errors: int
    seconds: float | None  # the agent's, summed over invocations (`CaseOutcome.duration`)
    tokens: float | None
    elapsed: float  # seconds this case took to score


@dataclass
class Batch:
    """A chunk's cases scored, as the run's process needs them: one of each per case, in case
    order, but for the results and summaries, each a single run of bytes (every one after
    `store.output.LISTED`, as the document lists them), which `result_ends` and `summary_ends` cut (the
    offset just past each). Sent whole, the chunk's process reads it without a step per case
    for the document or the totals (250 `Scored` records were unpickled, each status rebuilt
    through its enum, and two writes and a totals update made per case)."""

    eval_ids: list[str]
    statuses: bytes  # each case's `EvalStatus` value, a byte each
    errors: list[str | None]  # the agent's error of each case
    agent_errors: int  # cases with an agent's error
    metric_errors: int  # metric errors of all the cases
    seconds: list[float]  # the agent's seconds of each case that has them, in case order
    tokens: list[float]  # its tokens, the same way
    elapsed: list[float]  # seconds each case took to score
    result_ends: list[int]
    summary_ends: list[int]
    results: bytes
    summaries: bytes
    placed: bool = False  # `results` and `summaries` are in the chunk's slot of shared memory, not here


def batch(scored: Sequence[Scored]) -> Batch:
    """`scored` (a chunk's cases, in order) as a `Batch`."""
    results = [piece for s in scored for piece in (LISTED, s.result)]
    summaries = [piece for s in scored for piece in (LISTED, s.summary)]
    return Batch(
        [s.eval_id for s in scored], bytes([s.status for s in scored]), [s.error for s in scored],
        sum(bool(s.error) for s in scored), sum(s.metric_errors for s in scored),
        [s.seconds for s in scored if s.seconds is not None],
        [s.tokens for s in scored if s.tokens is not None], [s.elapsed for s in scored],
        list(accumulate(len(r) + len(LISTED) for r in results[1::2])),
        list(accumulate(len(r) + len(LISTED) for r in summaries[1::2])),
        b"".join(results), b"".join(summaries))


@dataclass(frozen=True)
class Refusal:
    """Why a chunk was not scored here (the run is then read as a stream)."""

    why: str


_setup: ShardSetup | None = None
_write: Callable[[BaseModel], bytes] = placed_model_json


def start(setup: ShardSetup) -> None:
    """The worker's initializer: keeps the run's setup for its chunks, and pauses the cyclic
    GC for the worker's life, as `agenteval score` does in one process: a worker builds and
    frees each case's objects and makes no cycles worth collecting (a worker lives for one run).
    A case is written by `placed_json` (orjson where it writes pydantic's bytes) where its
    guarantee holds: the metrics' wire values (each metric result's `criterion`) are `plain`
    (checked here), and so are the numbers of the case's items (`plain_numbers`)."""
    global _setup, _write
    _setup = setup
    _write = placed_json if all(plain(m.wire_dict) for m in setup.metrics) else placed_model_json
    gc.disable()


def _done(coro: Coroutine[Any, Any, T]) -> T:
    """The value of a coroutine that never waits (deterministic criteria): no event loop."""
    try:
        coro.send(None)
    except StopIteration as stop:
        value: T = stop.value
        return value
    coro.close()
    raise _Waits


class _Waits(Exception):
    """A criterion waited on something: not for a worker."""


def _read(path: str, spans: Sequence[Span]) -> list[bytes] | None:
    """The bytes of each span (contiguous, in order) of the file at `path`, in one read; None
    when they nest deeper than an eval set may or hold a lone surrogate escape (as the stream's
    scan of the file would find: the items are two levels inside the file, and the run checks
    the rest of the file itself, `sharded.frame_ok`)."""
    start, end = spans[0][0], spans[-1][1]
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    scan = DepthScan()
    scan.feed(b"[[", MAX_DEPTH)
    scan.feed(data, MAX_DEPTH)
    if scan.deepest > MAX_DEPTH or scan.surrogates:
        return None
    return [data[a - start:b - start] for a, b in spans]


def score_chunk(first: int, expected: Sequence[Span], actual: Sequence[Span]) -> list[Scored] | Refusal:
    """Cases `first`, `first + 1`, ... whose items are at `expected` and `actual` (paired by
    position), scored; a Refusal at the first thing the streamed reader must say instead."""
    setup = _setup
    if setup is None:
        return Refusal("the worker was not started")
    try:
        wanted = _read(setup.expected_path, expected)
        got = _read(setup.actual_path, actual)
    except OSError as e:
        return Refusal(f"cannot read: {e}")
    if wanted is None or got is None:
        return Refusal(f"cases {first}-{first + len(expected) - 1}: nested too deep, or a lone surrogate")
    out: list[Scored] = []
    for k, (a, b) in enumerate(zip(wanted, got, strict=True)):
        i = first + k
        started = time.monotonic()
        # As the streamed reader reads them (pydantic's JSON parser alone takes a bare NaN, an
        # integer beyond 64 bits or 1e400, which it refuses).
        # (Each item's shape, and whether it may hold an exponent, made once for both checks
        # of its bytes.)
        shape_a, shape_b = a.translate(BYTE_SHAPES), b.translate(BYTE_SHAPES)
        exp_a, exp_b = has_exponents(a, shape_a), has_exponents(b, shape_b)
        case, recorded = read_item(EvalCase, a, shape_a, exp_a), read_item(EvalCase, b, shape_b, exp_b)
        if case is None or recorded is None:
            return Refusal(f"case {i} does not validate")
        if case.eval_id != recorded.eval_id:
            return Refusal(f"case {i}: the files list their cases in different orders")
        try:
            run = paired_case(case, recorded, i, setup.eval_set_id, setup.actual_path)
            result = _done(score_case(run, setup.metrics, setup.policy))
        except (DataError, _Waits) as e:
            return Refusal(f"case {i}: {e}")
        summary = summarise_case(case.eval_id, [result], setup.gating, setup.policy == "ignore")
        write = (_write if plain_numbers(a, shape_a, exp_a) and plain_numbers(b, shape_b, exp_b)
                 else placed_model_json)
        out.append(Scored(case.eval_id, write(result), write(summary),
                          summary.final_eval_status, result.error_message, len(result.metric_errors),
                          runs_duration((result,)), runs_tokens((result,)), time.monotonic() - started))
    return out


__all__ = ["Batch", "Refusal", "Scored", "ShardSetup", "batch", "score_chunk", "start"]
