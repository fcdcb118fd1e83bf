"""Recording runs: each result document into the eval history, and its rows into the run DB.

`record(root, run)` is what every front end calls after a run; `record_run` records result
documents that have no run object (e.g. files written elsewhere)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agenteval.datasets.nesting import MAX_RESULT_DEPTH
from agenteval.datasets.stream import CaseStream
from agenteval.datasets.targets import remove_stale_temporaries
from agenteval.errors import AgentEvalError, DataError
from agenteval.schema import CaseSummary, EvalCaseResult, EvalSetResult, Run
from agenteval.store.case_rows import CaseRows
from agenteval.store.db import RunRow, RunStore, history_db_path
from agenteval.store.history import history_dir, list_results, load_result, save_result
from agenteval.store.journal import Journal
from agenteval.store.kept_copy import take as stop_stages
from agenteval.store.sqlite import let_wal_go
from agenteval.store.verdict_copy import settle
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


def tidy(root: str | Path, recording: str | Path | None = None) -> None:
    """Leaves nothing a killed run left behind: removes temporary files of writers that died
    mid-write, records result documents that were written but never recorded (a kill
    between the two steps), so every document in the history is in the database, and removes
    from the run journal the runs nobody owns whose documents are all recorded (a kill before
    the journal forgot them), and drops the staged rows of runs the journal no longer holds
    (`store.staging`). `recording`: a document in the history being recorded now (not a lost
    one)."""
    folder = history_dir(root)
    store, journal = RunStore(root), Journal(root)
    if not folder.is_dir():
        store.drop_unowned_stages(lambda: set(journal.run_times()))
        return
    remove_stale_temporaries(folder)
    known = {row.result_path.resolve() for row in store.list_runs()}
    if recording is not None:
        known.add(Path(recording).resolve())
    for path in list_results(root):
        if path.resolve() not in known:
            try:
                result = load_result(path)
                store.record(result, path, _journal_meta(journal, result.run.run_id if result.run else None))
            except AgentEvalError:  # not a result document after all: leave it be
                continue
    # The journaled runs by id alone (`Journal.runs` counts each run's case runs, reading its
    # rows file's tail: 0.01 s of a resumed 10,000-case run's recording, which is journaled but
    # has no document yet); counted only when one has documents in the history.
    journaled = set(journal.run_times())
    store.drop_unowned_stages(lambda: set(journal.run_times()), journaled)
    if not any(store.documents(run_id) for run_id in journaled):
        return
    for run in journal.runs():  # recorded, then killed before the journal forgot it
        if run.status == "interrupted" and store.documents(run.run_id):
            try:
                journal.claim(run.run_id)
                if recorded(store, journal, run.run_id):
                    journal.forget(run.run_id)
            except DataError:  # owned by a resume now, or forgotten by another process
                pass
            finally:
                journal.release(run.run_id)


def recorded(store: RunStore, journal: Journal, run_id: str) -> list[RunRow] | None:
    """The documents of the journaled run `run_id` when the run history holds one of each of
    its eval sets, all made after the journal's last change to it (a run recorded, then killed
    before the journal forgot it; not one whose errors are being retried); else None."""
    docs = store.documents(run_id)
    if not docs:  # (a resume's claim: its journal's case runs not counted)
        return None
    times = journal.run_times().get(run_id)
    if times is None or min(d.created for d in docs) < times[1]:
        return None
    wanted = {e.eval_set_id for e in journal.spec(run_id).eval_sets}
    return docs if wanted <= {d.eval_set_id for d in docs} else None


def streamed_outcomes(path: str | Path, shell: EvalSetResult) -> Iterator[CaseOutcome]:
    """The cases of the document at `path` written a case at a time (as streamed runs write it:
    each case's runs one after another, in the order of its summaries), read back one at a
    time: each case's runs with its summary."""
    runs = iter(CaseStream(path, "eval_case_results", EvalCaseResult, MAX_RESULT_DEPTH))
    summaries = CaseStream(path, "summary", CaseSummary, MAX_RESULT_DEPTH)
    pending = next(runs, None)
    for i, summary in summaries:
        case: list[EvalCaseResult] = []
        while pending is not None and pending[1].eval_id == summary.eval_id:
            case.append(pending[1])
            pending = next(runs, None)
        if not case:
            got = f"eval_case_results[{pending[0]}] is of {pending[1].eval_id!r}" if pending else \
                "no case run is left"
            raise DataError(path, f"summary[{i}].eval_id", f"{summary.eval_id!r}, but {got}")
        yield CaseOutcome(shell.eval_set_id, shell.gating, summary, case)
    if pending is not None:
        raise DataError(path, f"eval_case_results[{pending[0]}]", "a case run no summary is of")


def record_streamed(root: str | Path, path: str | Path, shell: EvalSetResult,
                    rows: Iterable[CaseRows] | None = None, journal: Journal | None = None) -> str:
    """Records the streamed document at `path` (in the history of `root`) in the run database,
    from `rows` (its cases' rows, made as they were decided: `store.case_rows.RowSpool`), else
    from the run journal's verdicts of its cases (a journaled run of one eval set: copied in
    SQLite, `RunStore.record_copied`, or read from older verdicts' records, `Journal.case_rows`),
    else reading its cases back one at a time; `shell` is the document
    but its case lists. As `record` does, documents recorded earlier under the run's id are
    replaced and the run is then forgotten by the run journal (`journal`: the one that owns the
    run, if this process does, so that forgetting it ends the ownership too: see `record`)."""
    store, journal = RunStore(root), journal or Journal(root)
    stop_stages(root, shell.eval_set_result_id)  # (staged while the run went on, if it was)
    tidy(root, recording=path)  # not read whole: this document is not lost
    run_id = shell.run.run_id if shell.run is not None else None
    earlier = store.documents(run_id) if run_id is not None else []
    meta = _journal_meta(journal, run_id)
    copied = None
    if rows is None and shell.run is not None and len(shell.run.eval_sets) == 1:
        if journal.copyable(shell.run.run_id, shell.eval_set_id, shell.run.totals.cases):
            copied = store.record_copied(shell, journal.path, shell.run.run_id, path, meta)
        else:
            rows = journal.case_rows(shell.run.run_id, shell.eval_set_id, shell.run.totals.cases)
    recorded_id = copied if copied is not None else store.record_outcomes(
        shell, rows if rows is not None else streamed_outcomes(path, shell), path, meta)
    _drop(root, store, [d for d in earlier if d.run_id != shell.eval_set_result_id])
    if run_id is not None:
        journal.forget(run_id)
    settle()  # (the history's checkpoint, beside the journal's forgetting)
    _let_wal_go(root)
    return recorded_id


def record(root: str | Path, run: Run, paths: Sequence[str | Path] | None = None,
           journal: Journal | None = None) -> list[Path]:
    """Saves each of the run's documents into `<root>/.agenteval/eval_history` (unless `paths`
    says where they already are) and records them in the run database, under the run's id
    (shared by all of them) with its header. Returns the documents' paths.

    Documents recorded earlier under the same run id (a resumed run whose first recording was
    cut short) are replaced, so a run is listed once. Once all are recorded, the run is
    forgotten by the run journal of `root` (`Journal.forget`): a kill at any point before
    leaves the run in the journal (interrupted, resumable), after it the run is fully
    recorded. `journal`: the `Journal` that owns the run, when this process does: forgetting
    the run through it ends the ownership then (its lock file removed, its writer thread and
    connections closed), not when that object is closed (a command's exit, after its other
    outputs: a kill before it left the lock file behind for good)."""
    store, journal = RunStore(root), journal or Journal(root)
    tidy(root)
    earlier = store.documents(run.run_id)
    meta = _journal_meta(journal, run.run_id)
    saved = [Path(p) for p in paths] if paths is not None else [save_result(root, r) for r in run.results]
    for result, path in zip(run.results, saved, strict=True):
        store.record(result, path, meta)
    _drop(root, store, [d for d in earlier if d.run_id not in {r.eval_set_result_id for r in run.results}])
    journal.forget(run.run_id)
    _let_wal_go(root)
    return saved


def _let_wal_go(root: str | Path) -> None:
    """Closes the history connection a resume's claim kept (`store.sqlite.hold_wal`) once the
    recording's are closed, unless the recording's close beside let it go (`closed_beside`):
    the last, it merges the WAL, as the recording's last connection did before."""
    held = let_wal_go(history_db_path(root))
    if held is not None:
        held.close()


def _journal_meta(journal: Journal, run_id: str | None) -> dict[str, Any]:
    """What the history keeps of a journaled run besides its documents: the fingerprint of
    what it covers (`--retry_errors` of the finished run checks it)."""
    fingerprint = journal.fingerprint(run_id) if run_id is not None else None
    return {"fingerprint": fingerprint} if fingerprint is not None else {}


def _drop(root: str | Path, store: RunStore, documents: Sequence[RunRow]) -> None:
    """Removes recorded documents: their rows, and their files when the history holds them."""
    folder = history_dir(root).resolve()
    for doc in documents:
        store.remove(doc.run_id)
        if doc.result_path.resolve().parent == folder:
            doc.result_path.unlink(missing_ok=True)
