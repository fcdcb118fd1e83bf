"""`runner.driver`: the one case-by-case driver (scoring in order with bounded concurrency,
grouping runs by case, telling the sinks) under every run."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator

import anyio
import pytest

from agenteval.errors import DataError
from agenteval.runner import ScoreJob
from agenteval.runner.driver import Cases, Collected, Scorer, Sink, Sinks, drive, ordered_map
from agenteval.runner.recorded import pair_runs
from agenteval.schema import EvalCaseResult, EvalConfig, EvalSetResult, RunSpec
from agenteval.verdicts.outcome import CaseOutcome
from tests.helpers import eval_set, inv


class Heard(Sink):
    def __init__(self) -> None:
        self.events: list[str] = []

    def on_start(self, header: RunSpec, total: int) -> None:
        self.events.append(f"start {total}")

    def on_case_run(self, result: EvalCaseResult, seconds: float) -> None:
        self.events.append(f"run {result.eval_id}/{result.run_index}")

    def on_case(self, outcome: CaseOutcome) -> None:
        self.events.append(f"case {outcome.eval_id} {[r.run_index for r in outcome.runs]}")

    def on_document(self, document: EvalSetResult) -> None:
        self.events.append("document")


def _result(eval_id: str, run_index: int) -> EvalCaseResult:
    return EvalCaseResult(eval_set_id="s", eval_id=eval_id, run_index=run_index,
                          final_eval_status=1, overall_eval_metric_results=[],
                          eval_metric_result_per_invocation=[], session_id="x")


@pytest.mark.parametrize(("together", "heard"), [
    (True, ["case a [0, 1]", "case b [0]", "case a [2]"]),  # each case when the next one starts
    (False, ["case a [0, 1, 2]", "case b [0]"]),  # all at the end, in first-run order
])
def test_cases_group_runs_by_case(together: bool, heard: list[str]) -> None:
    sink = Heard()
    cases = Cases(sink, "mean", False, together)
    for eval_id, run in (("a", 1), ("a", 0), ("b", 0), ("a", 2)):
        cases.add(_result(eval_id, run))
    cases.close()
    assert sink.events == heard


def test_drive_tells_each_run_then_each_case_in_source_order() -> None:
    expected = eval_set("s", {f"c{i}": [inv(f"q{i}", f"a{i}")] for i in range(3)})
    metrics = ScoreJob(config=EvalConfig(criteria={"response_match_score": 0.5})).metrics()
    heard, collected = Heard(), Collected()
    asyncio.run(drive(pair_runs(expected, expected), Scorer(metrics), Sinks([heard, None, collected])))
    assert heard.events == ["run c0/0", "run c1/0", "case c0 [0]", "run c2/0", "case c1 [0]", "case c2 [0]"]
    ids = ["c0", "c1", "c2"]
    assert [r.eval_id for r in collected.results] == [s.eval_id for s in collected.summaries] == ids


def test_ordered_map_keeps_order_and_bounds_what_waits() -> None:
    emitted: list[int] = []
    running = 0
    most = 0

    async def slow(i: int) -> int:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await anyio.sleep(random.Random(i).random() / 200)
        running -= 1
        return i

    anyio.run(ordered_map, iter(range(100)), slow, 3, emitted.append)
    assert emitted == list(range(100)) and most == 3


def test_ordered_map_raises_the_first_error_itself() -> None:
    def items() -> Iterator[int]:
        yield 1
        raise DataError("f.json", "eval_cases[1]", "bad")

    async def same(i: int) -> int:
        return i

    with pytest.raises(DataError, match=r"f.json: eval_cases\[1\]: bad"):
        anyio.run(ordered_map, items(), same, 2, lambda i: None)

    def full(i: int) -> None:
        raise DataError("out.json", "", "cannot be written: No space left on device")

    with pytest.raises(DataError, match="No space left"):
        anyio.run(ordered_map, iter(range(10)), same, 2, full)
