"""Durable runs: journaling each finished case run, and resuming a run the journal holds.

A run's fingerprint says what it covers (each eval set's content, the selected cases, the
config, the repeats): `--resume RUN` is refused when the fingerprint changed, since the
finished cases would no longer belong to the same run. A resumed run keeps its run id and start
time, runs only the case runs the journal lacks (with `retry_errors`, also those that ended in
an agent or judge error), and ends with the same document an uninterrupted run would write.
"""

from __future__ import annotations

import hashlib
import json

from agenteval.errors import DataError
from agenteval.runner.job import EvalJob
from agenteval.schema import EvalCaseResult, RunSpec
from agenteval.store.journal import CaseKey, Journal


def fingerprint(job: EvalJob) -> str:
    """A digest of what the job covers (not of how it runs: parallelism and models may change)."""
    sets = [(s.eval_set.eval_set_id, s.eval_set.model_dump_json(), s.case_ids) for s in job.selections]
    payload = json.dumps({"sets": sets, "config": job.config.model_dump(mode="json"),
                          "num_runs": job.num_runs}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def failed(result: EvalCaseResult) -> bool:
    """A case run that ended in an agent error or a criterion (judge) error."""
    return bool(result.error_message or result.metric_errors)


def resume_from(job: EvalJob, journal: Journal, header: RunSpec) -> dict[CaseKey, EvalCaseResult]:
    """The finished case runs of the journaled run `job.resume` (those to keep), after checking
    it covers what `job` covers; `header` takes the run's id and start time."""
    if job.resume is None:
        return {}
    found = journal.get(job.resume)
    if found.fingerprint != fingerprint(job):
        raise DataError(journal.path, "", f"cannot resume run {found.run_id}: its eval sets, selected "
                        "cases, config or number of runs changed since it started")
    if found.status == "running":
        raise DataError(journal.path, "", f"run {found.run_id} is still running (process alive)")
    previous = journal.spec(found.run_id)
    header.run_id, header.started = previous.run_id, previous.started
    kept = journal.results(found.run_id)
    if job.retry_errors:
        kept = {k: v for k, v in kept.items() if not failed(v)}
    return kept


__all__ = ["failed", "fingerprint", "resume_from"]
