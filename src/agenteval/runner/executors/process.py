"""Process isolation (`--isolation process`): each case run's inference in a worker process that
the run can stop, whatever the agent does.

In this process's event loop the case timeout stops an agent where it waits; an agent stuck in
one call that holds the interpreter (a catastrophic regular expression, a native loop) cannot be
interrupted there, and holds the whole run until it returns. Here the agent's turns run in
worker processes instead (`runner.executors.process_worker`, started with multiprocessing's
"spawn": a fresh interpreter that loads the agent from its path and resolves models by name),
one per case run in flight, each reused from case to case. A case run that passes its limit
(plus `GRACE` seconds for the worker to answer) gets its worker killed (SIGTERM, then SIGKILL),
is recorded with the timeout error and the turns the worker reported before, and the next case
gets a fresh worker; so does a case run whose worker answered late (the agent may have left
work running there). A worker that dies (a crash in native code, `os._exit`) fails its case
run with an error saying how it died, and the run goes on. Scoring and judging stay in this
process, so verdicts, their cache and the judge's counts are the same as a run's without
isolation. Each turn a worker reports is told to the run's listener as it comes (`TurnDone`),
as the local executor does.
"""

from __future__ import annotations

import logging
import math
import multiprocessing
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

import anyio

from agenteval.agents import SessionSpec
from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.errors import AgentEvalError, describe
from agenteval.models.limits import SharedSlots, Slots
from agenteval.models.resolve import DEFAULT_HTTP_CONCURRENCY, parse_model_name
from agenteval.runner.executors.base import Done, Unit, require_by_path
from agenteval.runner.executors.local import score_unit, turn_reporter
from agenteval.runner.executors.process_worker import (
    Finished,
    LoadFailed,
    Message,
    Order,
    Ready,
    Started,
    TurnDone,
    serve,
)
from agenteval.runner.executors.ray_worker import WorkerSetup, agent_location
from agenteval.runner.inference import new_run, set_session_details, timeout_message
from agenteval.runner.job import EvalJob
from agenteval.runner.plan import RunPlan
from agenteval.runner.scoring import CaseRun
from agenteval.runner.services import Services
from agenteval.schema import Invocation
from agenteval.schema.progress import CaseStarted, Listener
from agenteval.tracing.recorder import graft

GRACE = 0.5  # seconds past a case's limit its worker has to answer before it is killed
_POLL = 0.5  # seconds one wait for a worker's message blocks (a cancelled run stops within it)
_STOP = 2.0  # seconds a worker told to stop has to end before it is killed
_KILL = 1.0  # seconds between SIGTERM and SIGKILL


class WorkerDied(Exception):
    """The worker process ended (or its pipe broke) while it had a case run."""


class WorkerProcess:
    """One worker process (started when first needed, again after it was killed or died) and
    the pipe to it."""

    def __init__(self, setup: WorkerSetup, limiter: anyio.CapacityLimiter) -> None:
        self.setup = setup
        self._limiter = limiter  # threads that wait on pipes
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None

    async def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        here, there = context.Pipe()
        process = context.Process(target=serve, args=(self.setup, there), daemon=True,
                                  name="agenteval-isolation-worker")
        process.start()
        there.close()
        self._process, self._conn = process, here
        while True:
            try:
                message = await self._receive(None)
            except WorkerDied as e:
                await self.stop()
                raise AgentEvalError(f"a worker process (--isolation process) could not load the "
                                     f"agent: it {e}") from None
            if isinstance(message, Ready):
                return
            if isinstance(message, LoadFailed):
                await self.stop()
                raise AgentEvalError(f"a worker process (--isolation process) could not load the "
                                     f"agent: {message.message}")

    async def _receive(self, deadline: float | None) -> Message | None:
        """The worker's next message; None when `deadline` (monotonic) has passed and no
        message is waiting. WorkerDied when the worker is gone, or sent what cannot be read."""
        assert self._conn is not None
        conn = self._conn
        while True:
            wait = _POLL if deadline is None else min(_POLL, deadline - time.monotonic())
            try:
                if wait <= 0:
                    if not conn.poll(0):
                        return None
                elif not await anyio.to_thread.run_sync(conn.poll, wait, abandon_on_cancel=True,
                                                        limiter=self._limiter):
                    continue
                message: Message = conn.recv()
                return message
            except (EOFError, OSError):
                raise WorkerDied(await self._death()) from None
            except Exception as e:  # a reply that does not unpickle here
                raise WorkerDied(f"sent a reply that cannot be read here ({describe(e)})") from None

    async def _send(self, order: Order) -> None:
        assert self._conn is not None
        try:
            self._conn.send(order)
        except OSError:  # it died since its last case
            raise WorkerDied(await self._death()) from None

    async def _death(self) -> str:
        """How the worker ended (waiting a moment for its exit status)."""
        process = self._process
        assert process is not None
        await anyio.to_thread.run_sync(process.join, _KILL, limiter=self._limiter)
        code = process.exitcode
        if code is None:
            return "closed its pipe"
        if code < 0:
            try:
                return f"was killed by signal {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with code {code}"

    async def infer(self, unit: Unit, timeout: float | None,
                    on_turn: Callable[[Invocation], None] | None = None) -> CaseRun:
        """Infers one case run in the worker; its spans are grafted under the current span;
        `on_turn` hears each turn as the worker reports it. Killed at `timeout` + `GRACE`
        seconds: the run is then recorded with the timeout error and the turns reported before."""
        if self._process is None or not self._process.is_alive():
            await self.stop(now=True)  # (one that ended on its own between cases: its pipe closed)
            await self._start()
        sent = time.monotonic()
        deadline = None if timeout is None else sent + timeout + GRACE
        spec: SessionSpec | None = None
        turns: list[Invocation] = []
        try:
            await self._send(Order(unit.eval_set_id, unit.case, unit.run_index))
            while True:
                message = await self._receive(deadline)
                if message is None:  # the limit, and the grace, passed
                    await self.stop(now=True)
                    assert timeout is not None
                    return self._record(unit, spec, turns, timeout_message(timeout, len(turns)))
                if isinstance(message, Started):
                    spec = message.spec
                elif isinstance(message, TurnDone):
                    turns.append(message.invocation)
                    if on_turn is not None:
                        on_turn(message.invocation)
                elif isinstance(message, Finished):
                    break
        except WorkerDied as e:
            await self.stop(now=True)
            kept = len(turns)
            return self._record(unit, spec, turns, (
                f"WorkerDied: the worker process running this case run (--isolation process) {e}; "
                f"{kept} turn{'' if kept == 1 else 's'} finished before are kept"))
        if timeout is not None and time.monotonic() - sent > timeout:
            await self.stop(now=True)  # late: the agent may have left work running there
        run = message.run
        run.case = unit.case
        if run.trace is not None:
            graft(run.trace.spans)
            run.trace = None
        return run

    @staticmethod
    def _record(unit: Unit, spec: SessionSpec | None, turns: list[Invocation], error: str) -> CaseRun:
        """The record of a case run whose worker never sent its own."""
        run = (new_run(unit.case, unit.eval_set_id, unit.run_index, spec) if spec is not None
               else CaseRun(case=unit.case, actual=[], eval_set_id=unit.eval_set_id,
                            run_index=unit.run_index))
        run.actual, run.error_message = turns, error
        if spec is not None:
            set_session_details(run, spec)
        return run

    async def stop(self, now: bool = False) -> None:
        """Ends the worker: asks it to stop (an idle worker ends at once), and sends it SIGTERM
        if it has not ended within `_STOP` seconds, SIGKILL if it still has not; `now` skips
        the asking (a worker that may be running something)."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if process is None:
            return
        with anyio.CancelScope(shield=True):
            steps: list[tuple[Callable[[], None] | None, float]] = [
                (process.terminate, _KILL), (process.kill, _KILL)]
            if not now and conn is not None:
                try:
                    conn.send(None)
                    steps.insert(0, (None, _STOP))
                except OSError:
                    pass
            for signal_it, wait in steps:
                if process.exitcode is not None:
                    break
                if signal_it is not None:
                    signal_it()
                await anyio.to_thread.run_sync(process.join, wait, limiter=self._limiter)
            if conn is not None:
                conn.close()


class ProcessExecutor:
    """Runs units as the local executor does, `parallelism` at a time, each case run's
    inference in a worker process (one per unit in flight), its scoring here."""

    def __init__(self, job: EvalJob, plan: RunPlan, services: Services, judge: JudgeService,
                 listener: Listener | None = None) -> None:
        require_by_path(job, services, "--isolation process (a worker process per case run)",
                        "runs in this process")
        self.job, self.plan, self.judge, self.listener = job, plan, judge, listener
        self.parallelism = plan.parallelism
        self.timeout = plan.case_timeout
        self.services = services

    def _setup(self, units: Sequence[Unit]) -> WorkerSetup:
        """What each worker needs. The agent's calls to an HTTP endpoint are limited per worker
        to the worker's share of the endpoint's limit (at least 1); the embedded model is
        loaded in each worker, with its own slots."""
        job, plan, parallelism = self.job, self.plan, self.parallelism
        assert job.agent_path is not None
        share = {name: limit if parse_model_name(name).backend == "local"
                 else max(1, math.ceil(limit / parallelism))
                 for name, limit in self.services.models.limits().items()}
        simulator = None
        if any(u.case.conversation_scenario is not None for u in units):
            simulator = plan.simulator_config()
        default_http = max(DEFAULT_HTTP_CONCURRENCY, parallelism)
        # One limit per endpoint over every process: the workers' calls and this process's
        # (the judges') take slots of one semaphore (`ModelPool.share`, for the run's length).
        slots: dict[str, Slots] = {name: SharedSlots(limit)
                                   for name, limit in self.services.models.limits().items()
                                   if parse_model_name(name).backend != "local"}
        return WorkerSetup(agent_path=agent_location(job.agent_path), agent_model=job.agent_model,
                           app_name=job.app_name, metrics=[], limits=share, slots=slots,
                           default_http=max(1, math.ceil(default_http / parallelism)),
                           endpoints=plan.endpoint_settings(), simulator=simulator,
                           traces=plan.traces, case_timeout=self.timeout,
                           inner_tool_calls=plan.inner_tool_calls, mock_tools=plan.mock_tools,
                           log_level=logging.getLogger().getEffectiveLevel())

    async def execute(self, units: Sequence[Unit], done: Done) -> None:
        if not units:
            return
        if self.parallelism < 1:
            raise ValueError("parallelism must be at least 1")
        count = min(self.parallelism, len(units))
        limiter = anyio.CapacityLimiter(count)
        setup = self._setup(units)
        workers = [WorkerProcess(setup, limiter) for _ in range(count)]
        todo = iter(units)
        finished = False
        self.services.models.share(setup.slots)
        try:
            async with anyio.create_task_group() as tg:
                for worker in workers:
                    tg.start_soon(self._drain, worker, todo, done)
            finished = True
        finally:
            # Idle workers are asked to stop; after a failure or Ctrl-C, busy ones are not waited for.
            with anyio.CancelScope(shield=True):
                async with anyio.create_task_group() as tg:
                    for worker in workers:
                        tg.start_soon(worker.stop, not finished)
            self.services.models.unshare()

    async def _drain(self, worker: WorkerProcess, todo: Iterator[Unit], done: Done) -> None:
        """Runs units from `todo` one at a time on `worker` until none is left."""
        while (unit := next(todo, None)) is not None:
            started = time.monotonic()
            if self.listener is not None:
                self.listener(CaseStarted(unit.eval_set_id, unit.case.eval_id, unit.run_index))

            async def infer(unit: Unit = unit) -> CaseRun:
                return await worker.infer(unit, self.timeout, turn_reporter(self.listener, unit))

            result = await score_unit(unit, infer, judge=self.judge, traces=self.plan.traces,
                                      listener=self.listener)
            done(unit, result, time.monotonic() - started)


__all__ = ["GRACE", "ProcessExecutor", "WorkerDied", "WorkerProcess"]
