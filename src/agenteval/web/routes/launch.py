"""Starting a run from the web: what `agenteval eval` would use for an agent's eval set (the
dialog opens with it), and starting, resuming or retrying a run in the background.

The body is a parser of the runner's `RunRequest`: the config is resolved by the same rule as
the CLI's (`runner.request.request_config`: test_config.json beside the set, else the
defaults), so a run started without touching the dialog judges as `agenteval eval` does. Runs
are journaled like the CLI's, so a run the server lost can be resumed from either.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio.to_thread
from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from agenteval.errors import DataError
from agenteval.runner import EvalJob, RunPlan, Selection, Services, prepare, select
from agenteval.runner.durable import AlreadyFinished, claim_resume, journaled_files
from agenteval.runner.request import RunRequest, request_config, to_job
from agenteval.runner.selection import check_selected_once
from agenteval.schema import EvalConfig, RunSpec
from agenteval.schema.criterion import Rationales
from agenteval.store import RunStore
from agenteval.store.journal import Journal
from agenteval.web.chat import check_model
from agenteval.web.context import ContractRoute, Web, WebDep, conflict
from agenteval.web.contract import RunDefaults, RunRef, UnfinishedRun

router = APIRouter(prefix="/apps/{app}", tags=["eval sets"], route_class=ContractRoute)
BODY = "request body"


class RunBody(BaseModel):
    """A run of an eval set's cases, as the web asks for it (see `RunRequest` for each field)."""

    model_config = ConfigDict(extra="forbid")

    eval_ids: list[str] | None = Field(default=None, description="Cases to run (null: every case).")
    # Values are checked by the criteria registry, as a config file's are (strictly: "0.8" is
    # not a threshold).
    criteria: dict[str, Any] | None = Field(
        default=None, description="Criteria as in an eval config: name to threshold or criterion "
        "object (null: test_config.json beside the set, else the defaults, as agenteval eval).")
    judge_model: str | None = Field(default=None, description="The judge of every judged criterion.")
    escalate_judge_model: str | None = Field(default=None, description="Where every judged "
                                             "criterion's uncertain verdicts go.")
    num_samples: int | None = Field(default=None, ge=1, le=100, description="Judge samples per question.")
    judge_rationales: Rationales | None = Field(
        default=None, description="Which judge verdicts get a written rationale (null: each "
        "criterion's own, else negative).")
    num_runs: int = Field(default=1, ge=1, le=1000, description="Runs of every case.")
    agent_model: str | None = Field(default=None, description="Model replacing the agent's own.")
    parallelism: int = Field(default=4, ge=1, le=256, description="Case runs in flight at once.")
    case_timeout: float | None = Field(default=None, gt=0, description="Seconds per case run.")
    resume: str | None = Field(default=None, description="An interrupted run of this agent to "
                               "finish (its id, a unique prefix, or latest): only what it lacks runs.")
    retry_errors: bool = Field(default=False, description="With resume: also run again the case runs "
                               "that ended in an error.")

    def request(self, agent_path: Path) -> RunRequest:
        """The runner's request for the agent at `agent_path`."""
        return RunRequest(agent_path=str(agent_path), criteria=self.criteria, num_samples=self.num_samples,
                          judge_model=self.judge_model, escalate_judge_model=self.escalate_judge_model,
                          judge_rationales=self.judge_rationales,
                          num_runs=self.num_runs, agent_model=self.agent_model,
                          parallelism=self.parallelism, case_timeout=self.case_timeout,
                          resume=self.resume, retry_errors=self.retry_errors)


@router.get("/eval-sets/{set_id}/run-defaults")
def run_defaults(app: str, set_id: str, web: WebDep) -> RunDefaults:
    """The criteria `agenteval eval` would use for this set (test_config.json beside it, else the
    defaults), each as its resolved criterion object, and where they came from."""
    path, _ = web.eval_set(app, set_id)
    config, source = request_config(RunRequest(), path)
    job = to_job(RunRequest(), config, source, command="web")
    criteria = {m.name: m.criterion.model_dump(mode="json", exclude_none=True)
                for m in job.metrics() if not m.spec.informational}
    return RunDefaults(criteria=criteria, source=_shown(source, web.app_dir(app)))


def _shown(source: str | None, folder: Path) -> str | None:
    """A config file's path relative to the agent's folder (the page shows no server paths)."""
    if source is None:
        return None
    try:
        return str(Path(source).resolve().relative_to(folder.resolve()))
    except ValueError:
        return Path(source).name


def prepare_run(web: Web, app: str, set_id: str, body: RunBody) -> tuple[EvalJob, RunPlan, Services, Path]:
    """The job, its plan, its services (with the run journal) and the store it is recorded in; everything
    that can be refused is refused here (a DataError naming what), before anything runs. A
    resumed run is claimed here: a run another process owns, or a finished one, is refused."""
    agent = web.agent(app)
    check_model(agent, body.agent_model, BODY, "agent_model")  # (the runner's error names the CLI's flag)
    folder = web.app_dir(app)
    path = web.eval_set_path(app, set_id)
    assert path is not None
    selection: Selection | None = None
    if body.eval_ids is not None:
        path, eval_set = web.eval_set(app, set_id)
        if not body.eval_ids:
            raise DataError(BODY, "eval_ids", "select at least one case (null runs them all)")
        check_selected_once(path, body.eval_ids)  # as the CLI refuses it (it failed at recording)
        for eval_id in body.eval_ids:
            if eval_set.case(eval_id) is None:
                raise DataError(path, "eval_cases", f"no case with eval_id {eval_id!r}")
        selection = Selection(path, eval_set, body.eval_ids)
    request = body.request(folder)
    config, source = request_config(request, path, BODY)
    job = to_job(request, config, source, command="web", agent=agent.agent, app_name=app)
    RunStore(folder).check()
    services = Services.for_job(job, web.env, store_root=folder, journal=True)
    try:
        trusted = None
        if job.resume is not None and services.journal is not None:
            try:
                job.resume = claim_resume(services.journal, job.resume, job.retry_errors)
            except AlreadyFinished as e:
                conflict(str(e))
            # As the CLI: a set whose bytes the run journaled is not checked again.
            trusted = journaled_files(services.journal, job.resume)
        # Every case: read from the file as the run goes (`StreamedCases`), its record journaled.
        job.selections = [selection] if selection is not None else select([str(path)], stream=True,
                                                                          trusted=trusted)
        if job.resume is not None and services.journal is not None:
            _as_asked(job, services.journal, folder)
        run_plan = prepare(job, services)
    except BaseException:
        if services.journal is not None:
            services.journal.close()
        raise
    return job, run_plan, services, folder


def _header(journal: Journal, folder: Path, run_id: str) -> RunSpec | None:
    """The header of run `run_id`: journaled (unfinished), else recorded with its documents."""
    try:
        return journal.spec(run_id)
    except DataError:
        docs = RunStore(folder).documents(run_id)
        return RunStore(folder).header(docs[0].run_id) if docs else None


def _as_asked(job: EvalJob, journal: Journal, folder: Path) -> None:
    """A resumed run is finished as it was asked: its cases, repeats and config are taken from
    its header (the dialog need not repeat them; the run's fingerprint still checks the files)."""
    spec = _header(journal, folder, job.resume or "")
    if spec is None:
        return
    (selection,) = job.selections
    ref = next((e for e in spec.eval_sets if e.eval_set_id == selection.eval_set.eval_set_id), None)
    if ref is None:
        raise DataError(BODY, "resume", f"run {job.resume} did not run eval set "
                        f"{selection.eval_set.eval_set_id!r}")
    # (The set streamed when the run ran every case; loaded whole when it ran some.)
    job.selections = [selection if ref.case_ids is None and selection.streamed is not None else
                      Selection(selection.path, selection.whole(), ref.case_ids)]
    job.num_runs = spec.num_runs
    job.config, job.config_source = EvalConfig.model_validate(spec.config), spec.config_file


@router.get("/eval-sets/{set_id}/unfinished")
def unfinished_runs(app: str, set_id: str, web: WebDep) -> list[UnfinishedRun]:
    """The journaled runs of this eval set that did not finish, newest first: `interrupted`
    ones can be resumed (`resume` in the run body), `running` ones are owned by a live process."""
    _, eval_set = web.eval_set(app, set_id)
    journal = Journal(web.app_dir(app))
    out = []
    for r in journal.runs():
        if r.status == "finished":
            continue
        spec = journal.spec(r.run_id)
        if any(e.eval_set_id == eval_set.eval_set_id for e in spec.eval_sets):
            out.append(UnfinishedRun(run_id=r.run_id, status=r.status, started=r.started, done=r.done,
                                     total=r.total, errors=r.errors))
    return out


@router.post("/eval-sets/{set_id}/run", status_code=202)
async def run_eval_set(app: str, set_id: str, body: RunBody, web: WebDep) -> RunRef:
    """Starts (or, with `resume`, finishes) a run of the selected cases in the background;
    returns its `run_id` once it has started. Follow it at `/api/runs/{run_id}/events`."""
    job, run_plan, services, folder = await anyio.to_thread.run_sync(prepare_run, web, app, set_id, body)
    started = await web.jobs.start(job, services, folder, app, job.selections[0].eval_set.eval_set_id,
                                   run_plan)
    return RunRef(run_id=started.run_id)


__all__ = ["RunBody", "prepare_run", "router"]
