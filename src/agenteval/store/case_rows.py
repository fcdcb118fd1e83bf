"""What the run database keeps of one case (`CaseRows`), and a spool of them on disk.

A run recorded while it streams does not read its document back: each case's rows are made as
the case is decided (`case_rows`) and spooled to a temporary file (`RowSpool`), and the run is
recorded from the spool (`RunStore.record_outcomes`), so recording costs neither a second parse
of the document nor memory that grows with the run.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from agenteval.schema import EvalCaseResult, EvalStatus, MetricSummary
from agenteval.verdicts.outcome import CaseOutcome, unevaluated_reason


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
    judges, judge_tokens = judged(c.runs)
    return CaseRows(
        eval_id=c.eval_id, status=c.status, num_runs=c.num_runs, seconds=c.duration(),
        tokens=c.tokens(), error=first_error(c.runs),
        metrics=[(r.eval_id, *m) for r in c.runs for m in metric_rows((r,))],
        summaries=[(c.eval_id, *m) for m in summary_rows(c.summary.metrics, c.runs)],
        judges=judges, judge_tokens=judge_tokens)


# A model's fields read from its `__dict__` in one C call: a pydantic model's attribute reads go
# through its class's `__getattr__` hook, ~10 per criterion were most of a verdict's cost on the
# event loop (bench/README.md, session 19). (`m.__dict__`, not `vars(m)`: 3x fewer instructions.)
_METRIC = itemgetter("metric_name", "score", "threshold", "eval_status")
_SUMMARY = itemgetter("metric_name", "threshold", "runs", "scored_runs", "passed_runs", "mean", "std",
                      "ci_low", "ci_high", "pass_at_k", "pass_pow_k", "eval_status")


def metric_rows(runs: Iterable[EvalCaseResult]) -> list[tuple[Any, ...]]:
    """The metric rows of `runs` as the history keeps them, without run and eval ids: run
    index, criterion, score, threshold, status (an `int`)."""
    return [(r.run_index, name, score, threshold, int(status)) for r in runs
            for name, score, threshold, status in (_METRIC(m.__dict__)
                                                   for m in r.overall_eval_metric_results)]


def summary_rows(metrics: Iterable[MetricSummary], runs: Sequence[EvalCaseResult]) -> list[tuple[Any, ...]]:
    """The summary rows of a case's criterion summaries (of a case of `runs`) as the history
    keeps them, without run and eval ids: `_SUMMARY`'s fields, the status an `int`, and the
    reason of a criterion not evaluated (`unevaluated_reason`; None for any other status: the
    history's readers describe the others from their scores)."""
    return [(*values, int(status), unevaluated_reason(m, runs) if status == _NOT_EVALUATED else None)
            for m in metrics for *values, status in (_SUMMARY(m.__dict__),)]


_NOT_EVALUATED = EvalStatus.NOT_EVALUATED


def first_error(runs: Sequence[EvalCaseResult]) -> str | None:
    """The first run's agent error (None: no run ended in one)."""
    return next((r.error_message for r in runs if r.error_message), None)


def judged(runs: Sequence[EvalCaseResult]) -> tuple[tuple[str, ...], int]:
    """The judge models the runs' judge records name (sorted) and their prompt tokens."""
    records = [record for r in runs for record in r.judge_records]
    if not records:
        return (), 0
    return tuple(sorted({r.judge_model for r in records})), sum(r.prompt_tokens for r in records)


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


__all__ = ["CaseRows", "RowSpool", "case_rows", "first_error", "judged", "metric_rows", "summary_rows"]
