"""Looking into runs (issue 27): a run's cases searched, filtered and sorted; its failing cases
grouped by reason; flaky cases across the history; N runs side by side; human reviews of a
run's verdicts; the tools an agent declares (for the case editor). The work is done by
`reporting.case_query`, `reporting.failure_groups`, `verdicts.flaky`, `reporting.matrix`,
`store.reviews` and `agents.declared`; these routes only shape it."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Query

from agenteval.agents.declared import declared_tools
from agenteval.calibration import unreviewable
from agenteval.reporting.case_query import CaseFacts, CaseQuery, SortKey, facets, query_cases
from agenteval.reporting.failure_groups import facts_and_groups
from agenteval.reporting.matrix import MatrixCell, matrix_columns, run_cells, run_matrix
from agenteval.reporting.matrix import MatrixColumn as MatrixColumnOf
from agenteval.store import RunStore
from agenteval.store.db import UnknownRun
from agenteval.store.reviews import Review, ReviewStore, ReviewTarget
from agenteval.verdicts.flaky import flaky_cases
from agenteval.web.context import ContractRoute, WebDep, not_found
from agenteval.web.contract import Deleted
from agenteval.web.contract_insights import (
    CaseHit,
    CaseSearch,
    FailureGroupView,
    FlakyView,
    MatrixCellView,
    MatrixColumn,
    MatrixRowView,
    MatrixView,
    ReviewBody,
    ReviewView,
    ToolInfo,
    ToolParamView,
)
from agenteval.web.history import StoredRun
from agenteval.web.views import status_word

router = APIRouter(tags=["insights"], route_class=ContractRoute)
MAX_MATRIX_RUNS = 12


def _hit(f: CaseFacts) -> CaseHit:
    return CaseHit(position=f.position, eval_id=f.eval_id, status=status_word(f.status), score=f.score,
                   seconds=f.seconds, tokens=f.tokens, failing=sorted(f.failing), tools=sorted(f.tools),
                   errors=sorted(f.errors))


@router.get("/api/runs/{run_id:path}/search")
def search_cases(run_id: str, web: WebDep, text: str | None = Query(None, max_length=500),
                 status: Literal["passed", "failed", "not_evaluated"] | None = None,
                 criterion: str | None = None, tool: str | None = None, argument: str | None = None,
                 error: str | None = None, min_score: float | None = None, max_score: float | None = None,
                 sort: SortKey = "position", descending: bool = False, offset: int = Query(0, ge=0),
                 limit: int = Query(200, ge=1, le=10_000)) -> CaseSearch:
    """The run's cases matching every condition given (full text over prompts, answers and ids;
    failing criterion; tool called; argument `tool.arg` or `tool.arg=value`; error type; score
    range), sorted by position, score, latency or tokens (missing measures last), one page of
    them, and every value the run can be filtered by."""
    facts = web.stores.over_cases(web.run(run_id), facts_and_groups)[0]
    query = CaseQuery(text=text or None, status=status, criterion=criterion, tool=tool, argument=argument,
                      error=error, min_score=min_score, max_score=max_score, sort=sort,
                      descending=descending)
    hits = query_cases(facts, query)
    f = facets(facts)
    return CaseSearch(total=len(hits), cases=[_hit(h) for h in hits[offset:offset + limit]],
                      criteria=f.criteria, tools=f.tools, arguments=f.arguments, errors=f.errors)


@router.get("/api/runs/{run_id:path}/groups")
def run_failure_groups(run_id: str, web: WebDep) -> list[FailureGroupView]:
    """The run's failing cases grouped by what failed, largest group first."""
    groups = web.stores.over_cases(web.run(run_id), facts_and_groups)[1]
    return [FailureGroupView(reason=g.reason, eval_ids=g.eval_ids) for g in groups]


@router.get("/api/flaky")
def flaky(web: WebDep, app: str | None = None, eval_set: str | None = None,
          limit: int = Query(50, ge=1, le=1000), min_runs: int = Query(2, ge=2)) -> list[FlakyView]:
    """Cases whose verdicts both passed and failed over the newest `limit` stored runs (of one
    agent, one eval set), most uncertain first (`agenteval history flaky`)."""
    if app is not None:
        web.app_dir(app)
    runs = [s for s in web.stores.runs(app) if eval_set is None or s.row.eval_set_id == eval_set][:limit]
    history = [(s.row.eval_set_id, web.stores.case_runs(s)) for s in reversed(runs)]
    return [FlakyView(eval_set_id=c.eval_set_id, eval_id=c.eval_id, runs=c.runs, passed=c.passed,
                      pass_rate=c.pass_rate, flip_rate=c.flip_rate, stored_runs=c.stored_runs)
            for c in flaky_cases(history, min_runs)]


def _column(s: StoredRun, col: MatrixColumnOf) -> MatrixColumn:
    label = s.row.run_group or s.row.run_id
    if s.row.agent_model:
        label += f" · {s.row.agent_model}"
    return MatrixColumn(run_id=s.row.run_id, label=label, created=s.row.created, run_index=col.run_index,
                        run_indices=col.run_indices)


def _cell(c: MatrixCell | None) -> MatrixCellView | None:
    if c is None:
        return None
    return MatrixCellView(status=status_word(c.status), score=c.score, answer=c.answer, calls=c.calls,
                          changed=c.changed, diff=c.diff, error=c.error)


@router.get("/api/matrix")
def matrix(web: WebDep, runs: Annotated[list[str], Query(min_length=1, max_length=MAX_MATRIX_RUNS)],
           changed_only: bool = False, eval_id: Annotated[list[str] | None, Query()] = None,
           run_index: int | None = Query(None, ge=0), offset: int = Query(0, ge=0),
           limit: int = Query(200, ge=1, le=10_000)) -> MatrixView:
    """Runs side by side in the order given (`runs=a&runs=b…`): cases as rows, a column per run
    (per repeat of a repeated run; with `run_index`, that repeat only), each cell the case run's
    verdict, answer and tool calls with the diff against the cell to its left; with
    `changed_only`, only cases whose output changed (between repeats too); with `eval_id`
    (repeated), only those cases (a case run again beside its first run)."""
    stored = [web.run(r) for r in runs]
    # Each run's cells, read a case at a time and kept (a large run is not loaded whole).
    documents = [web.stores.over_cases(s, run_cells) for s in stored]
    rows = run_matrix(documents, changed_only, run_index)
    if eval_id:
        wanted = set(eval_id)
        rows = [r for r in rows if r.eval_id in wanted]
    columns = [_column(stored[c.document], c) for c in matrix_columns(documents, run_index)]
    return MatrixView(columns=columns, total=len(rows), rows=[
        MatrixRowView(eval_id=r.eval_id, changed=r.changed, cells=[_cell(c) for c in r.cells])
        for r in rows[offset:offset + limit]])


def _review(r: Review) -> ReviewView:
    return ReviewView(run_id=r.run_id, eval_id=r.eval_id, run_index=r.run_index, target=r.target,
                      agreement=r.agreement, comment=r.comment, reviewer=r.reviewer, created=r.created)


@router.get("/api/runs/{run_id:path}/reviews")
def list_reviews(run_id: str, web: WebDep, eval_id: str | None = None) -> list[ReviewView]:
    """People's reviews of the run's verdicts (of one case if given), oldest first."""
    stored = web.run(run_id)
    return [_review(r) for r in ReviewStore(stored.root).reviews(stored.row.run_id, eval_id)]


@router.put("/api/runs/{run_id:path}/reviews")
def put_review(run_id: str, body: ReviewBody, web: WebDep) -> ReviewView:
    """Agree or disagree, with a comment, with a case's verdict (`target` "") or one of its
    judged criteria (`target` the criterion; `criterion@<turn index>` its verdict on one turn;
    `criterion@<turn index>/<rubric id>` one rubric's, see `store.reviews.ReviewTarget`);
    replaces the review of the same verdict. 404 when the run has no such case run, criterion,
    turn or judged rubric, or was deleted meanwhile (nothing saved); 400 for a malformed
    target, or a criterion whose review is no label (`calibration.unreviewable`: no judge
    decides it, or it was not evaluated)."""
    stored = web.run(run_id)
    case = web.stores.case(stored, body.eval_id)[1]
    if case is None or not any(r.run_index == body.run_index for r in case.runs):
        not_found(f"run {run_id!r} has no case {body.eval_id!r} run {body.run_index}")
    target = ReviewTarget.parse(body.target)
    if target.criterion and target.criterion not in {m.metric_name for m in case.summary.metrics}:
        not_found(f"case {body.eval_id!r} has no criterion {target.criterion!r}")
    run = next(r for r in case.runs if r.run_index == body.run_index)
    if target.criterion and (why := unreviewable(target.criterion, run)) is not None:
        raise HTTPException(400, why)
    if target.invocation is not None and target.invocation >= len(run.eval_metric_result_per_invocation):
        not_found(f"case {body.eval_id!r} run {body.run_index} has no turn {target.invocation + 1}")
    if target.item is not None and not any(
            r.metric_name == target.criterion and r.invocation_index == target.invocation
            and r.item == target.item for r in run.judge_records):
        not_found(f"{target.criterion} judged no rubric {target.item!r} on that turn")
    RunStore(stored.root).check()
    review = Review(stored.row.run_id, body.eval_id, body.run_index, body.target, body.agreement,
                    body.comment, body.reviewer)
    try:
        saved = ReviewStore(stored.root).save(review)
    except UnknownRun:  # deleted since it was read above: the review is not kept without it
        not_found(f"run {run_id!r} was deleted: the review was not saved")
    return _review(saved)


@router.delete("/api/runs/{run_id:path}/reviews")
def delete_review(run_id: str, web: WebDep, eval_id: str, run_index: int = Query(0, ge=0),
                  target: str = "") -> Deleted:
    """Removes one review (404 when there is none)."""
    stored = web.run(run_id)
    if not ReviewStore(stored.root).delete(stored.row.run_id, eval_id, run_index, target):
        not_found(f"no review of {eval_id!r} run {run_index} {target or 'verdict'} in run {run_id!r}")
    return Deleted(deleted=eval_id)


@router.get("/apps/{app}/tools")
def list_tools(app: str, web: WebDep) -> list[ToolInfo]:
    """The tools agent `app` declares (`agents.declared`: names, argument types, required),
    for the case editor; none for a plain callable agent."""
    return [ToolInfo(name=t.name, description=t.description, agent=t.agent, params=[
        ToolParamView(name=p.name, type=p.type, required=p.required, description=p.description,
                      json_schema=p.schema)
        for p in t.params]) for t in declared_tools(web.agent(app).agent)]
