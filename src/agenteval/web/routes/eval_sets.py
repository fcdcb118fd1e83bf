"""Eval sets (ADK's `/apps/{app}/eval-sets/...` shapes): list, create, read; add a chat session
as a case; read, replace and delete a case; run cases in the background.

Files are `<app>/<set_id>.evalset.json`. Every change is a read-modify-write of the whole file,
one at a time per file, written atomically (`datasets.files.write_model`) in the snake_case
layout ADK reads.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, Body
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agenteval.criteria import default_registry
from agenteval.datasets import write_model
from agenteval.errors import DataError, from_validation_error
from agenteval.runner import EvalJob, Selection, Services, check_judges, resolve_config
from agenteval.schema import EvalCase, EvalConfig, EvalSet, LlmAsAJudgeCriterion, SessionInput
from agenteval.store import RunStore
from agenteval.web.context import ContractRoute, Web, WebDep, conflict, not_found
from agenteval.web.contract import Deleted, RunRef
from agenteval.web.paths import plain_name

router = APIRouter(prefix="/apps/{app}", tags=["eval sets"], route_class=ContractRoute)
BODY = "request body"


def _case(eval_set: EvalSet, case_id: str, app: str, set_id: str) -> EvalCase:
    case = eval_set.case(case_id)
    if case is None:
        not_found(f"eval set {set_id!r} of agent {app!r} has no case {case_id!r}")
    return case


def _edit(web: Web, app: str, set_id: str, change: Any) -> Any:
    """Reads the set, lets `change(eval_set)` edit it (and return what the route returns),
    writes it back."""
    path = web.eval_set_path(app, set_id)
    assert path is not None
    with web.writing(path):
        path, eval_set = web.eval_set(app, set_id)
        out = change(eval_set)
        write_model(path, eval_set)
    return out


@router.get("/eval-sets")
def list_eval_sets(app: str, web: WebDep) -> list[str]:
    return web.eval_set_ids(app)


@router.get("/eval_sets", include_in_schema=False)
def list_eval_sets_adk(app: str, web: WebDep) -> list[str]:
    return web.eval_set_ids(app)


@router.post("/eval-sets/{set_id}", status_code=201, response_model_exclude_none=True)
def create_eval_set(app: str, set_id: str, web: WebDep) -> EvalSet:
    """An empty eval set (409 if one exists by that id)."""
    path = web.eval_set_path(app, set_id, must_exist=False)
    if path is None or not plain_name(set_id):
        raise DataError(None, "set_id", f"{set_id!r} is not a plain name (letters, digits, _ - .)")
    with web.writing(path):
        if path.exists():
            conflict(f"agent {app!r} has an eval set {set_id!r} already")
        eval_set = EvalSet(eval_set_id=set_id, eval_cases=[], creation_timestamp=time.time())
        write_model(path, eval_set)
    return eval_set


@router.get("/eval-sets/{set_id}", response_model_exclude_none=True)
def get_eval_set(app: str, set_id: str, web: WebDep) -> EvalSet:
    return web.eval_set(app, set_id)[1]


class AddSession(BaseModel):
    model_config = ConfigDict(extra="forbid")

    eval_id: str = Field(min_length=1, max_length=256)
    session_id: str
    user_id: str


@router.post("/eval-sets/{set_id}/add-session", status_code=201, response_model_exclude_none=True)
def add_session(app: str, set_id: str, body: AddSession, web: WebDep) -> EvalCase:
    """The chat session as a new static case: its answered turns become the conversation, the
    state it started from the case's `session_input.state` (409 if the eval id exists)."""
    web.eval_set_path(app, set_id)  # 404 first when there is no such set
    session = web.sessions(app).get(body.session_id)
    if session is None or session.user_id != body.user_id:
        not_found(f"no session {body.session_id!r} of user {body.user_id!r} for agent {app!r}")
    turns = [t.invocation for t in session.turns if t.error is None]
    if not turns:
        raise DataError(None, "session_id", "the session has no answered turn to add")

    def add(eval_set: EvalSet) -> EvalCase:
        if eval_set.case(body.eval_id) is not None:
            conflict(f"eval set {set_id!r} has a case {body.eval_id!r} already")
        case = EvalCase(eval_id=body.eval_id, conversation=turns, creation_timestamp=time.time(),
                        session_input=SessionInput(app_name=app, user_id=body.user_id,
                                                   state=session.initial_state))
        eval_set.eval_cases.append(case)
        return case

    out: EvalCase = _edit(web, app, set_id, add)
    return out


@router.get("/eval-sets/{set_id}/eval-cases/{case_id}", response_model_exclude_none=True)
def get_case(app: str, set_id: str, case_id: str, web: WebDep) -> EvalCase:
    return _case(web.eval_set(app, set_id)[1], case_id, app, set_id)


CaseBody = Annotated[dict[str, Any], Body(description="The edited EvalCase.")]


@router.put("/eval-sets/{set_id}/eval-cases/{case_id}", response_model_exclude_none=True)
def put_case(app: str, set_id: str, case_id: str, web: WebDep, body: CaseBody) -> EvalCase:
    """Replaces the case with the body, validated as an EvalCase whose `eval_id` is `case_id`."""
    try:
        case = EvalCase.model_validate(body)
    except ValidationError as e:
        raise from_validation_error(BODY, e) from None
    if case.eval_id != case_id:
        raise DataError(BODY, "eval_id", f"{case.eval_id!r} is not the case being edited ({case_id!r})")

    def replace(eval_set: EvalSet) -> EvalCase:
        old = _case(eval_set, case_id, app, set_id)
        eval_set.eval_cases[eval_set.eval_cases.index(old)] = case
        return case

    out: EvalCase = _edit(web, app, set_id, replace)
    return out


@router.delete("/eval-sets/{set_id}/eval-cases/{case_id}")
def delete_case(app: str, set_id: str, case_id: str, web: WebDep) -> Deleted:
    def delete(eval_set: EvalSet) -> Deleted:
        eval_set.eval_cases.remove(_case(eval_set, case_id, app, set_id))
        return Deleted(deleted=case_id)

    out: Deleted = _edit(web, app, set_id, delete)
    return out


class RunRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    eval_ids: list[str] | None = Field(default=None, description="Cases to run (null: every case).")
    # Values are checked by the criteria registry, as a config file's are (strictly: "0.8" is
    # not a threshold).
    criteria: dict[str, Any] | None = Field(
        default=None, description="Criteria as in an eval config: name to threshold or criterion "
        "object (null: test_config.json beside the set, else the defaults).")
    judge_model: str | None = None
    num_samples: int | None = Field(default=None, ge=1, le=100)
    num_runs: int = Field(default=1, ge=1, le=1000)
    agent_model: str | None = Field(default=None, description="Model replacing the agent's own.")
    parallelism: int = Field(default=4, ge=1, le=256)


def _with_samples(criteria: dict[str, Any], num_samples: int | None) -> dict[str, Any]:
    """`num_samples` laid over every judged criterion's `judge_model_options`."""
    if num_samples is None:
        return criteria
    out: dict[str, Any] = {}
    for name, value in criteria.items():
        spec = default_registry().get(name)
        if spec is not None and issubclass(spec.criterion_model, LlmAsAJudgeCriterion):
            entry: dict[str, Any] = dict(value) if isinstance(value, dict) else {"threshold": value}
            options = entry.get("judge_model_options")
            entry["judge_model_options"] = {**(options if isinstance(options, dict) else {}),
                                            "num_samples": num_samples}
            value = entry
        out[name] = value
    return out


def prepare_run(web: Web, app: str, set_id: str, body: RunRequest) -> tuple[EvalJob, Services, Path]:
    """The job, its services and the store it is recorded in; everything that can be refused
    is refused here (a DataError naming what), before anything runs."""
    agent = web.agent(app)
    folder = web.app_dir(app)
    path, eval_set = web.eval_set(app, set_id)
    if body.eval_ids is not None:
        if not body.eval_ids:
            raise DataError(BODY, "eval_ids", "select at least one case (null runs them all)")
        for eval_id in body.eval_ids:
            if eval_set.case(eval_id) is None:
                raise DataError(path, "eval_cases", f"no case with eval_id {eval_id!r}")
    config, source = resolve_config(None, path)
    if body.criteria is not None or body.num_samples is not None:
        criteria = _with_samples(config.criteria if body.criteria is None else body.criteria,
                                 body.num_samples)
        try:  # read as a config file's `criteria` is (an integer threshold is a number)
            checked = EvalConfig.model_validate({"criteria": criteria}).criteria
        except ValidationError as e:
            raise from_validation_error(BODY, e) from None
        config = config.model_copy(update={"criteria": checked})
        source = BODY if body.criteria is not None else source
    job = EvalJob(agent=agent.agent, selections=[Selection(path, eval_set, body.eval_ids)],
                  config=config, config_source=source, judge_model=body.judge_model, command="web",
                  num_runs=body.num_runs, agent_model=body.agent_model, app_name=app,
                  agent_path=str(folder))
    job.concurrency = job.concurrency.model_copy(update={"cases": body.parallelism})
    services = Services.for_job(job, web.env, store_root=folder)
    check_judges(job.metrics(), job, services)
    RunStore(folder).check()
    return job, services, folder


@router.post("/eval-sets/{set_id}/run", status_code=202)
async def run_eval_set(app: str, set_id: str, body: RunRequest, web: WebDep) -> RunRef:
    """Starts a run of the selected cases in the background; returns its `run_id` once it has
    started. Follow it at `/api/runs/{run_id}/events`."""
    job, services, folder = await anyio.to_thread.run_sync(prepare_run, web, app, set_id, body)
    started = await web.jobs.start(job, services, folder, app, job.selections[0].eval_set.eval_set_id)
    return RunRef(run_id=started.run_id)
