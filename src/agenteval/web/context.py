"""What every route shares: the agents, run stores, chat sessions and runs of one server, and
the lookups that turn URL names into things (404 when there is no such thing)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, NoReturn

from fastapi import Depends, HTTPException, Request
from fastapi.routing import APIRoute

from agenteval.datasets import load_eval_set
from agenteval.datasets.files import editing
from agenteval.datasets.loader import load_eval_set_to_edit
from agenteval.errors import DataError
from agenteval.schema import EvalSet
from agenteval.store.journal import Journal
from agenteval.store.sessions import SessionStore, sessions_dir
from agenteval.web.agents import AgentsDir, LoadedAgent
from agenteval.web.chat import ChatService
from agenteval.web.history import StoredRun, Stores
from agenteval.web.jobs import RunJobs
from agenteval.web.paths import child, inside

EVALSET_SUFFIX = ".evalset.json"


def not_found(what: str) -> NoReturn:
    raise HTTPException(404, what)


def conflict(what: str) -> NoReturn:
    raise HTTPException(409, what)


@dataclass
class Web:
    """The state of one server."""

    agents: AgentsDir
    env: Mapping[str, str]
    chat: ChatService
    stores: Stores
    jobs: RunJobs = field(default_factory=RunJobs)
    stopping: bool = False
    """Set as the server begins to stop: the streams that would wait on (the history's changes)
    end, so that the server's graceful shutdown does not wait for them and then cut them."""
    _locks: dict[str, threading.Lock] = field(default_factory=dict)
    _guard: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def create(cls, agents_dir: str | Path, env: Mapping[str, str]) -> Web:
        agents = AgentsDir(agents_dir)
        return cls(agents=agents, env=dict(env), chat=ChatService(env), stores=Stores(agents))

    def stop(self) -> None:
        """The server begins to stop (its signal handler calls this, before the open connections
        are waited for): the runs still going are cancelled, saying so, and the streams end."""
        self.stopping = True
        self.jobs.stop()

    def app_dir(self, app: str) -> Path:
        """The folder of agent `app` (404 when there is none)."""
        folder = self.agents.folder(app)
        if folder is None:
            not_found(f"no agent {app!r} under {self.agents.root}")
        return folder

    def agent(self, app: str) -> LoadedAgent:
        """Agent `app`, imported (404 when there is none; 400 when it cannot be imported)."""
        loaded = self.agents.load(app)
        if loaded is None:
            not_found(f"no agent {app!r} under {self.agents.root}")
        if loaded.error is not None:
            raise DataError(None, "", f"agent {app!r} cannot be loaded: {loaded.error}")
        return loaded

    def sessions(self, app: str) -> SessionStore:
        """The chat sessions of agent `app`; their folder must lie inside the agent's."""
        folder = self.app_dir(app)
        if not inside(sessions_dir(folder), folder):
            raise DataError(sessions_dir(folder), "", "leads outside the agent's folder; refused")
        return SessionStore(folder)

    def eval_set_ids(self, app: str) -> list[str]:
        folder = self.app_dir(app)
        names = [p.name[:-len(EVALSET_SUFFIX)] for p in folder.glob(f"*{EVALSET_SUFFIX}")]
        return sorted(n for n in names if self.eval_set_path(app, n, must_exist=False) is not None)

    def eval_set_path(self, app: str, set_id: str, must_exist: bool = True) -> Path | None:
        """`<app>/<set_id>.evalset.json`, when `set_id` is a plain name and the file (links
        followed) lies inside the agent's folder; 404 when `must_exist` and there is none."""
        folder = self.app_dir(app)
        path = child(folder, set_id, EVALSET_SUFFIX)
        if path is not None and path.exists() and not path.is_file():
            path = None
        if must_exist and (path is None or not path.is_file()):
            not_found(f"agent {app!r} has no eval set {set_id!r}")
        return path

    def eval_set(self, app: str, set_id: str, to_edit: bool = False) -> tuple[Path, EvalSet]:
        """The set's file and what it holds (404 when there is none). `to_edit`: read to be
        written back, so a legacy file (a list, ADK's .test.json) is a DataError naming it and
        `migrate`, as the CLI's `eval_set` commands refuse it (`load_eval_set_to_edit`)."""
        path = self.eval_set_path(app, set_id)
        assert path is not None
        return path, (load_eval_set_to_edit if to_edit else load_eval_set)(path)

    @contextmanager
    def writing(self, path: Path) -> Iterator[None]:
        """One read-modify-write of `path` at a time (edits of one eval set never interleave),
        in this server and with `eval_set` commands (`datasets.files.editing`)."""
        with self._guard:
            lock = self._locks.setdefault(str(path), threading.Lock())
        with lock, editing(path):
            yield

    def run(self, run_id: str) -> StoredRun:
        """A recorded run by document id or run id (404 when there is none)."""
        stored = self.stores.find(run_id)
        if stored is None:
            self.no_run(run_id)
        return stored

    def no_run(self, run_id: str) -> NoReturn:
        """404 for a run in no store, naming any store that could not be read (it may be there);
        for a run an agent's journal holds unfinished (`runs list`'s "Unfinished runs"), what it
        says of it and how to finish it."""
        for name in self.agents.names():
            folder = self.agents.folder(name)
            try:
                runs = Journal(folder).runs() if folder is not None else []
            except (DataError, OSError, sqlite3.Error):  # (an unreadable journal: the plain 404)
                continue
            for r in runs:
                if r.run_id == run_id and r.status != "finished":
                    what = ("it runs in another process" if r.status != "interrupted" else
                            "resume it from its eval set's Run evaluation dialog, or with agenteval "
                            f"eval ... --resume {run_id}")
                    not_found(f"run {run_id!r} is not recorded: the journal of agent {name!r} has it "
                              f"{r.status}, {r.done} of {r.total} case runs done; {what}")
        unreadable = self.stores.unreadable()
        not_found(f"no run {run_id!r} in the run history"
                  + (f" (not read: {'; '.join(unreadable)})" if unreadable else ""))


class ContractRoute(APIRoute):
    """A route of the API: its response model is serialised by field name (snake_case), as the
    result documents are, never by the schema models' camelCase aliases (which they accept on
    input); `agenteval.web.openapi` lists the models by the same names."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        kwargs["response_model_by_alias"] = False
        super().__init__(path, endpoint, **kwargs)


def _web(request: Request) -> Web:
    web: Web = request.app.state.web
    return web


WebDep = Annotated[Web, Depends(_web)]

__all__ = ["EVALSET_SUFFIX", "ContractRoute", "Web", "WebDep", "conflict", "not_found"]
