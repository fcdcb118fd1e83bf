"""Re-scoring a result document a run at a time: the recorded runs of `eval_case_results`,
each paired with its expected case, with the checks of `recorded.runs_from_result`.

A result document lists a case's runs one after another (agenteval writes eval set, case, run
order), which is what lets each case be summarised as soon as its last run is scored. A document
whose runs of one case are apart raises `RunsApart` when the first run out of place is read (a
judged run reads the whole document before its first judge call, so it is found then).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import ijson

from agenteval.datasets.nesting import MAX_RESULT_DEPTH
from agenteval.datasets.stream import CaseStream, malformed, read_head
from agenteval.errors import DataError
from agenteval.runner.scoring import CaseRun
from agenteval.schema import EvalCase, EvalCaseResult


def _ids(path: str | Path, prefix: str) -> Iterator[str]:
    with open(path, "rb") as f:
        try:
            yield from ijson.items(f, prefix)
        except ijson.JSONError as e:
            raise malformed(path, e) from None


class RunsApart(DataError):
    """The result document lists some case's runs apart: it is re-scored in memory instead."""


def expected_ids(expected: CaseStream[EvalCase]) -> int:
    """The number of cases of the expected set; a DataError at a repeated eval id (read by id
    alone, so the set is not validated twice)."""
    first: dict[str, int] = {}
    for i, eval_id in enumerate(_ids(expected.path, "eval_cases.item.eval_id")):
        if (j := first.setdefault(eval_id, i)) != i:
            raise DataError(expected.path, f"eval_cases[{i}].eval_id",
                            f"duplicate eval_id {eval_id!r} (also eval_cases[{j}])")
    return len(first)


class ExpectedLookup:
    """Expected cases by eval id, read forward through their stream: a run whose case is behind
    the read position costs one more pass from the start (none when the runs follow the set's
    order, as agenteval writes them)."""

    def __init__(self, stream: CaseStream[EvalCase]) -> None:
        self._stream = stream
        self._cases = iter(stream)
        self._current: EvalCase | None = None

    def get(self, eval_id: str) -> EvalCase | None:
        if self._current is not None and self._current.eval_id == eval_id:
            return self._current
        for _ in range(2):  # on to the end, then once more from the start
            for _, case in self._cases:
                if case.eval_id == eval_id:
                    self._current = case
                    return case
            self._cases = iter(self._stream)
        return None


def is_result_document(path: str | Path) -> bool:
    """Whether the JSON file at `path` looks like a result document (its id comes first)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return b"eval_set_result_id" in head or b"evalSetResultId" in head


def open_results(path: str | Path) -> CaseStream[EvalCaseResult]:
    """The case runs of the result document at `path` (its nesting checked first); a
    DataError when `eval_case_results` is missing, not a list or empty."""
    stream = CaseStream(path, "eval_case_results", EvalCaseResult, MAX_RESULT_DEPTH)
    read_head(path, "eval_case_results", what="case run")
    return stream


def result_runs(expected: CaseStream[EvalCase], results: CaseStream[EvalCaseResult],
                eval_set_id: str) -> Iterator[CaseRun]:
    """The recorded runs of a result document, in its order, each with its expected case; an
    unknown eval id, a run recorded twice or a wrong number of invocations is a DataError naming
    the run."""
    from agenteval.runner.recorded import recorded_run  # (here: `eval` imports this module, never it)

    path = results.path
    lookup = ExpectedLookup(expected)
    seen: dict[tuple[str, int], int] = {}
    closed: set[str] = set()  # eval ids whose runs are behind
    last = None
    for i, got in results:
        if got.eval_id != last:
            if got.eval_id in closed:
                raise RunsApart(path, f"eval_case_results[{i}].eval_id",
                                f"a run of {got.eval_id!r} apart from its others")
            if last is not None:
                closed.add(last)
            last = got.eval_id
        if (j := seen.setdefault((got.eval_id, got.run_index), i)) != i:
            raise DataError(path, f"eval_case_results[{i}]", f"duplicate run {got.run_index} of eval_id "
                            f"{got.eval_id!r} (also eval_case_results[{j}])")
        case = lookup.get(got.eval_id)
        if case is None:
            raise DataError(path, f"eval_case_results[{i}].eval_id",
                            f"{got.eval_id!r} is not in the expected eval set")
        yield recorded_run(case, got, i, eval_set_id, path)


__all__ = ["ExpectedLookup", "RunsApart", "expected_ids", "is_result_document", "open_results",
           "result_runs"]
