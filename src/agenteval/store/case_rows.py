"""What the run database keeps of one case (`CaseRows`), and a spool of them on disk.

A run recorded while it streams does not read its document back: each case's rows are made as
the case is decided (`case_rows`) and spooled to a temporary file (`RowSpool`), and the run is
recorded from the spool (`RunStore.record_outcomes`), so recording costs neither a second parse
of the document nor memory that grows with the run.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agenteval.schema import EvalStatus
from agenteval.verdicts.outcome import CaseOutcome


@dataclass(frozen=True)
class CaseRows:
    """One case's rows of the run database, without the run's id (known when it is recorded):
    the case row's fields after (run id, eval id, position), its metrics' and summaries' rows
    after the run id, and what the run's row sums."""

    eval_id: str
    status: EvalStatus
    num_runs: int
    seconds: float | None
    tokens: float | None
    error: str | None
    metrics: list[tuple[Any, ...]]
    summaries: list[tuple[Any, ...]]
    judges: tuple[str, ...]
    judge_tokens: int


def case_rows(c: CaseOutcome) -> CaseRows:
    """The rows of case `c` (its summary and runs)."""
    records = [record for r in c.runs for record in r.judge_records]
    return CaseRows(
        eval_id=c.eval_id, status=c.status, num_runs=c.num_runs, seconds=c.duration(),
        tokens=c.tokens(), error=next((r.error_message for r in c.runs if r.error_message), None),
        metrics=[(r.eval_id, r.run_index, m.metric_name, m.score, m.threshold, int(m.eval_status))
                 for r in c.runs for m in r.overall_eval_metric_results],
        summaries=[(c.eval_id, m.metric_name, m.threshold, m.runs, m.scored_runs, m.passed_runs, m.mean,
                    m.std, m.ci_low, m.ci_high, m.pass_at_k, m.pass_pow_k, int(m.eval_status))
                   for m in c.summary.metrics],
        judges=tuple(sorted({r.judge_model for r in records})),
        judge_tokens=sum(r.prompt_tokens for r in records))


class RowSpool:
    """Cases' rows written to a temporary file as they come and read back in order, once; in
    pickled lists of `_BATCH` plain tuples (one pickle per case cost twice as much, and a
    dataclass or an enum member pickles through its class's reduce, several times slower than
    a tuple of numbers and strings)."""

    _BATCH = 256

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 (closed when read back or dropped)
        self._pending: list[tuple[Any, ...]] = []
        self.count = 0

    def add(self, outcome: CaseOutcome) -> None:
        self.add_rows(case_rows(outcome))

    def add_rows(self, r: CaseRows) -> None:
        """Adds a case's rows made already (a resumed run's kept case: `store.kept`)."""
        self._pending.append((r.eval_id, int(r.status), r.num_runs, r.seconds, r.tokens, r.error, r.metrics,
                              r.summaries, r.judges, r.judge_tokens))
        self.count += 1
        if len(self._pending) >= self._BATCH:
            self._spill()

    def _spill(self) -> None:
        pickle.dump(self._pending, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self._pending = []

    def __iter__(self) -> Iterator[CaseRows]:
        if self._pending:
            self._spill()
        self._file.seek(0)
        try:
            left = self.count
            while left > 0:
                batch: list[tuple[Any, ...]] = pickle.load(self._file)  # written by this process only
                left -= len(batch)
                for eval_id, status, *rest in batch:
                    yield CaseRows(eval_id, EvalStatus(status), *rest)
        finally:
            self._file.close()

    def close(self) -> None:
        self._pending = []
        self._file.close()


__all__ = ["CaseRows", "RowSpool", "case_rows"]
