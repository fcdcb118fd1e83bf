"""Finding a stored run: by a result file's path, or by a reference into the run database."""

from __future__ import annotations

from pathlib import Path

from agenteval.errors import DataError
from agenteval.schema import EvalSetResult
from agenteval.store.db import RunStore
from agenteval.store.history import load_result
from agenteval.store.outcome_stream import OutOfOrder, outcome_stream
from agenteval.verdicts.paired import Runs, run_outcome, runs_of


def is_path(ref: str) -> bool:
    """A reference that names a file (an existing path, or anything ending in `.json`)."""
    return Path(ref).exists() or ref.endswith(".json")


def load_run(ref: str, root: str | Path) -> EvalSetResult:
    """A result document by file path, or by run id / prefix / alias from the store at `root`."""
    return load_result(ref) if is_path(ref) else RunStore(root).get(ref)


def load_summary(ref: str, root: str | Path) -> EvalSetResult:
    """Like `load_run`, but a stored run comes from the database alone (verdicts and criterion
    summaries, no case results): fast even for runs with large documents."""
    return load_result(ref) if is_path(ref) else RunStore(root).summary(ref)


def load_runs(ref: str, root: str | Path, *, summaries: bool = True) -> tuple[EvalSetResult, Runs]:
    """`load_summary` and each case run's verdict and criteria (`verdicts.paired.Runs`): from
    the document's case results for a file, from the database for a stored run
    (`RunStore.case_runs`). Without `summaries`, a stored run's document is its head alone (id,
    eval set, created, gating): all the paired comparison needs, where a 50,000-case run's
    summaries are 300,000 models."""
    if is_path(ref):
        read = _streamed_runs(Path(ref), summaries)
        if read is not None:
            return read
        document = load_result(ref)
        return document, runs_of(document)
    store = RunStore(root)
    if summaries:
        return store.summary(ref), store.case_runs(ref)
    row = store.resolve(ref)
    head = EvalSetResult(eval_set_result_id=row.run_id, eval_set_id=row.eval_set_id,
                         creation_timestamp=row.created, gating=row.gating)
    return head, store.case_runs(row.run_id)


def _streamed_runs(path: Path, summaries: bool) -> tuple[EvalSetResult, Runs] | None:
    """`load_runs` of a result file read one case at a time (`outcome_stream`): its head, its
    case summaries when asked for, and its runs, without holding its case results (a
    50,000-case document is 3.8 GB loaded whole). None when it cannot be read so: read whole
    then, which says what is wrong, if anything."""
    try:
        document, cases = outcome_stream(path)
        runs: Runs = {}
        kept = []
        for case in cases:
            runs[case.eval_id] = {r.run_index: run_outcome(r) for r in case.runs}
            if summaries:
                kept.append(case.summary)
    except (DataError, OutOfOrder):
        return None
    if summaries:
        document.summary = kept
    return document, runs


__all__ = ["is_path", "load_run", "load_runs", "load_summary"]
