"""The run matrix: N runs side by side, cases as rows and runs as columns (issue 27).

Each cell is one case in one run: its verdict, score, the answer (each invocation's final
response, one line per invocation) and the tool calls (`name(arg=value)` lines), from the case's
first run (run index 0). A cell is `changed` when its answer or calls differ from the cell to
its left (the first column never is), with the line diff against it. Rows are the union of the
runs' cases, in the order first seen.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field

from agenteval.reporting.format import format_call
from agenteval.schema import EvalSetResult, EvalStatus, content_text
from agenteval.verdicts.outcome import CaseOutcome, outcomes


@dataclass(frozen=True)
class MatrixCell:
    """One case in one run (None in a row: the run lacks the case)."""

    status: EvalStatus
    score: float | None
    answer: list[str]
    calls: list[str]
    changed: bool = False
    diff: list[str] = field(default_factory=list)  # ndiff lines against the column to the left


@dataclass(frozen=True)
class MatrixRow:
    """One eval id across the runs."""

    eval_id: str
    cells: list[MatrixCell | None]

    @property
    def changed(self) -> bool:
        return any(c is not None and c.changed for c in self.cells)


def _cell(case: CaseOutcome) -> MatrixCell:
    run = case.runs[0] if case.runs else None
    answer: list[str] = []
    calls: list[str] = []
    for per in run.eval_metric_result_per_invocation if run else []:
        answer.append(content_text(per.actual_invocation.final_response, include_thoughts=False))
        calls += [format_call(c) for c in per.actual_invocation.tool_calls()]
    means = [m.mean for m in case.gating_metrics() if m.mean is not None]
    return MatrixCell(case.status, sum(means) / len(means) if means else None, answer, calls)


def _against(cell: MatrixCell, left: MatrixCell | None) -> MatrixCell:
    if left is None or (left.answer == cell.answer and left.calls == cell.calls):
        return cell
    before = [*left.answer, *(f"call {c}" for c in left.calls)]
    after = [*cell.answer, *(f"call {c}" for c in cell.calls)]
    diff = [line for line in difflib.ndiff(before, after) if not line.startswith("?")]
    return MatrixCell(cell.status, cell.score, cell.answer, cell.calls, True, diff)


def run_matrix(documents: Sequence[EvalSetResult], changed_only: bool = False) -> list[MatrixRow]:
    """The matrix of `documents` (one column each, in order); with `changed_only`, only rows
    with a cell changed against its left neighbour."""
    columns = [{c.eval_id: _cell(c) for c in outcomes(d)} for d in documents]
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


__all__ = ["MatrixCell", "MatrixRow", "run_matrix"]
