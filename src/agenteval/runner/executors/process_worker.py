"""What runs in an isolation worker process: the agent, loaded once, inferring one case run at a
time (`--isolation process`; the parent side is `runner.executors.process`).

`serve` is the body of the process. It gets a `WorkerSetup` (the Ray workers' own: the agent's
path, its model override, model limits and endpoint settings, the user simulator, the case
timeout), loads the agent from its path and resolves models by name in its own `ModelPool`
(keys from this process's environment, which is the parent's), then answers orders over its
pipe until told to stop or the parent goes away. Messages are pickled over the pipe:

- parent to worker: an `Order` (one case run to infer), or None (stop);
- worker to parent: `Ready` once the agent is loaded (or `LoadFailed` with the reason, and
  the process ends); then per order `Started` (the session it runs in), one `TurnDone` per
  recorded invocation as soon as it is recorded, and `Finished` with the whole record
  (its spans included when traces are on).

Only inference happens here: scoring and judging stay in the parent. The worker applies the
case timeout itself too (an agent that waits is cancelled and the worker answers at once); an
agent that does not let go is the parent's to kill.
"""

from __future__ import annotations

import os
import pickle
import signal
from contextlib import nullcontext
from dataclasses import dataclass
from multiprocessing.connection import Connection

import anyio

from agenteval.agents import AgentAdapter, SessionSpec, to_adapter
from agenteval.agents.mock_tools import with_mock_tools
from agenteval.errors import configure_logging, describe
from agenteval.models.base import LLM
from agenteval.runner.executors.ray_worker import WorkerSetup, load_agent
from agenteval.runner.inference import infer_case, session_spec
from agenteval.runner.scoring import CaseRun
from agenteval.schema import ConversationScenario, EvalCase, Invocation
from agenteval.simulation import LlmUserSimulator
from agenteval.tracing import TraceRecorder, recording


@dataclass(frozen=True)
class Order:
    """One case run to infer."""

    eval_set_id: str
    case: EvalCase
    run_index: int


@dataclass(frozen=True)
class Ready:
    """The agent is loaded; `pid` is the worker's process id."""

    pid: int


@dataclass(frozen=True)
class LoadFailed:
    """The agent could not be loaded here (`message`: what went wrong); the worker has ended."""

    message: str


@dataclass(frozen=True)
class Started:
    """The order's case run has started, in the session `spec`."""

    spec: SessionSpec


@dataclass(frozen=True)
class TurnDone:
    """One invocation of the case run, recorded (JSON-safe already, see `runner.values`)."""

    invocation: Invocation


@dataclass(frozen=True)
class Finished:
    """The case run's whole record, its spans in `run.trace` (roots without a parent)."""

    run: CaseRun


class Worker:
    """The agent of one run, loaded in this process, and the models it resolves by name."""

    def __init__(self, setup: WorkerSetup) -> None:
        self.setup = setup
        self._pool = setup.model_pool()
        self.adapter: AgentAdapter = with_mock_tools(
            to_adapter(load_agent(setup.agent_path), self.model, setup.agent_model,
                       setup.inner_tool_calls), setup.mock_tools)

    def model(self, name: str) -> LLM:
        return self._pool.get(name)

    def _simulator(self, scenario: ConversationScenario) -> LlmUserSimulator:
        config = self.setup.simulator
        assert config is not None  # the parent sends one whenever a case is a scenario
        return LlmUserSimulator(scenario, self.model(config.model), config)

    async def serve(self, conn: Connection) -> None:
        """Answers orders until told to stop (None) or the parent is gone."""
        while True:
            try:
                order = await anyio.to_thread.run_sync(conn.recv)
            except (EOFError, OSError):
                return
            if order is None:
                return
            conn.send(Finished(await self.infer(order, conn)))

    async def infer(self, order: Order, conn: Connection) -> CaseRun:
        """Infers one case run, telling the parent of its session and of each turn as it is
        recorded; returns the record, to be sent back whole."""
        setup, adapter = self.setup, self.adapter
        spec = session_spec(order.case, setup.app_name or adapter.name)
        conn.send(Started(spec))
        recorder = TraceRecorder() if setup.traces else None
        with recording(recorder) if recorder else nullcontext():
            run = await infer_case(adapter, order.case, order.eval_set_id, order.run_index,
                                   setup.app_name, self._simulator if setup.simulator else None,
                                   timeout=setup.case_timeout, spec=spec,
                                   on_turn=lambda invocation: conn.send(TurnDone(invocation)))
        run.trace = recorder.trace if recorder else None
        return sendable(run)


def sendable(run: CaseRun) -> CaseRun:
    """`run` if it pickles; else the same record without what does not (its extras, its
    session state), with a warning saying so."""
    try:
        pickle.dumps(run)
    except Exception as e:  # anything pickling can raise for a value it cannot hold
        run.extras, run.session_state = {}, None
        if run.session_details is not None:
            run.session_details["state"] = None
        run.warnings.append(f"the record could not be sent from the worker process whole "
                            f"({type(e).__name__}: {e}); its extras and session state are dropped")
    return run


def serve(setup: WorkerSetup, conn: Connection) -> None:
    """The body of a worker process: loads the agent, says `Ready` (or `LoadFailed`), then
    answers orders. Ctrl-C is the parent's to handle: the parent stops its workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    configure_logging(setup.log_level)  # as the parent's: a spawned process starts unconfigured
    try:
        worker = Worker(setup)
    except BaseException as e:  # SystemExit too: an agent exiting while it is imported
        conn.send(LoadFailed(describe(e)))
        return
    conn.send(Ready(os.getpid()))
    anyio.run(worker.serve, conn)


Message = Ready | LoadFailed | Started | TurnDone | Finished
"""What a worker sends its parent."""

__all__ = ["Finished", "LoadFailed", "Message", "Order", "Ready", "Started", "TurnDone", "Worker",
           "sendable", "serve"]
