"""The run header (`RunSpec`): written before a run starts, completed with its end and totals."""

from __future__ import annotations

import importlib.metadata
import time
import uuid
from collections.abc import Mapping, Sequence
from functools import cache

from agenteval.runner.job import JobOptions
from agenteval.runner.selection import Selection
from agenteval.schema import EndpointOptions, EvalSetResult, EvalStatus
from agenteval.schema.run import EvalSetRef, ModelRoles, RunSpec, RunTotals
from agenteval.store import file_sha256
from agenteval.verdicts import outcomes


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
    return EvalSetRef(eval_set_id=selection.eval_set.eval_set_id,
                      file=str(path) if path is not None else None,
                      sha256=file_sha256(path) if path is not None else None,
                      case_ids=selection.case_ids, cases=selection.case_count())


def start_header(job: JobOptions, selections: Sequence[Selection], models: ModelRoles,
                 num_runs: int = 1, endpoints: Mapping[str, EndpointOptions] | None = None) -> RunSpec:
    """The header of a run about to start."""
    config = job.config
    return RunSpec(
        run_id=new_run_id(), command=job.command, argv=job.argv,
        eval_sets=[eval_set_ref(s) for s in selections],
        config=config.model_dump(mode="json", exclude_none=True), config_file=job.config_source,
        models=models, concurrency=job.concurrency, num_runs=num_runs,
        endpoints=dict(endpoints or {}),
        gating=config.repeat_gating, not_evaluated=config.not_evaluated,
        agenteval_version=agenteval_version(), started=time.time())


def totals(results: Sequence[EvalSetResult], judge_calls: int, judge_prompt_tokens: int) -> RunTotals:
    """Counts over every eval set's results (verdicts by case, over repeated runs)."""
    cases = [c for r in results for c in outcomes(r)]
    seconds = [s for c in cases if (s := c.duration()) is not None]
    tokens = [t for c in cases if (t := c.tokens()) is not None]
    statuses = [c.status for c in cases]
    runs = [run for r in results for run in r.eval_case_results]
    records = [record for run in runs for record in run.judge_records]
    return RunTotals(
        cases=len(cases), case_runs=len(runs),
        passed=statuses.count(EvalStatus.PASSED), failed=statuses.count(EvalStatus.FAILED),
        not_evaluated=statuses.count(EvalStatus.NOT_EVALUATED),
        agent_errors=sum(1 for run in runs if run.error_message),
        metric_errors=sum(len(run.metric_errors) for run in runs),
        agent_seconds=sum(seconds) if seconds else None,
        agent_tokens=sum(tokens) if tokens else None,
        judge_calls=judge_calls, judge_prompt_tokens=judge_prompt_tokens,
        judge_uncertain=sum(1 for r in records if r.uncertain and r.escalated is None),
        judge_escalated=sum(1 for r in records if r.escalated is not None))


def finish_header(header: RunSpec, results: Sequence[EvalSetResult], judge_calls: int,
                  judge_prompt_tokens: int, model_calls: dict[str, int]) -> RunSpec:
    """The header completed in place (every document of the run holds this same object):
    end time, duration, the limits the endpoints actually had, and the totals."""
    header.ended = time.time()
    header.duration_seconds = header.ended - header.started
    header.concurrency = header.concurrency.model_copy(update={"model_calls": model_calls})
    header.totals = totals(results, judge_calls, judge_prompt_tokens)
    return header


__all__ = ["agenteval_version", "finish_header", "new_run_id", "start_header", "totals"]
