"""The history's rows of a streamed run, spooled to disk as cases are decided and read back in
order, once."""

from __future__ import annotations

from agenteval.store.case_rows import RowSpool, case_rows
from agenteval.verdicts import summarise
from agenteval.verdicts.outcome import outcomes
from tests.result_builders import case, result


def test_the_spool_gives_back_every_case_s_rows_in_order_across_its_batches() -> None:
    n = RowSpool._BATCH * 2 + 7
    cases = outcomes(summarise(result([case(f"c{i}", {"m": (i % 3) / 2}) for i in range(n)])))
    spool = RowSpool()
    for c in cases:
        spool.add(c)
    got = list(spool)
    assert len(got) == spool.count == len(cases)
    assert got == [case_rows(c) for c in cases]
    assert [r.eval_id for r in got] == [f"c{i}" for i in range(len(cases))]


def test_an_empty_spool_gives_nothing() -> None:
    assert list(RowSpool()) == []
