"""Runs: the history of every store (newest first, filtered), one run, a page of its cases, one
case in full, the HTML report; and for runs started here, their events and cancelling them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Literal

from fastapi import APIRouter, Query, Response
from fastapi.responses import StreamingResponse

from agenteval.reporting import render_report
from agenteval.reporting.html import html_stream
from agenteval.store import RunStore
from agenteval.store.case_index import Unindexed
from agenteval.web.context import ContractRoute, WebDep, conflict, not_found
from agenteval.web.contract import Cancelling, CaseRow, CaseView, DeletedRunView, JobView, RunRow, RunView
from agenteval.web.jobs import WebRun
from agenteval.web.views import case_rows, case_view, run_row, run_view, statuses

router = APIRouter(prefix="/api/runs", tags=["runs"], route_class=ContractRoute)
Status = Literal["passed", "failed", "not_evaluated"]


@router.get("")
def list_runs(web: WebDep, app: str | None = None, eval_set: str | None = None,
              status: Status | None = None, before: float | None = None,
              limit: int = Query(100, ge=1, le=10_000), offset: int = Query(0, ge=0),
              *, response: Response) -> list[RunRow]:
    """Rows of the run history of every store (or of one agent's), newest first; with `before`
    (epoch seconds), those recorded before it only (a run's earlier runs). A store that
    cannot be read is left out, named (`file: message`) in the JSON list of the
    `X-Unreadable-Stores` header."""
    if app is not None:
        web.app_dir(app)
    stored, unreadable = web.stores.listing(app)
    if unreadable:  # (JSON's \u escapes keep a header's latin-1)
        response.headers["X-Unreadable-Stores"] = json.dumps(unreadable)
    rows = [run_row(s) for s in stored]
    rows = [r for r in rows if (eval_set is None or r.eval_set_id == eval_set)
            and (status is None or r.status == status) and (before is None or r.created < before)]
    return rows[offset:offset + limit]


LIVE_POLL_SECONDS = 1.0


@router.get("/live")
async def live_runs(web: WebDep) -> StreamingResponse:
    """Server-sent events of the run history changing, whoever records (`agenteval collect`,
    `agenteval eval`, another server): checked every second, an event `{"runs": N, "newest":
    RUN_ID}` each time the number of recorded documents or the newest one changes (none for the
    history as it is when the stream opens), ending as the server stops. A stream, not JSON."""
    import anyio

    def snapshot() -> tuple[int, str | None]:
        runs = web.stores.runs()
        return len(runs), runs[0].row.run_id if runs else None

    async def stream() -> AsyncIterator[str]:
        seen = await anyio.to_thread.run_sync(snapshot)
        quiet = 0.0
        while not web.stopping:
            await anyio.sleep(LIVE_POLL_SECONDS)
            if web.stopping:  # (the server's shutdown would wait for the stream, then cut it)
                return
            now = await anyio.to_thread.run_sync(snapshot)
            if now != seen:
                seen, quiet = now, 0.0
                yield f"data: {json.dumps({'runs': now[0], 'newest': now[1]})}\n\n"
            else:
                quiet += LIVE_POLL_SECONDS
                if quiet >= 15:  # proxies close idle streams
                    quiet = 0.0
                    yield ": keep-alive\n\n"

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"cache-control": "no-store", "x-accel-buffering": "no"})


def _job_view(job: WebRun) -> JobView:
    return JobView(run_id=job.run_id, app=job.app, eval_set_id=job.eval_set_id, state=job.state,
                   error=job.error, result_ids=job.result_ids, events=len(job.events))


@router.get("/{run_id}/events")
async def run_events(run_id: str, web: WebDep) -> StreamingResponse:
    """Server-sent events of a run started here: every event so far, then each as it comes,
    ending after the terminal one (`RunFinished`, `RunFailed`, `RunCancelled`). A stream, not
    JSON: its events are described in `agenteval.web.jobs`."""
    job = web.jobs.runs.get(run_id)
    if job is None:
        not_found(f"no run {run_id!r} was started by this server")

    async def stream() -> AsyncIterator[str]:
        n = 0
        async for event in job.follow():
            if event is None:
                yield ": keep-alive\n\n"
                continue
            yield f"id: {n}\ndata: {json.dumps(event, default=str)}\n\n"
            n += 1

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"cache-control": "no-store", "x-accel-buffering": "no"})


@router.post("/{run_id}/cancel", status_code=202)
def cancel_run(run_id: str, web: WebDep) -> Cancelling:
    """Cancels a run started here (409 when it has ended)."""
    if run_id not in web.jobs.runs:
        not_found(f"no run {run_id!r} was started by this server")
    if not web.jobs.cancel(run_id):
        conflict(f"run {run_id!r} has ended ({web.jobs.runs[run_id].state})")
    return Cancelling(run_id=run_id, state="cancelling")


# Before the list of cases, whose `{run_id:path}/cases` would take a case named "cases".
@router.get("/{run_id:path}/cases/{case_id:path}")
def get_case(run_id: str, case_id: str, web: WebDep, run_index: int = Query(0, ge=0)) -> CaseView:
    """One case run whole (trace, judge records), its verdict over runs, and per invocation the
    tool-call and argument diffs."""
    stored = web.run(run_id)
    result, case = web.stores.case(stored, case_id)
    if case is None:
        not_found(f"run {run_id!r} has no case {case_id!r}")
    run = next((r for r in case.runs if r.run_index == run_index), None)
    if run is None:
        not_found(f"case {case_id!r} of run {run_id!r} has no run {run_index}")
    return case_view(result, case, run, stored.app, stored.row.run_group)


@router.get("/{run_id:path}/cases")
def list_cases(run_id: str, web: WebDep, response: Response, offset: int = Query(0, ge=0),
               limit: int = Query(100, ge=1, le=1000), status: Status | None = None) -> list[CaseRow]:
    """One page of the run's case runs (the total in `X-Total-Count`)."""
    stored = web.run(run_id)
    total, page = web.stores.case_page(stored, offset, limit, statuses(status))
    response.headers["x-total-count"] = str(total)
    return case_rows(page)


@router.get("/{run_id:path}/export")
def export_run(run_id: str, web: WebDep) -> Response:
    """The run's self-contained HTML report (`reporting.render_report`), as a download (HTML,
    not JSON)."""
    stored = web.run(run_id)
    index = web.stores.index(stored)
    try:  # a case at a time, in two passes (`reporting.html.html_stream`: the same bytes)
        if index is None:
            raise Unindexed("no index")
        html = "".join(html_stream(index.head, index.outcomes))
    except Unindexed:  # (none, or the document changed since it was indexed)
        html = render_report("html", [web.stores.document(stored)])
    name = "".join(c if c.isalnum() or c in "._-" else "_" for c in stored.row.run_id)
    return Response(html, media_type="text/html; charset=utf-8", headers={
        "content-disposition": f'attachment; filename="{name}.html"',
        "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'"})


# A run by id in a router of its own, included after every other (`{run_id:path}` would take
# the paths of the runs' cases, search, groups, reviews, export).
by_id = APIRouter(prefix="/api/runs", tags=["runs"], route_class=ContractRoute)


@by_id.get("/{run_id:path}")
def get_run(run_id: str, web: WebDep) -> RunView | JobView:
    """The run's header, per case its verdict, criteria and why it failed, and the counts. A
    run started here that is not recorded yet (running, failed, cancelled) gives its `state`."""
    job = web.jobs.runs.get(run_id)
    stored = web.stores.find(run_id)
    if stored is None:
        if job is None:
            web.no_run(run_id)
        return _job_view(job)
    # From the database: the counts and criteria counted there, only the cases that did not
    # pass read (a 50,000-case run's summaries took 10 s a view).
    store, ref = RunStore(stored.root), stored.row.run_id
    # Why each shown case did not pass, as `agenteval runs show` says it: from the document,
    # only those cases' bytes (its case index).
    return run_view(stored, store.summary(ref, not_passed_only=True), store.counts(ref), store.criteria(ref),
                    store.header(ref), job.state if job else "finished",
                    read=lambda ids: web.stores.read_cases(stored, ids))


@by_id.delete("/{run_id:path}")
def delete_run(run_id: str, web: WebDep) -> DeletedRunView:
    """Deletes the recorded document (the run page's run) from its store as `agenteval runs
    delete` does (`store.deletion`): its rows, reviews and history file, in one transaction.
    409 naming the owner while a live process writes its run (nothing deleted)."""
    from agenteval.store.deletion import delete_run as delete
    from agenteval.store.journal import RunOwned

    stored = web.run(run_id)
    try:
        done = delete(stored.root, stored.row.run_id)
    except RunOwned as e:
        conflict(f"run {run_id!r} is being written, not deleted: {e.message}")
    return DeletedRunView(deleted=stored.row.run_id, reviews=done.reviews,
                          kept=[str(p) for p in done.kept])
