"""The web server's application: the JSON API of `docs/web-api.md` and the static page.

`create_app` builds it for one AGENTS_DIR. The environment (`env`: API keys for model
backends) is handed in by the front end (`agenteval web`); nothing here reads `os.environ`.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Collection, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.types import Scope

from agenteval.errors import AgentEvalError, describe, json_path
from agenteval.web.context import Web
from agenteval.web.openapi import contract_openapi
from agenteval.web.routes import apps, eval_sets, insights, launch, results, runs, sessions
from agenteval.web.security import LOOPBACK_HOSTS, Gate

STATIC = Path(__file__).parent / "static"
_TOKEN = re.compile(r"[A-Za-z0-9._~-]{1,256}")
# The page loads its own script and style only; the API's /docs page (FastAPI's, from a CDN)
# is not covered.
PAGE_POLICY = ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
               "object-src 'none'; base-uri 'none'; frame-ancestors 'none'")


class PageFiles(StaticFiles):
    """The page's own files (web/static). Its scripts are ES modules, which a browser runs only
    when they are served with a JavaScript type, whatever the platform's MIME table says of `.js`
    (some map it to text/plain). Every file is revalidated on each load (`no-cache`, answered by
    its ETag), so after an upgrade the page never mixes modules of two versions."""

    def file_response(self, full_path: str | os.PathLike[str], stat_result: os.stat_result, scope: Scope,
                      status_code: int = 200) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        if response.status_code != 304 and os.fspath(full_path).endswith(".js"):
            response.headers["content-type"] = "text/javascript; charset=utf-8"
        response.headers["cache-control"] = "no-cache"
        return response


def _bad_input(request: Request, exc: Exception) -> Response:
    return JSONResponse({"detail": str(exc)}, status_code=400)


def _invalid_request(request: Request, exc: Exception) -> Response:
    """FastAPI's validation errors as one line naming the key (400, like every bad input)."""
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    if not errors:
        return JSONResponse({"detail": "invalid request"}, status_code=400)
    first = errors[0]
    where = json_path([str(p) if not isinstance(p, int) else p for p in first.get("loc", ())])
    return JSONResponse({"detail": f"{where}: {first.get('msg', 'invalid')}"}, status_code=400)


def _crashed(request: Request, exc: Exception) -> Response:
    """Anything else: a 500 saying what went wrong; the server stays up."""
    return JSONResponse({"detail": f"internal error: {describe(exc)}"}, status_code=500)


def create_app(agents_dir: str | Path, *, token: str | None = None, env: Mapping[str, str] | None = None,
               allowed_hosts: Collection[str] | Literal["*"] = LOOPBACK_HOSTS) -> FastAPI:
    """The server for the agents under `agents_dir`. With `token`, every request must carry it.
    `allowed_hosts` are the host names the server answers to (`"*"`: any, for a server bound to
    every interface); `env` gives model backends their API keys."""
    if token is not None and not _TOKEN.fullmatch(token):
        raise ValueError("the token must be 1-256 characters of letters, digits and ._~-")
    web = Web.create(agents_dir, env or {})

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await web.jobs.close()
        await web.chat.close()

    app = FastAPI(title="agenteval web", version="1", lifespan=lifespan,
                  description="The JSON API of `agenteval web` (see docs/web-api.md).")
    app.state.web = web
    routers = (apps.router, sessions.router, eval_sets.router, launch.router, runs.router, results.router,
               insights.router, runs.by_id)
    for router in routers:
        app.include_router(router)
    app.openapi = lambda: contract_openapi(app, routers)  # type: ignore[method-assign]
    app.add_exception_handler(AgentEvalError, _bad_input)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(Exception, _crashed)

    @app.get("/", include_in_schema=False)
    def page() -> Response:
        index = STATIC / "index.html"
        if not index.is_file():
            return JSONResponse({"detail": "the web page is not installed (no web/static/index.html)"},
                                status_code=404)
        return FileResponse(index, headers={"content-security-policy": PAGE_POLICY,
                                            "cache-control": "no-cache"})

    app.mount("/static", PageFiles(directory=STATIC, check_dir=False), name="static")
    app.add_middleware(Gate, token=token, allowed_hosts=None if allowed_hosts == "*" else allowed_hosts)
    return app


__all__ = ["create_app"]
