"""A result document's case outcomes read one case at a time, for reports that need every case
but keep none (`agenteval report --format junit / markdown`): a 50,000-case run's document is
700 MB of JSON and 3.8 GB once loaded whole; read so, memory holds one case's runs and the
summaries.

The outcomes are those `verdicts.outcome.outcomes` gives for the loaded document, in the same
(summary) order. That order is the order of the case results in every document agenteval
writes; a document whose case results come in another order (or a case's runs apart) is
`OutOfOrder`, found while reading, and the caller reads it whole instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from agenteval.datasets.files import reading
from agenteval.datasets.nesting import MAX_RESULT_DEPTH
from agenteval.datasets.stream import CaseStream, read_head
from agenteval.errors import AgentEvalError
from agenteval.schema import CaseSummary, EvalCaseResult, EvalSetResult
from agenteval.verdicts.outcome import CaseOutcome, fallback_summary

_HEAD = ("eval_set_result_id", "eval_set_result_name", "eval_set_id", "creation_timestamp", "gating",
         "run", "metadata")


class OutOfOrder(AgentEvalError):
    """The document's case results are not in its summaries' order: read it whole."""


def outcome_stream(path: str | Path) -> tuple[EvalSetResult, Iterator[CaseOutcome]]:
    """The document at `path` without its case results and summaries (its id, eval set, gating,
    header), and its case outcomes one at a time. Reading errors are DataErrors naming the file
    and item, as `load_result`'s; the iterator raises `OutOfOrder` (see the module)."""
    with reading(path):  # a missing file, a directory: a DataError naming it, as `load_result`'s
        head = read_head(path, "eval_case_results", wanted=_HEAD, what="case run")
    document = EvalSetResult.model_validate({k: head[k] for k in _HEAD if k in head})
    summaries = CaseStream(path, "summary", CaseSummary, MAX_RESULT_DEPTH)
    results = CaseStream(path, "eval_case_results", EvalCaseResult, MAX_RESULT_DEPTH)
    return document, _outcomes(document, summaries, results)


def _outcomes(document: EvalSetResult, summaries: CaseStream[CaseSummary],
              results: CaseStream[EvalCaseResult]) -> Iterator[CaseOutcome]:
    told = (s for _, s in summaries)
    any_summary = None  # whether the document has summaries: known at its first case
    done: set[str] = set()
    for eval_id, runs in _cases(results):
        if eval_id in done:
            raise OutOfOrder(f"{results.path}: the runs of {eval_id!r} are apart")
        done.add(eval_id)
        summary = next(told, None)
        if any_summary is None:
            any_summary = summary is not None
        if not any_summary:  # (as ADK writes them) summarised here, as `outcomes` does
            summary = fallback_summary(eval_id, runs, document.gating)
        elif summary is None or summary.eval_id != eval_id:
            raise OutOfOrder(f"{results.path}: case results not in the summaries' order")
        yield CaseOutcome(document.eval_set_id, document.gating, summary,
                          sorted(runs, key=lambda r: r.run_index))
    if any_summary and next(told, None) is not None:
        raise OutOfOrder(f"{results.path}: a summary without case results")


def _cases(results: CaseStream[EvalCaseResult]) -> Iterator[tuple[str, list[EvalCaseResult]]]:
    """The case results grouped by eval id, as they follow each other."""
    runs: list[EvalCaseResult] = []
    for _, run in results:
        if runs and run.eval_id != runs[0].eval_id:
            yield runs[0].eval_id, runs
            runs = []
        runs.append(run)
    if runs:
        yield runs[0].eval_id, runs


__all__ = ["OutOfOrder", "outcome_stream"]
