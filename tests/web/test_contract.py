"""The typed web contract: every JSON route has a response model listed in `/openapi.json`, the
page's typedefs (`static/types/`) are generated from that schema, and the page's modules read
only the fields it has (`tests/web/jsdoc_check.py`)."""

from __future__ import annotations

import os
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.routing import APIRoute

from agenteval.web.app import STATIC, create_app
from agenteval.web.openapi import TYPES, jsdoc_typedefs
from agenteval.web.routes import apps, eval_sets, insights, results, runs, sessions
from tests.web.jsdoc_check import check_modules, read_modules

# Routes that answer with something other than JSON (and say so in their docstrings).
NOT_JSON = {"/api/runs/{run_id}/events": "text/event-stream", "/api/runs/{run_id}/export": "text/html",
            "/api/runs/live": "text/event-stream",
            "/apps/{app}/users/{user_id}/sessions/{session_id}/messages/stream": "text/event-stream"}


@pytest.fixture(scope="module")
def openapi(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The served schema, made once for the module (it takes a second or two); read only."""
    return create_app(tmp_path_factory.mktemp("agents")).openapi()


def test_every_json_route_returns_a_model_listed_in_the_openapi_schema(openapi: dict[str, Any]) -> None:
    schema = openapi
    routes = [r for router in (apps.router, sessions.router, eval_sets.router, runs.router, results.router,
                               insights.router, runs.by_id)
              for r in router.routes if isinstance(r, APIRoute) and r.include_in_schema]
    assert len(routes) > 20
    components = schema["components"]["schemas"]
    for route in routes:
        if route.path_format in NOT_JSON:
            doc = " ".join((route.endpoint.__doc__ or "").split())
            assert "not JSON" in doc or "HTML" in doc, route.path
            continue
        assert route.response_model is not None, route.path
        for method in route.methods:
            op = schema["paths"][route.path_format][method.lower()]  # `{case_id:path}` as `{case_id}`
            ok = op["responses"][str(route.status_code or 200)]["content"]["application/json"]["schema"]
            refs = [s["$ref"] for s in _walk(ok) if "$ref" in s]
            primitive = ok.get("type") == "array" and ok["items"].get("type") == "string"
            assert refs or primitive, (route.path, ok)  # a model, or a list of names (ADK's routes)
            assert all(ref.rsplit("/", 1)[-1] in components for ref in refs)
    # documents listed by field name (the API writes field names, never the camelCase aliases)
    assert "eval_set_id" in components["EvalSet"]["properties"]
    assert "eval_case_results" in components["EvalSetResult"]["properties"]
    assert "counts" in components["RunView"]["properties"] and "run_id" in components["RunView"]["required"]


def _walk(s: Any) -> list[dict[str, Any]]:
    if isinstance(s, dict):
        return [s, *(x for v in s.values() for x in _walk(v))]
    if isinstance(s, list):
        return [x for v in s for x in _walk(v)]
    return []


def test_the_page_typedefs_are_what_the_schema_generates(openapi: dict[str, Any]) -> None:
    generated = jsdoc_typedefs(openapi)
    if os.environ.get("AGENTEVAL_WRITE_TYPES") == "1":
        TYPES.mkdir(exist_ok=True)
        for name, text in generated.items():
            (TYPES / name).write_text(text, encoding="utf-8")
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in TYPES.glob("*.js")}
    assert on_disk == generated, ("static/types/ differs from the schema: regenerate with "
                                  "AGENTEVAL_WRITE_TYPES=1 python -m pytest tests/web/test_contract.py")
    assert "@typedef {Object} RunView" in generated["web.js"]
    assert "@property {Array<EvalCase>} eval_cases" in generated["documents.js"]


def test_the_page_reads_only_fields_the_schema_has() -> None:
    modules = read_modules(STATIC)
    assert check_modules(modules) == []
    annotated = [name for name, src in modules.items() if "@type {" in src or "@param {" in src]
    assert len(annotated) >= 10  # the views carry their types


def _errors(snippet: str) -> list[str]:
    return check_modules({**read_modules(TYPES), "views/snippet.js": snippet})


def test_the_checker_fails_on_a_misspelled_field() -> None:
    good = '/** @type {RunView} */\nconst run = await api("/api/runs/x");\nrun.counts.passed;\n'
    assert _errors(good) == []
    (error,) = _errors(good.replace("counts.passed", "counts.pased"))
    assert error == "views/snippet.js:3: SetCounts has no field 'pased'"
    assert _errors(good.replace("run.counts", "run.cases_pased")) == [
        "views/snippet.js:3: RunView has no field 'cases_pased'"]


@pytest.mark.parametrize("snippet", [
    # through a callback on a typed array, and a loop over one
    '/** @type {RunView} */\nconst run = await api("x");\nrun.cases.map((c) => c.eval_idd);\n',
    '/** @type {RunView} */\nconst run = await api("x");\nfor (const c of run.cases) c.problem;\n',
    # through a name kept from a chain, and a parameter typed by @param
    '/** @type {CaseView} */\nconst d = await api("x");\nconst r = d.result;\nr.final_status;\n',
    '/** @param {RunRow} r */\nfunction f(r) { return r.total; }\n',
    '[].map((/** @type {TrendPoint} */ t) => t.passrate);\n',
    # a union: a field neither member has; an array is not a wrapper object
    '/** @type {RunView|JobView} */\nconst run = await api("x");\nrun.row;\n',
    '/** @type {Array<RunRow>} */\nconst rows = await api("x");\nrows.runs;\n',
    # an API result kept without a type
    'const run = await api("x");\n',
    'api("x").then((rows) => rows);\n',
])
def test_the_checker_fails_on_what_the_schema_does_not_have(snippet: str) -> None:
    assert len(_errors(snippet)) == 1, _errors(snippet)


def test_an_untyped_inner_name_shadows_a_typed_one() -> None:
    snippet = ('/** @type {RunView} */\nconst run = await api("x");\n'
               'function g(run) { return run.anything; }\nrun.counts.total;\n')
    assert _errors(snippet) == []
