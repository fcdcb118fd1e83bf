"""A run's header: its measured times written without float noise."""

from __future__ import annotations

from agenteval.runner.header import TotalsCounter, end_header
from agenteval.schema import EvalStatus
from agenteval.schema.run import RunSpec
from agenteval.store.kept import Tally


def test_the_runs_times_are_written_to_the_microsecond() -> None:
    # Summed case times (0.1 + 0.2) and the wall clock's difference of two epoch times wrote
    # 0.30000000000000004 and 0.23715591430664062.
    counter = TotalsCounter()
    for seconds in (0.1, 0.2):
        counter._count(1, EvalStatus.PASSED, seconds, None, Tally())
    totals = counter.totals(0, 0)
    assert totals.agent_seconds == 0.3
    header = RunSpec(run_id="r", command="eval", started=1795977443.786981)
    end_header(header, totals, {})
    assert header.duration_seconds is not None and header.ended is not None
    assert header.duration_seconds == round(header.ended - header.started, 6)
    assert len(repr(header.duration_seconds).split(".")[1]) <= 6
