"""The run header (`RunSpec`): written before a run starts, completed with its end and totals."""

from __future__ import annotations

import contextlib
import importlib.metadata
import time
import uuid
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from agenteval.runner.job import JobOptions
from agenteval.runner.selection import Selection, file_sha256
from agenteval.schema import EndpointOptions, EvalStatus
from agenteval.schema.base import measured_seconds
from agenteval.schema.run import EvalSetRef, ModelRoles, ReplayInfo, RunSpec, RunTotals
from agenteval.store.kept import KeptCase, Tally, figures
from agenteval.verdicts.outcome import CaseOutcome


@cache
def agenteval_version() -> str:
    try:
        return importlib.metadata.version("agenteval")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree
        return "0+unknown"


def new_run_id() -> str:
    """`YYYYmmdd-HHMMSS-xxxxxx`: sortable by start time, unique by its random tail."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"


def eval_set_ref(selection: Selection) -> EvalSetRef:
    path = selection.path
    sha256 = None
    if path is not None:  # (a sharded run's is taken as its files are split)
        # The selection's hash, not the store's (`store.record` brings the run database): the
        # same hex digest, None where the file cannot be read.
        with contextlib.suppress(OSError):
            sha256 = file_sha256(path)
    return EvalSetRef(eval_set_id=selection.eval_set.eval_set_id,
                      file=str(path) if path is not None else None, sha256=sha256,
                      case_ids=selection.case_ids, cases=selection.case_count())


def pinned(models: ModelRoles, endpoints: Mapping[str, EndpointOptions]) -> dict[str, dict[str, Any]] | None:
    """What the run's models pin for reruns: the embedded model's settings when a role uses it
    (see `models.local.pinning`); None when no model pins anything."""
    if "local" not in {models.agent, models.user_simulator, *models.judge}:
        return None
    from agenteval.models.local import pinning  # the embedded model's module: asyncio, its slots

    options = endpoints.get("local")
    return {"local": pinning(bool(options and options.deterministic))}


def start_header(job: JobOptions, selections: Sequence[Selection], models: ModelRoles,
                 num_runs: int = 1, endpoints: Mapping[str, EndpointOptions] | None = None) -> RunSpec:
    """The header of a run about to start (a replay's says what it replays: see
    `models.replay.replaying`)."""
    # Imported here: a header is made after a sharded `score` has forked its workers, which
    # need none of the model modules.
    from agenteval.models.replay import current_recording

    config = job.config
    recording = current_recording()
    replay = None if recording is None else ReplayInfo(source=recording.source, run_id=recording.run_id,
                                                       then=recording.then)
    return RunSpec(replay=replay, pinned=pinned(models, endpoints or {}),
        run_id=new_run_id(), command=job.command, argv=job.argv,
        eval_sets=[eval_set_ref(s) for s in selections],
        config=config.model_dump(mode="json", exclude_none=True), config_file=job.config_source,
        models=models, concurrency=job.concurrency, num_runs=num_runs,
        endpoints=dict(endpoints or {}),
        gating=config.repeat_gating, not_evaluated=config.not_evaluated,
        agenteval_version=agenteval_version(), started=time.time())


class TotalsCounter:
    """Run totals counted case by case, as cases finish (see `totals`)."""

    def __init__(self) -> None:
        self.cases = self.case_runs = self.agent_errors = self.metric_errors = self.max_runs = 0
        self.statuses = dict.fromkeys(EvalStatus, 0)
        self.seconds: float | None = None
        self.tokens: float | None = None
        self.uncertain = self.escalated = 0

    def add(self, case: CaseOutcome) -> None:
        """One eval id's verdict over its runs, and the runs."""
        self._count(case.num_runs, case.status, *figures(case))  # (made once with its journal verdict)

    def add_kept(self, case: KeptCase) -> None:
        """`add` of a case a resumed run kept, from the journal's verdict of it
        (`store.kept`): the same counts, without the case itself."""
        self._count(case.num_runs, case.status, case.seconds, case.tokens, case.tally)

    def _count(self, runs: int, status: EvalStatus, seconds: float | None, tokens: float | None,
               t: Tally) -> None:
        self.cases += 1
        self.max_runs = max(self.max_runs, runs)
        self.statuses[status] += 1
        if seconds is not None:
            self.seconds = (self.seconds or 0.0) + seconds
        if tokens is not None:
            self.tokens = (self.tokens or 0.0) + tokens
        self.case_runs += runs
        self.agent_errors += t.agent_errors
        self.metric_errors += t.metric_errors
        self.uncertain += t.uncertain
        self.escalated += t.escalated

    def totals(self, judge_calls: int, judge_prompt_tokens: int) -> RunTotals:
        return RunTotals(
            cases=self.cases, case_runs=self.case_runs, passed=self.statuses[EvalStatus.PASSED],
            failed=self.statuses[EvalStatus.FAILED], not_evaluated=self.statuses[EvalStatus.NOT_EVALUATED],
            agent_errors=self.agent_errors, metric_errors=self.metric_errors,
            agent_seconds=measured_seconds(self.seconds), agent_tokens=self.tokens, judge_calls=judge_calls,
            judge_prompt_tokens=judge_prompt_tokens, judge_uncertain=self.uncertain,
            judge_escalated=self.escalated)


def end_header(header: RunSpec, run_totals: RunTotals, model_calls: dict[str, int]) -> RunSpec:
    """The header completed in place with its end time, duration, the limits the endpoints
    actually had, and `run_totals`."""
    header.ended = time.time()
    header.duration_seconds = measured_seconds(header.ended - header.started)
    header.concurrency = header.concurrency.model_copy(update={"model_calls": model_calls})
    header.totals = run_totals
    return header


__all__ = ["TotalsCounter", "agenteval_version", "end_header", "new_run_id", "start_header"]
