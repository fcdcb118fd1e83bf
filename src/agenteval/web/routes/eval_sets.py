"""Eval sets (ADK's `/apps/{app}/eval-sets/...` shapes): list, create, read; add a chat session
or a stored run's case as a case; read, replace and delete a case. (Running a set's cases: `routes.launch`.)

Files are `<app>/<set_id>.evalset.json`; a legacy one (a list, ADK's .test.json) is read but not
changed (a 400 naming it and `migrate`, as the CLI says). Every change is a read-modify-write
of the whole file, one at a time per file, written atomically (`datasets.write_as_read`: what
was not edited, explicit nulls included, is written as it was read) in the snake_case layout
ADK reads. A case is read and returned as it is in the file too (nulls included, defaults not
given left out), so that the case editor's save of what it read changes nothing it did not edit.
"""

from __future__ import annotations

import hashlib
import time
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agenteval.datasets import write_as_read
from agenteval.datasets.authoring import check_new_case_id
from agenteval.errors import DataError, from_validation_error
from agenteval.schema import EvalCase, EvalSet, SessionInput
from agenteval.web.context import ContractRoute, Web, WebDep, conflict, not_found
from agenteval.web.contract import Deleted
from agenteval.web.paths import plain_name

router = APIRouter(prefix="/apps/{app}", tags=["eval sets"], route_class=ContractRoute)
BODY = "request body"


def _case(eval_set: EvalSet, case_id: str, app: str, set_id: str) -> EvalCase:
    case = eval_set.case(case_id)
    if case is None:
        not_found(f"eval set {set_id!r} of agent {app!r} has no case {case_id!r}")
    return case


def case_tag(case: EvalCase) -> str:
    """The case's version (an HTTP entity tag): a hash of its JSON as `GET` returns it, so that
    an edit made elsewhere (another tab, the file edited) since the page read it is noticed."""
    data = case.__pydantic_serializer__.to_json(case, exclude_unset=True)
    return '"' + hashlib.sha256(data).hexdigest()[:32] + '"'


def _edit(web: Web, app: str, set_id: str, change: Any) -> Any:
    """Reads the set, lets `change(eval_set)` edit it (and return what the route returns),
    writes it back."""
    path = web.eval_set_path(app, set_id)
    assert path is not None
    with web.writing(path):
        path, eval_set = web.eval_set(app, set_id, to_edit=True)
        out = change(eval_set)
        write_as_read(path, eval_set)
    return out


@router.get("/eval-sets")
def list_eval_sets(app: str, web: WebDep) -> list[str]:
    return web.eval_set_ids(app)


@router.get("/eval_sets", include_in_schema=False)
def list_eval_sets_adk(app: str, web: WebDep) -> list[str]:
    return web.eval_set_ids(app)


@router.post("/eval-sets/{set_id}", status_code=201, response_model_exclude_unset=True)
def create_eval_set(app: str, set_id: str, web: WebDep) -> EvalSet:
    """An empty eval set (409 if one exists by that id)."""
    path = web.eval_set_path(app, set_id, must_exist=False)
    if path is None or not plain_name(set_id):
        raise DataError(None, "set_id", f"{set_id!r} is not a plain name (letters, digits, _ - .)")
    with web.writing(path):
        if path.exists():
            conflict(f"agent {app!r} has an eval set {set_id!r} already")
        eval_set = EvalSet(eval_set_id=set_id, eval_cases=[], creation_timestamp=time.time())
        write_as_read(path, eval_set)
    return eval_set


@router.get("/eval-sets/{set_id}", response_model_exclude_unset=True)
def get_eval_set(app: str, set_id: str, web: WebDep) -> EvalSet:
    return web.eval_set(app, set_id)[1]


class AddSession(BaseModel):
    model_config = ConfigDict(extra="forbid")

    eval_id: str = Field(min_length=1, max_length=256)
    session_id: str
    user_id: str


@router.post("/eval-sets/{set_id}/add-session", status_code=201, response_model_exclude_unset=True)
def add_session(app: str, set_id: str, body: AddSession, web: WebDep) -> EvalCase:
    """The chat session as a new static case: its answered turns become the conversation, the
    state it started from the case's `session_input.state` (409 if the eval id exists)."""
    web.eval_set_path(app, set_id)  # 404 first when there is no such set
    check_new_case_id(body.eval_id, "body.eval_id")  # as the CLI's: a case FILE:id can select
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


class FromRun(BaseModel):
    model_config = ConfigDict(extra="forbid")

    eval_id: str = Field(min_length=1, max_length=256)
    run_id: str
    case_id: str  # the case of the run (its first run when repeated)


@router.post("/eval-sets/{set_id}/from-run", status_code=201, response_model_exclude_unset=True)
def add_from_run(app: str, set_id: str, body: FromRun, web: WebDep) -> EvalCase:
    """A case of a stored run (a run of the agent, or traces it scored) as a new static case
    (`authoring.case_from_source`): its user turns, the actual answers and calls as expected,
    the session's final state. The set is made when missing (409 if the eval id exists)."""
    from agenteval.authoring import case_from_source

    check_new_case_id(body.eval_id, "body.eval_id")
    stored = web.stores.find(body.run_id, app)
    if stored is None:
        not_found(f"no run {body.run_id!r} of agent {app!r} in the run history")
    path = web.eval_set_path(app, set_id, must_exist=False)
    if path is None or not plain_name(set_id):
        raise DataError(None, "set_id", f"{set_id!r} is not a plain name (letters, digits, _ - .)")
    case = case_from_source(stored.row.run_id, stored.root, body.case_id, body.eval_id)
    with web.writing(path):
        eval_set = web.eval_set(app, set_id, to_edit=True)[1] if path.exists() else EvalSet(
            eval_set_id=set_id, eval_cases=[], creation_timestamp=time.time())
        if eval_set.case(body.eval_id) is not None:
            conflict(f"eval set {set_id!r} has a case {body.eval_id!r} already")
        eval_set.eval_cases.append(case)
        write_as_read(path, eval_set)
    return case


@router.get("/eval-sets/{set_id}/eval-cases/{case_id:path}", response_model_exclude_unset=True)
def get_case(app: str, set_id: str, case_id: str, web: WebDep, response: Response) -> EvalCase:
    """The case, its version in the `ETag` header (a `PUT` given it as `If-Match` is refused
    once the case changed)."""
    case = _case(web.eval_set(app, set_id)[1], case_id, app, set_id)
    response.headers["ETag"] = case_tag(case)
    return case


CaseBody = Annotated[dict[str, Any], Body(description="The edited EvalCase.")]
IfMatch = Annotated[str | None, Header(description="The case's `ETag` as it was read: the case "
                                              "is replaced only if it is still that version.")]


def _check_version(case: EvalCase, if_match: str | None, case_id: str, set_id: str) -> None:
    """409 when `If-Match` was given and the case is no longer that version."""
    if if_match is not None and if_match.strip() != case_tag(case):
        conflict(f"case {case_id!r} of eval set {set_id!r} was changed since it was read "
                 "(saved from another tab or window, or its file edited): nothing written; "
                 "open the case again to see it as it is now")


@router.put("/eval-sets/{set_id}/eval-cases/{case_id:path}", response_model_exclude_unset=True)
def put_case(app: str, set_id: str, case_id: str, web: WebDep, body: CaseBody, response: Response,
             if_match: IfMatch = None) -> EvalCase:
    """Replaces the case with the body, validated as an EvalCase whose `eval_id` is `case_id`.
    With `If-Match`, only the version read (409 when it was changed since, nothing written:
    two tabs editing one case would otherwise lose the first save). The new version is the
    response's `ETag`."""
    try:
        case = EvalCase.model_validate(body)
    except ValidationError as e:
        raise from_validation_error(BODY, e) from None
    if case.eval_id != case_id:
        raise DataError(BODY, "eval_id", f"{case.eval_id!r} is not the case being edited ({case_id!r})")

    def replace(eval_set: EvalSet) -> EvalCase:
        old = _case(eval_set, case_id, app, set_id)
        _check_version(old, if_match, case_id, set_id)
        eval_set.eval_cases[eval_set.eval_cases.index(old)] = case
        return case

    out: EvalCase = _edit(web, app, set_id, replace)
    # the version a read of the file gives now (what the next `If-Match` is checked against)
    response.headers["ETag"] = case_tag(EvalCase.model_validate_json(
        out.__pydantic_serializer__.to_json(out, exclude_unset=True)))
    return out


@router.delete("/eval-sets/{set_id}/eval-cases/{case_id:path}")
def delete_case(app: str, set_id: str, case_id: str, web: WebDep,
                if_match: IfMatch = None) -> Deleted:
    """Removes the case. With `If-Match`, only the version read (409 when it was changed since,
    nothing written: a delete must not take with it an edit the user has not seen)."""
    def delete(eval_set: EvalSet) -> Deleted:
        old = _case(eval_set, case_id, app, set_id)
        _check_version(old, if_match, case_id, set_id)
        eval_set.eval_cases.remove(old)
        return Deleted(deleted=case_id)

    out: Deleted = _edit(web, app, set_id, delete)
    return out
