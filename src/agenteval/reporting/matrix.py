"""The run matrix: N runs side by side, cases as rows and runs as columns (issue 27).

A run repeated (`num_runs` > 1) has a column per run index (`MatrixColumn`), in index order,
or only the column of one index when asked. Each cell is one case run: its verdict, score,
the answer (each invocation's final response, one line per invocation), the tool calls
(`name(arg=value)` lines) and the agent's error if it failed. A cell is `changed` when its
answer or calls differ from the cell to its left (the first column never is), with the line
diff against it; so "only cases whose output changed" sees changes between the repeats of one
run as well as between runs. Rows are the union of the runs' cases, in the order first seen.

A run enters as its cells (`RunCells`, made by `run_cells` from its case outcomes read one at a
time), so a large run is never held whole: a 50,000-case run's cells are its answers and calls.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agenteval.reporting.format import format_call
from agenteval.schema import EvalCaseResult, EvalSetResult, EvalStatus, content_text
from agenteval.verdicts.outcome import CaseOutcome, outcomes


@dataclass(frozen=True)
class MatrixColumn:
    """One column: a run index of one of the documents."""

    document: int  # its position in the documents given
    run_index: int
    run_indices: int  # how many run indices its document has (1: not repeated)


@dataclass(frozen=True)
class MatrixCell:
    """One case in one run (None in a row: the run lacks the case)."""

    status: EvalStatus
    score: float | None
    answer: list[str]
    calls: list[str]
    changed: bool = False
    diff: list[str] = field(default_factory=list)  # ndiff lines against the column to the left
    error: str | None = None  # the agent's error, when the case run ended in one


@dataclass(frozen=True)
class MatrixRow:
    """One eval id across the runs."""

    eval_id: str
    cells: list[MatrixCell | None]

    @property
    def changed(self) -> bool:
        return any(c is not None and c.changed for c in self.cells)


def _cell(case: CaseOutcome, run: EvalCaseResult) -> MatrixCell:
    answer: list[str] = []
    calls: list[str] = []
    for per in run.eval_metric_result_per_invocation:
        answer.append(content_text(per.actual_invocation.final_response, include_thoughts=False))
        calls += [format_call(c) for c in per.actual_invocation.tool_calls()]
    if case.num_runs <= 1:  # the case's verdict, which honoured the config's policy
        means = [m.mean for m in case.gating_metrics() if m.mean is not None]
        return MatrixCell(case.status, sum(means) / len(means) if means else None, answer, calls,
                          error=run.error_message)
    gating = {m.metric_name for m in case.gating_metrics()}
    scores = [m.score for m in run.overall_eval_metric_results
              if m.metric_name in gating and m.score is not None]
    return MatrixCell(run.final_eval_status, sum(scores) / len(scores) if scores else None, answer, calls,
                      error=run.error_message)


@dataclass(frozen=True)
class RunCells:
    """What the matrix takes of one run: its run indices in order, and per run index each
    case's cell, in case order."""

    run_indices: list[int]
    cells: dict[int, dict[str, MatrixCell]]


def run_cells(cases: Iterable[CaseOutcome]) -> RunCells:
    """The cells of a run's case outcomes (`verdicts.outcome.outcomes`' order), one case at a
    time: a case's first run of each run index (a later summary of the same eval id replaces
    an earlier one's cells, as in a dict of the cases)."""
    cells: dict[int, dict[str, MatrixCell]] = {}
    for case in cases:
        chosen: dict[int, EvalCaseResult] = {}
        for run in case.runs:
            chosen.setdefault(run.run_index, run)
        for index, run in chosen.items():
            cells.setdefault(index, {})[case.eval_id] = _cell(case, run)
    return RunCells(sorted(cells), cells)


def _cells(d: EvalSetResult | RunCells) -> RunCells:
    return d if isinstance(d, RunCells) else run_cells(outcomes(d))


def _against(cell: MatrixCell, left: MatrixCell | None) -> MatrixCell:
    if left is None or (left.answer == cell.answer and left.calls == cell.calls):
        return cell
    before = [*left.answer, *(f"call {c}" for c in left.calls)]
    after = [*cell.answer, *(f"call {c}" for c in cell.calls)]
    diff = [line for line in difflib.ndiff(before, after) if not line.startswith("?")]
    return MatrixCell(cell.status, cell.score, cell.answer, cell.calls, True, diff, cell.error)


def matrix_columns(documents: Sequence[EvalSetResult | RunCells],
                   run_index: int | None = None) -> list[MatrixColumn]:
    """The columns of `documents`: each document's run indices in order (only `run_index`, for a
    repeated document that has it; a document without it keeps its first index)."""
    out = []
    for k, d in enumerate(documents):
        indices = (d.run_indices if isinstance(d, RunCells) else
                   sorted({r.run_index for r in d.eval_case_results})) or [0]
        chosen = [run_index] if run_index in indices else indices if run_index is None else indices[:1]
        out += [MatrixColumn(k, i, len(indices)) for i in chosen]
    return out


def run_matrix(documents: Sequence[EvalSetResult | RunCells], changed_only: bool = False,
               run_index: int | None = None) -> list[MatrixRow]:
    """The matrix of `documents` (columns as `matrix_columns`); with `changed_only`, only rows
    with a cell changed against its left neighbour."""
    by_document = [_cells(d) for d in documents]
    columns = [by_document[col.document].cells.get(col.run_index, {})
               for col in matrix_columns(by_document, run_index)]
    order = list(dict.fromkeys(eval_id for column in columns for eval_id in column))
    rows = []
    for eval_id in order:
        cells: list[MatrixCell | None] = []
        left: MatrixCell | None = None
        for column in columns:
            cell = column.get(eval_id)
            if cell is not None:
                cell = _against(cell, left)
                left = cell
            cells.append(cell)
        row = MatrixRow(eval_id, cells)
        if row.changed or not changed_only:
            rows.append(row)
    return rows


__all__ = ["MatrixCell", "MatrixColumn", "MatrixRow", "RunCells", "matrix_columns", "run_cells", "run_matrix"]
