"""Recording runs: each result document into the eval history, and its rows into the run DB.

`record(root, run)` is what every front end calls after a run; `record_run` records result
documents that have no run object (e.g. files written elsewhere)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agenteval.datasets.nesting import MAX_RESULT_DEPTH
from agenteval.datasets.stream import CaseStream
from agenteval.datasets.targets import remove_stale_temporaries
from agenteval.errors import AgentEvalError, DataError
from agenteval.schema import CaseSummary, EvalCaseResult, EvalSetResult, Run
from agenteval.store.db import RunStore
from agenteval.store.history import history_dir, list_results, load_result, save_result
from agenteval.verdicts.outcome import CaseOutcome


def file_sha256(path: str | Path) -> str | None:
    """The sha256 of a file's bytes (hex), or None if it cannot be read. Read in blocks: an eval
    set may be larger than the memory a run should take."""
    try:
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
        return digest.hexdigest()
    except OSError:
        return None


def record_run(root: str | Path, results: Sequence[EvalSetResult],
               paths: Sequence[str | Path] | None = None, meta: Mapping[str, Any] | None = None,
               eval_set_files: Sequence[str | Path | None] | None = None) -> list[str]:
    """Records results in `<root>/.agenteval/history.sqlite`; returns the run ids.

    `paths[i]` is where `results[i]`'s document was written; with `paths` None each result is
    first saved into `<root>/.agenteval/eval_history`. `meta` is shared by all results (see
    `RunStore.record` for its keys); `eval_set_files[i]`, when given, is recorded with the
    sha256 of its content as the eval set's version.
    """
    store = RunStore(root)
    ids = []
    for i, result in enumerate(results):
        path = Path(paths[i]) if paths is not None else save_result(root, result)
        info = dict(meta or {})
        set_file = eval_set_files[i] if eval_set_files is not None else None
        if set_file is not None:
            info.setdefault("eval_set_file", str(set_file))
            info.setdefault("eval_set_sha256", file_sha256(set_file))
        ids.append(store.record(result, path, info))
    return ids


def tidy(root: str | Path) -> None:
    """Leaves nothing a killed run left behind: removes temporary files of writers that died
    mid-write, and records result documents that were written but never recorded (a kill
    between the two steps), so every document in the history is in the database."""
    folder = history_dir(root)
    if not folder.is_dir():
        return
    remove_stale_temporaries(folder)
    store = RunStore(root)
    known = {row.result_path.resolve() for row in store.list_runs()}
    for path in list_results(root):
        if path.resolve() not in known:
            try:
                store.record(load_result(path), path)
            except AgentEvalError:  # not a result document after all: leave it be
                continue


def streamed_outcomes(path: str | Path, shell: EvalSetResult) -> Iterator[CaseOutcome]:
    """The cases of the document at `path` written with one run per case (as streamed scoring
    writes it), read back one at a time: each run with its summary."""
    runs = CaseStream(path, "eval_case_results", EvalCaseResult, MAX_RESULT_DEPTH)
    summaries = CaseStream(path, "summary", CaseSummary, MAX_RESULT_DEPTH)
    for (i, run), (_, summary) in zip(runs, summaries, strict=True):
        if run.eval_id != summary.eval_id:
            raise DataError(path, f"summary[{i}].eval_id", f"{summary.eval_id!r}, but "
                            f"eval_case_results[{i}] is of {run.eval_id!r}")
        yield CaseOutcome(shell.eval_set_id, shell.gating, summary, [run])


def record_streamed(root: str | Path, path: str | Path, shell: EvalSetResult) -> str:
    """Records the streamed document at `path` (in the history of `root`) in the run database,
    reading its cases back one at a time; `shell` is the document but its case lists."""
    tidy(root)
    return RunStore(root).record_outcomes(shell, streamed_outcomes(path, shell), path)


def record(root: str | Path, run: Run, paths: Sequence[str | Path] | None = None) -> list[Path]:
    """Saves each of the run's documents into `<root>/.agenteval/eval_history` (unless `paths`
    says where they already are) and records them in the run database, under the run's id
    (shared by all of them) with its header. Returns the documents' paths."""
    store = RunStore(root)
    tidy(root)
    saved = [Path(p) for p in paths] if paths is not None else [save_result(root, r) for r in run.results]
    for result, path in zip(run.results, saved, strict=True):
        store.record(result, path)
    return saved
