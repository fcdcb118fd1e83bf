"""Durable runs: journaling each finished case run, and resuming a run the journal holds.

A run's fingerprint says what it covers (each eval set's content, the selected cases, the
config, the repeats): `--resume RUN` is refused when the fingerprint changed, naming what
changed, since the finished cases would no longer belong to the same run. It also keeps, not
compared, each streamed eval-set file's sha256 and what checking it found (`SetRecord`): a
resume over the same bytes trusts that rather than checking every case again
(`journaled_files`). A resumed run keeps its run id and start time, runs only the case runs
the journal lacks (with `retry_errors`, also those that ended in an agent or judge error), and
ends with the same document an uninterrupted run would write.

One process owns a run: resuming claims it (`Journal.claim`), and a run another live process
owns is refused (`RunOwned`). A run whose documents are all in the run history is finished:
resuming it raises `AlreadyFinished` (nothing runs, nothing is recorded again).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agenteval.datasets.legacy import legacy_case_id
from agenteval.errors import AgentEvalError, DataError
from agenteval.runner.job import EvalJob
from agenteval.runner.selection import SetRecord
from agenteval.schema import EvalCaseResult, RunSpec
from agenteval.store import RunRow, RunStore, load_result
from agenteval.store.journal import CaseKey, Journal, JournalReader
from agenteval.store.kept import KeptCase
from agenteval.store.record import recorded
from agenteval.store.sqlite import hold_wal

_SHOWN = 5  # case ids, config keys named in a refusal before "..."


class AlreadyFinished(AgentEvalError):
    """`--resume` of a run that is finished: its documents are recorded in the run history
    (`paths`); `passed` says whether every case of every document passed."""

    def __init__(self, run_id: str, paths: list[Path], passed: bool,
                 why: str = "nothing to resume") -> None:
        self.run_id, self.paths, self.passed = run_id, paths, passed
        super().__init__(f"run {run_id} is already finished: {why}; its results: "
                         + ", ".join(map(str, paths)))


def _parts(job: EvalJob) -> dict[str, Any]:
    """What the job covers, in the terms a refusal names: the eval sets (in order), each set's
    content digest and case selection (None: every case), the config and the repeats."""
    sets = job.selections
    return {"sets": [s.eval_set.eval_set_id for s in sets],
            "content": {s.eval_set.eval_set_id: s.digest() for s in sets},
            "selection": {s.eval_set.eval_set_id: s.case_ids for s in job.selections},
            "config": job.config.model_dump(mode="json"), "num_runs": job.num_runs,
            # Not compared (`changes`): what a resume over the same files' bytes trusts.
            "files": {s.eval_set.eval_set_id: s.streamed.record.to_json() for s in sets
                      if s.streamed is not None and s.streamed.record is not None}}


def fingerprint(job: EvalJob) -> str:
    """What the job covers (not how it runs: parallelism and models may change), as JSON text
    that `changes` can compare part by part."""
    return json.dumps(_parts(job), sort_keys=True, default=str)


def _legacy_fingerprint(job: EvalJob) -> str:
    """The digest runs journaled by agenteval before named fingerprints were kept."""
    sets = [(s.eval_set.eval_set_id, s.whole().model_dump_json(), s.case_ids) for s in job.selections]
    payload = json.dumps({"sets": sets, "config": job.config.model_dump(mode="json"),
                          "num_runs": job.num_runs}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def _few(items: list[str]) -> str:
    return ", ".join(items[:_SHOWN]) + (", ..." if len(items) > _SHOWN else "")


def _differing_keys(a: Any, b: Any, prefix: str = "") -> list[str]:
    """Dotted keys whose values differ between two JSON values."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [k for key in sorted(set(a) | set(b))
                for k in _differing_keys(a.get(key), b.get(key), f"{prefix}.{key}" if prefix else key)]
    return [] if a == b else [prefix or "(the whole config)"]


def _cases(ids: list[str] | None) -> str:
    return "every case" if ids is None else _few(ids)


def _digests_with_path_ids(job: EvalJob, set_id: str) -> list[str]:
    """The digest each `.test.json` set of `job` named `set_id` had when its case's id was its
    path as given, absolute too (`datasets.legacy.legacy_case_id` makes it relative now): the
    digest a run begun so was fingerprinted with, which a resume of it accepts (its case is run
    again: the journal keeps it under the old id)."""
    out = []
    for s in job.selections:
        if s.eval_set.eval_set_id != set_id or s.path is None or s.streamed is not None \
                or len(s.eval_set.eval_cases) != 1:
            continue
        (case,) = s.eval_set.eval_cases
        if case.eval_id != str(s.path) and case.eval_id == legacy_case_id(s.path):
            old_case = case.model_copy(update={"eval_id": str(s.path)})
            before = s.eval_set.model_copy(update={"eval_cases": [old_case]})
            out.append(hashlib.sha256(before.model_dump_json().encode()).hexdigest())
    return out


def changes(journaled: str, job: EvalJob) -> list[str]:
    """What differs between a journaled fingerprint and what `job` covers, one phrase each
    (empty: nothing)."""
    try:
        old = json.loads(journaled)
    except ValueError:
        old = None
    if not isinstance(old, dict):  # a digest: it says whether, not what
        return [] if journaled == _legacy_fingerprint(job) else \
            ["its eval sets, selected cases, config or number of runs"]
    new = _parts(job)
    out = []
    if old.get("sets") != new["sets"]:
        out.append(f"eval sets were {_few(old.get('sets') or [])}, now {_few(new['sets'])}")
    for set_id in new["sets"]:
        if set_id not in (old.get("sets") or []):
            continue
        was_content = old.get("content", {}).get(set_id)
        if was_content != new["content"][set_id] and was_content not in _digests_with_path_ids(job, set_id):
            out.append(f"eval set {set_id!r} changed")
        was, now = old.get("selection", {}).get(set_id), new["selection"][set_id]
        if was != now:
            out.append(f"cases selected from {set_id!r} were {_cases(was)}, now {_cases(now)}")
    if old.get("config") != new["config"]:
        out.append(f"config changed ({_few(_differing_keys(old.get('config'), new['config']))})")
    if old.get("num_runs") != new["num_runs"]:
        out.append(f"num_runs was {old.get('num_runs')}, now {new['num_runs']}")
    return out


def failed(result: EvalCaseResult) -> bool:
    """A case run that ended in an agent error or a criterion (judge) error."""
    return bool(result.error_message or result.metric_errors)


def _done(run_id: str, docs: list[RunRow], why: str = "nothing to resume") -> AlreadyFinished:
    return AlreadyFinished(run_id, [d.result_path for d in docs],
                           all(d.cases_passed == d.cases_total for d in docs), why)


def journaled_files(journal: Journal, run_id: str) -> dict[str, SetRecord]:
    """The records of the streamed eval-set files the run `run_id` was begun with, by the sha256
    of each file's bytes (for `select(trusted=...)`: a file whose bytes are unchanged is not
    checked again); empty when the journal holds none (a finished run, an older journal)."""
    journaled = journal.fingerprint(run_id)
    try:
        files = json.loads(journaled).get("files") if journaled else None
    except (ValueError, AttributeError):
        return {}
    records = [SetRecord.from_json(f) for f in files.values()] if isinstance(files, dict) else []
    return {r.sha256: r for r in records if r is not None}


def claim_resume(journal: Journal, ref: str, retry_errors: bool = False) -> str:
    """Claims the run `ref` (its id, a unique prefix of it, or `latest`: the newest run of the
    journal or the run history) for this process and returns its id. A finished run (its
    documents in the run history) is `AlreadyFinished`, unless `retry_errors` (`resume_from`
    then says whether any of its case runs ended in an error). `RunOwned` when another live
    process owns the run; a DataError when neither the journal nor the history knows it."""
    # Before the journal's first look-up: a killed run's WAL is then not merged into the file
    # (`Journal.hold_wal`) when that look-up's connection closes.
    journal.hold_wal()
    history = RunStore(journal.root)
    hold_wal(history.path)  # (and the history's: the killed run's stages, till the recording)
    if ref == "latest":
        newest = max(journal.run_times(), default=None)
        group = history.run_group("latest")
        if group is not None and (newest is None or group > newest):
            ref = group  # run ids sort by start time: the newest run is a finished one
        elif newest is not None:
            ref = newest
    try:
        run_id = journal.resolve(ref)
    except DataError:
        group = history.run_group(ref)
        if group is None:
            raise
        if not retry_errors:
            raise _done(group, history.documents(group)) from None
        run_id = group
    journal.claim(run_id)
    try:
        if journal.fingerprint(run_id) is None:  # finished (and forgotten, perhaps just now)
            if not retry_errors:
                raise _done(run_id, history.documents(run_id))
        elif (found := recorded(history, journal, run_id)) is not None:
            journal.forget(run_id)  # recorded, but its owner was killed before forgetting it
            raise _done(run_id, found)
    except BaseException:
        journal.release(run_id)
        raise
    return run_id


def _recorded_fingerprint(history: RunStore, run_id: str) -> str | None:
    """The fingerprint a finished run was recorded with (None: none, or an older agenteval's)."""
    docs = history.documents(run_id)
    found = (history.details(docs[0].run_id).get("meta") or {}).get("fingerprint") if docs else None
    return found if isinstance(found, str) else None


def _from_history(history: RunStore, run_id: str) -> tuple[RunSpec, str, list[EvalCaseResult]]:
    """A finished run whose errors are to be retried, from the run history: its header, the
    fingerprint kept with its documents, and every case run they hold. `AlreadyFinished` when
    none ended in an error."""
    docs = history.documents(run_id)
    results = [r for d in docs for r in load_result(d.result_path).eval_case_results]
    if not any(failed(r) for r in results):
        raise _done(run_id, docs, "no case run of it ended in an error, nothing to retry")
    fingerprint = _recorded_fingerprint(history, run_id)
    spec = history.header(docs[0].run_id)
    if not isinstance(fingerprint, str) or spec is None:
        raise DataError(history.path, "", f"run {run_id} was recorded without what it covers (by an older "
                        "agenteval): its errors cannot be retried; run it again")
    return spec, fingerprint, results


class Finished(Mapping[CaseKey, EvalCaseResult]):
    """The case runs of a resumed run that are kept, by (eval set id, eval id, run index): which
    they are is read at once (`in`, `len` and iteration cost nothing more), each result only
    when it is looked up, from the journal. A resume thus costs what its remaining case runs
    cost, until the document is written: a driver asks `key in finished` to know what to run,
    and `finished[key]` (or `get`) only where it needs the result itself, or `kept(key)` where
    the document copies the journal row and the rest needs only the run's digest."""

    def __init__(self, journal: Journal | None = None, run_id: str = "",
                 keys: set[CaseKey] | None = None) -> None:
        self._journal, self._run_id = journal, run_id
        self._keys: set[CaseKey] = keys or set()
        self._reader: JournalReader | None = None

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[CaseKey]:
        return iter(self._keys)

    def __getitem__(self, key: CaseKey) -> EvalCaseResult:
        return self._read(key, whole=True)

    def kept(self, key: CaseKey) -> EvalCaseResult:
        """The case run `key` for a run whose documents copy its journal row as it is (a
        streamed document): its digest, with the row remembered as its JSON
        (`JournalReader.kept`), which is all the run's other sinks read; the row itself is not
        parsed. KeyError when it is not kept."""
        return self._read(key, whole=False)

    def kept_cases(self, eval_set_id: str, eval_ids: Sequence[str], runs: int,
                   gating: str) -> list[KeptCase | None]:
        """Each of `eval_ids` (cases of one eval set, in order) whose `runs` runs are all kept,
        as the journal's verdict of it and its rows (`store.kept.KeptCase`: copied into a
        streamed document, counted and recorded without reading the runs), read together
        (`JournalReader.kept_cases`); None in its place when some run is not kept or the
        journal holds no usable verdict (its runs are then read with `kept`)."""
        if self._journal is None:
            return [None] * len(eval_ids)
        keys = self._keys
        if runs == 1:  # (the usual case: one look a case, not a generator's)
            every = [(eval_set_id, i, 0) in keys for i in eval_ids]
        else:
            every = [all((eval_set_id, i, r) in keys for r in range(runs)) for i in eval_ids]
        whole = eval_ids if all(every) else [i for i, kept in zip(eval_ids, every, strict=True) if kept]
        read = self._reader_().kept_cases(self._run_id, eval_set_id, whole, runs, gating) if whole else []
        if len(whole) == len(every):  # (every case asked about is kept: a resume's blocks)
            return read
        got = iter(read)
        return [next(got) if kept else None for kept in every]

    def _reader_(self) -> JournalReader:
        if self._reader is None:  # one connection for every lookup (they come by thousands)
            assert self._journal is not None
            self._journal.flush(self._run_id)
            self._reader = self._journal.reader()
        return self._reader

    def _read(self, key: CaseKey, whole: bool) -> EvalCaseResult:
        if key not in self._keys or self._journal is None:
            raise KeyError(key)
        reader = self._reader_()
        result = reader.result(self._run_id, key) if whole else reader.kept(self._run_id, key)
        if result is None:
            raise KeyError(key)
        return result

    def get(self, key: CaseKey, default: Any = None) -> Any:
        return self[key] if key in self._keys else default

    def source(self) -> tuple[Journal, str] | None:
        """The journal and id of the run (None: not journaled); a resumed run's kept case runs
        are read from it."""
        return (self._journal, self._run_id) if self._journal is not None else None


def _refuse_changes(source: str | Path, run_id: str, journaled: str, job: EvalJob) -> None:
    """Refuses the resume when `job` covers other things than the fingerprint `journaled`,
    read from `source` (the journal, or the history database for a finished run)."""
    different = changes(journaled, job)
    if different:
        raise DataError(source, "", f"cannot resume run {run_id}: since it started, "
                        + "; ".join(different) + " (only parallelism, models and limits may change)")


def check_unchanged(journal: Journal, run_id: str, job: EvalJob) -> None:
    """The DataError `resume_from` raises when the run `run_id` (journaled, else finished: its
    recorded fingerprint) covered other things than `job` does (its eval sets selected), raised
    early: before the agent is loaded or anything is said, and before a finished run is said to
    be finished (its results are not those of what `job` asks for)."""
    journaled = journal.fingerprint(run_id)
    if journaled is not None:
        _refuse_changes(journal.path, run_id, journaled, job)
        return
    history = RunStore(journal.root)
    recorded = _recorded_fingerprint(history, run_id)
    if recorded is not None:
        _refuse_changes(history.path, run_id, recorded, job)


def resume_from(job: EvalJob, journal: Journal, header: RunSpec) -> Finished:
    """The finished case runs of the run `job.resume` (those to keep; see `Finished`), after
    claiming it (see `claim_resume`) and checking it covers what `job` covers (a DataError
    naming what changed otherwise); `header` takes the run's id and start time. A finished run
    whose errors are retried goes back into the journal (from its documents) once the check
    passed."""
    if job.resume is None:  # (a fresh run: none kept, journaled under its header's id)
        return Finished(journal, header.run_id)
    run_id = job.resume if journal.owned_here(job.resume) else \
        claim_resume(journal, job.resume, job.retry_errors)
    try:
        journaled = journal.fingerprint(run_id)
        if journaled is not None:
            _refuse_changes(journal.path, run_id, journaled, job)
        else:
            history = RunStore(journal.root)
            spec, fingerprint, results = _from_history(history, run_id)
            _refuse_changes(history.path, run_id, fingerprint, job)
            journal.begin(spec, fingerprint, spec.totals.case_runs)
            journal.append_all(run_id, results)
    except BaseException:
        journal.release(run_id)
        raise
    previous = journal.spec(run_id)
    header.run_id, header.started = previous.run_id, previous.started
    return Finished(journal, run_id, journal.finished_keys(run_id, without_errors=job.retry_errors))


__all__ = ["AlreadyFinished", "Finished", "changes", "check_unchanged", "claim_resume", "failed",
           "fingerprint", "journaled_files", "resume_from"]
