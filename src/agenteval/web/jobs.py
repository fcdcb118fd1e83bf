"""Runs started from the web: each a background task over `agenteval.runner.run`, recorded in
the app's run history as a CLI run is, with its progress events kept for server-sent events.

Events are the runner's progress events as JSON objects (`{"type": "CaseFinished", ...}`),
then exactly one terminal event: `RunFinished` (sent only once the run is recorded, with the
ids of its result documents as `result_ids`), `RunFailed` (`error`) or `RunCancelled` (with
`reason` "the server stopped" when the server's stop cancelled it). A run is known by its run
id (`RunSpec.run_id`), which the history keeps as the documents' run group.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio.to_thread

from agenteval.errors import describe
from agenteval.runner import EvalJob, Run, RunPlan, Services, run
from agenteval.schema.progress import ProgressEvent, RunFinished, RunStarted
from agenteval.store import record
from agenteval.web.contract import RunState

TERMINAL = ("RunFinished", "RunFailed", "RunCancelled")
SERVER_STOPPED = "the server stopped"
KEEPALIVE_SECONDS = 15.0


def event_json(event: ProgressEvent) -> dict[str, Any]:
    """A progress event as a JSON object: its fields and its `type` (the class name)."""
    return {"type": type(event).__name__, **dataclasses.asdict(event)}


@dataclass
class WebRun:
    """A run started from the web, and what it has reported so far."""

    run_id: str
    app: str
    eval_set_id: str
    events: list[dict[str, Any]] = field(default_factory=list)
    state: RunState = "running"
    error: str | None = None
    result_ids: list[str] = field(default_factory=list)
    task: asyncio.Task[None] | None = None
    _signal: asyncio.Future[None] | None = None

    @property
    def ended(self) -> bool:
        return self.state in ("finished", "failed", "cancelled")

    def publish(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        if self._signal is not None and not self._signal.done():
            self._signal.set_result(None)
        self._signal = None

    async def follow(self) -> AsyncIterator[dict[str, Any] | None]:
        """Every event from the first, as they come, ending after the terminal one; None now
        and then while nothing happens (for keep-alives)."""
        sent = 0
        while True:
            while sent < len(self.events):
                sent += 1
                yield self.events[sent - 1]
            if self.ended:
                return
            if self._signal is None:
                self._signal = asyncio.get_running_loop().create_future()
            try:
                await asyncio.wait_for(asyncio.shield(self._signal), KEEPALIVE_SECONDS)
            except asyncio.TimeoutError:
                yield None


class RunJobs:
    """The runs started by this server, by run id."""

    def __init__(self) -> None:
        self.runs: dict[str, WebRun] = {}

    async def start(self, job: EvalJob, services: Services, store_root: Path, app: str,
                    eval_set_id: str, plan: RunPlan | None = None) -> WebRun:
        """Starts the run; returns once the runner has said `RunStarted`. Whatever fails before
        that (a judge model that cannot be used, say) is raised here, and no run is kept."""
        loop = asyncio.get_running_loop()
        started: asyncio.Future[str] = loop.create_future()
        registered: asyncio.Future[WebRun] = loop.create_future()
        early: list[dict[str, Any]] = []
        finished: list[RunFinished] = []

        def listener(event: ProgressEvent) -> None:
            if isinstance(event, RunFinished):  # held back until the run is recorded
                finished.append(event)
                return
            data = event_json(event)
            if registered.done():
                registered.result().publish(data)
            else:
                early.append(data)
            if isinstance(event, RunStarted) and not started.done():
                started.set_result(event.run_id)

        async def main() -> None:
            try:
                await recorded()
            finally:  # the run journal: this process's ownership of the run ends with it
                if services.journal is not None:
                    services.journal.close()

        async def recorded() -> None:
            try:
                done: Run = await run(job, services, listener, plan)
            except asyncio.CancelledError:
                if not started.done():
                    raise
                web = await registered
                if web.state != "cancelled":  # (the server's stop said so already)
                    web.state = "cancelled"
                    web.publish({"type": "RunCancelled", "run_id": web.run_id})
                return
            except (Exception, SystemExit) as e:  # a crashed run is an event; the server stays up
                if not started.done():
                    raise
                web = await registered
                web.state, web.error = "failed", describe(e)
                web.publish({"type": "RunFailed", "run_id": web.run_id, "error": web.error})
                return
            web = await registered
            web.state = "recording"  # too late to cancel: the run is complete
            try:
                await anyio.to_thread.run_sync(record, store_root, done)
            except Exception as e:  # the run is lost to the history, and says so
                web.state, web.error = "failed", f"recording the run failed: {describe(e)}"
                web.publish({"type": "RunFailed", "run_id": web.run_id, "error": web.error})
                return
            web.result_ids = [r.eval_set_result_id for r in done.results]
            tail = event_json(finished[0]) if finished else {"type": "RunFinished", "run_id": web.run_id}
            web.state = "finished"
            web.publish({**tail, "result_ids": web.result_ids})

        task = loop.create_task(main())
        watched: set[asyncio.Future[Any]] = {started, task}
        await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
        if not started.done():
            task.result()  # raises what ended it before it started
            raise RuntimeError("the run ended before it started")
        web = WebRun(run_id=started.result(), app=app, eval_set_id=eval_set_id, task=task)
        for data in early:
            web.publish(data)
        self.runs[web.run_id] = web
        registered.set_result(web)
        return web

    def cancel(self, run_id: str) -> bool:
        """Asks a running run to stop; False when it has ended (or is being recorded)."""
        web = self.runs[run_id]
        if web.state != "running" or web.task is None:
            return False
        web.task.cancel()
        return True

    def stop(self) -> None:
        """The server is stopping: each run still going is cancelled, its `RunCancelled` saying
        "the server stopped" (what it finished is in its journal, to resume). Called from the
        server's signal handler, so safe from any thread; a run being recorded is left to end."""
        for web in list(self.runs.values()):
            if web.task is not None and not web.task.done():
                web.task.get_loop().call_soon_threadsafe(_stopped, web)

    async def close(self) -> None:
        """Cancels every run still going (at server shutdown) and waits for them."""
        tasks = [w.task for w in self.runs.values() if w.task is not None and not w.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _stopped(web: WebRun) -> None:
    """Cancels `web` for the server's stop (on its event loop). Said at once, not once the
    agent calls in flight have returned (a call in a thread is not cut short): the server waits
    a few seconds only for the run's event stream to end, then cuts it."""
    if web.state != "running" or web.task is None:
        return
    web.task.cancel()
    web.state = "cancelled"
    web.publish({"type": "RunCancelled", "run_id": web.run_id, "reason": SERVER_STOPPED})


__all__ = ["SERVER_STOPPED", "TERMINAL", "RunJobs", "WebRun", "event_json"]
