"""Results across runs: comparing two runs, trends for the charts, opening a result document
from elsewhere, and ADK's `/apps/{app}/eval-results` routes."""

from __future__ import annotations

from typing import Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, Query, Request

from agenteval.datasets.files import parse_json
from agenteval.datasets.nesting import MAX_RESULT_DEPTH
from agenteval.errors import DataError
from agenteval.reporting.compare import CRITERION_CODE, Shown, case_changes, case_delta, criterion_params
from agenteval.reporting.paired import config_differences
from agenteval.schema import EvalSetResult
from agenteval.store import RunStore, parse_result, record_run
from agenteval.store.case_pairs import MAX_LOOKUP, coded_cases, pairs_of
from agenteval.store.db import ALIASES
from agenteval.verdicts.paired import compare_paired
from agenteval.web.context import ContractRoute, Web, WebDep, conflict, not_found
from agenteval.web.contract import RunRef
from agenteval.web.contract_compare import ComparisonView, PairedChangeWord, PairedView, TrendPoint
from agenteval.web.history import StoredRun
from agenteval.web.views import comparison_json, paired_json, trend_point

router = APIRouter(tags=["results"], route_class=ContractRoute)
UPLOAD = "uploaded document"
# Ids no run may have here: the run references `RunStore.resolve` reads as other runs, and the
# history's stream (`/api/runs/live`); a blank id cannot be asked for.
_NOT_RUN_IDS = (*ALIASES, "live")


@router.get("/api/compare")
def compare_runs(web: WebDep, a: str, b: str, margin: float = Query(0.0, ge=0.0, le=1.0),
                 show: Shown = "all", offset: int = Query(0, ge=0),
                 limit: int = Query(200, ge=0, le=MAX_LOOKUP)) -> ComparisonView:
    """Baseline `a` against candidate `b`, case by case and criterion by criterion, as
    `agenteval compare` computes it (in the history's database, both runs' at once): the
    counts of every case, and a page of the cases `show` names (`limit` from `offset`). Each
    case's change is kept for the next pages; a page reads its own cases' summaries again."""
    base, cand = web.run(a), web.run(b)
    head_a, head_b = web.stores.head(base), web.stores.head(cand)
    store_a, store_b = RunStore(base.root), RunStore(cand.root)
    changes = web.stores.of_two(base, cand, f"compare {margin!r}", lambda: case_changes(coded_cases(
        store_a, base.row.run_id, store_b, cand.row.run_id, CRITERION_CODE, criterion_params(margin)),
        head_a, head_b, margin))
    named = [c.eval_id for c in changes.cases if c.shown(show)]
    ids = named[offset:offset + limit]
    page = [case_delta(i, x, y, head_a, head_b, margin)
            for i, x, y in pairs_of(store_a, base.row.run_id, store_b, cand.row.run_id, ids)]
    return comparison_json(changes, show, len(named), offset, page)


@router.get("/api/compare/paired")
def compare_paired_runs(web: WebDep, a: str, b: str, alpha: float = Query(0.05, gt=0.0, lt=1.0),
                        k: int | None = Query(None, ge=1), seed: int = 0,
                        eval_id: Annotated[list[str] | None, Query(max_length=MAX_LOOKUP)] = None,
                        change: Annotated[list[PairedChangeWord] | None, Query()] = None,
                        offset: int = Query(0, ge=0),
                        limit: int = Query(200, ge=0, le=MAX_LOOKUP)) -> PairedView:
    """Baseline `a` against candidate `b` paired by case and run index: the decision, each
    measure's differences with intervals and p-values, each case's change, as `agenteval
    compare` computes them (`verdicts.paired`, from the history's database; kept for the next
    pages). Cases listed: those of `eval_id` (in their order; unknown ones left out), else
    those of a `change`, else all; `limit` of them from `offset`."""
    base, cand = web.run(a), web.run(b)
    paired = web.stores.of_two(base, cand, f"paired {alpha!r} {k} {seed}", lambda: compare_paired(
        web.stores.head(base), web.stores.head(cand), alpha=alpha, k=k, seed=seed,
        runs_a=web.stores.case_runs(base), runs_b=web.stores.case_runs(cand)))
    if eval_id is not None:
        by_id = {x.eval_id: x for x in paired.cases}
        named = [by_id[i] for i in dict.fromkeys(eval_id) if i in by_id]
    else:
        named = [x for x in paired.cases if change is None or x.change.value in change]
    from agenteval.criteria import default_registry  # (its defaults: a default written out is no difference)

    differ = config_differences(_config(base), _config(cand), settings=default_registry().settings)
    return paired_json(paired, len(named), offset, named[offset:offset + limit], differ)


def _config(stored: StoredRun) -> dict[str, Any]:
    """The config the run ran with, as its history recorded it ({} if none: nothing is said)."""
    config = RunStore(stored.root).details(stored.row.run_id).get("config")
    return config if isinstance(config, dict) else {}


@router.get("/api/trends")
def trends(web: WebDep, app: str | None = None, eval_set: str | None = None,
           limit: int = Query(100, ge=1, le=1000)) -> list[TrendPoint]:
    """Per run (oldest first, the newest `limit`): pass rate and each criterion's mean score."""
    if app is not None:
        web.app_dir(app)
    runs = [s for s in web.stores.runs(app) if eval_set is None or s.row.eval_set_id == eval_set][:limit]
    means: dict[tuple[str, str], dict[str, float]] = {}
    for root in {s.root for s in runs}:  # one grouped query per store, not a summary per run
        ids = [s.row.run_id for s in runs if s.root == root]
        for run_id, m in RunStore(root).criterion_means(ids).items():
            means[(str(root), run_id)] = m
    return [trend_point(s, means[(str(s.root), s.row.run_id)]) for s in reversed(runs)]


@router.post("/api/results/open", status_code=201)
async def open_result(request: Request, web: WebDep) -> RunRef:
    """Stores a result document (the body) as an uploaded run in AGENTS_DIR's own history and
    returns its id (409 when a run by that id is recorded already)."""
    body = await request.body()
    run_id: str = await anyio.to_thread.run_sync(_store_upload, web, body)
    return RunRef(run_id=run_id)


def _store_upload(web: Web, body: bytes) -> str:
    result = parse_result(UPLOAD, parse_json(UPLOAD, body, MAX_RESULT_DEPTH))
    run_id = result.eval_set_result_id
    if not run_id.strip() or run_id in _NOT_RUN_IDS:
        raise DataError(UPLOAD, "eval_set_result_id", f"{run_id!r} cannot name a run (blank, or one of "
                        f"{', '.join(_NOT_RUN_IDS)}): give the document another id")
    if web.stores.find(result.eval_set_result_id) is not None:
        conflict(f"run {result.eval_set_result_id!r} is recorded already")
    (run_id,) = record_run(web.agents.root, [result], meta={"uploaded": True})
    return run_id


@router.get("/apps/{app}/eval-results")
def list_eval_results(app: str, web: WebDep) -> list[str]:
    """ADK's route: the result ids in the agent's history, newest first."""
    return [s.row.run_id for s in web.stores.runs(app)] if web.app_dir(app) else []


@router.get("/apps/{app}/eval-results/{result_id:path}")
def get_eval_result(app: str, result_id: str, web: WebDep) -> EvalSetResult:
    """ADK's route: one result document of the agent's history, as stored."""
    web.app_dir(app)
    stored = next((s for s in web.stores.runs(app) if s.row.run_id == result_id), None)
    if stored is None:
        not_found(f"agent {app!r} has no result {result_id!r}")
    return web.stores.document(stored)
