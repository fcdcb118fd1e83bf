"""What runs on a Ray worker: the agent, loaded once per process, inferring and scoring units.

`EvalWorker` is the body of a Ray async actor (the Ray executor makes it remote; this module
never imports Ray). It is built from a `WorkerSetup` (everything every unit of the run needs),
loads the agent from its path once per process, resolves models by name in its own
`ModelPool` (keys from the worker's environment), each behind the cluster-wide limiter of its
endpoint, and judges with verdicts cached by the driver's `JudgeCacheServer`. `run` does one
unit, inference and scoring (judges included), and returns its result as JSON with the judge
calls it made, for the driver to journal and report. Progress (each finished turn, each
answered judge question) goes to the driver's `ProgressInbox` as it happens, all of a unit's
before its result.
"""

from __future__ import annotations

import importlib
import logging
import os
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agenteval.agents import load_root_agent, to_adapter
from agenteval.agents.mock_tools import MockTools, with_mock_tools
from agenteval.criteria.judge.engine.progress import tagging
from agenteval.criteria.judge.engine.service import JudgeCache, JudgeService
from agenteval.criteria.spec import ConfiguredMetric
from agenteval.errors import AgentEvalError, configure_logging
from agenteval.models.base import LLM
from agenteval.models.limits import Slots
from agenteval.models.pool import ModelPool
from agenteval.models.resolve import parse_model_name
from agenteval.runner.executors.base import Unit
from agenteval.runner.executors.cluster_limits import ClusterLimitedLLM
from agenteval.runner.executors.local import run_unit, turn_reporter
from agenteval.runner.scoring import NotEvaluatedPolicy
from agenteval.schema import ConversationScenario, EndpointOptions, EvalCase
from agenteval.schema.progress import ProgressEvent
from agenteval.simulation import LlmBackedUserSimulatorConfig, LlmUserSimulator
from agenteval.store.judge_cache import JudgeCacheDB

_AGENTS: dict[str, Any] = {}  # agent path -> root agent: imported once per worker process
INSTALL_RAY = "pip install 'agenteval[ray]'"


def import_ray() -> Any:
    """The `ray` module, or an AgentEvalError saying how to install it. (Imported by name, so
    nothing else in agenteval depends on Ray being installed, type checks included.)"""
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise AgentEvalError(f"the Ray executor needs Ray: {INSTALL_RAY}") from None


def load_agent(path: str) -> Any:
    """The root agent at `path`, imported on first use in this process."""
    if path not in _AGENTS:
        _AGENTS[path] = load_root_agent(path)
    return _AGENTS[path]


@dataclass
class WorkerSetup:
    """What every unit of a run needs on a worker, sent once per worker."""

    agent_path: str
    agent_model: str | None
    app_name: str | None
    metrics: list[Sequence[ConfiguredMetric]]  # each unit names its eval set's by index
    limits: dict[str, int]  # calls in flight per endpoint (also each process's own cap)
    default_http: int
    endpoints: dict[str, EndpointOptions]
    # Actors by name (handles in an actor's arguments would tie its restarts to the object store)
    limiters: dict[str, str] = field(default_factory=dict)  # endpoint -> its EndpointLimiter
    cache: str | None = None  # the JudgeCacheServer, or None: no verdict cache
    progress: str | None = None  # the ProgressInbox, or None: nobody listens
    rated: frozenset[str] = frozenset()  # endpoints whose limiter keeps a rate (slots not reused)
    simulator: LlmBackedUserSimulatorConfig | None = None
    judge_max_tokens: int = 200
    judge_early_stop: bool = True
    traces: bool = True
    case_timeout: float | None = None
    inner_tool_calls: Literal["include", "exclude"] = "include"  # EvalConfig.inner_tool_calls
    mock_tools: MockTools | None = None  # RunPlan.mock_tools
    # Endpoint -> slots shared with the process that spawned this one (models.limits.SharedSlots)
    slots: dict[str, Slots] = field(default_factory=dict)
    log_level: int = logging.WARNING  # the driver's (or spawning process's): the worker logs as it does

    def model_pool(self) -> ModelPool:
        """This process's models, limited as the setup says, resolved by name with this
        process's environment (API keys)."""
        pool = ModelPool(os.environ, self.limits, default_http=self.default_http,
                         endpoints=self.endpoints)
        pool.share(self.slots)
        return pool


@dataclass(frozen=True)
class WireUnit:
    """A unit as sent to a worker: its metrics by index into `WorkerSetup.metrics`."""

    index: int
    eval_set_id: str
    case: EvalCase
    run_index: int
    metrics: int
    policy: NotEvaluatedPolicy


@dataclass
class UnitDone:
    """A unit's result as JSON (`EvalCaseResult.model_dump_json()`), the seconds it took, the
    judge calls it made (for the driver's totals) and the worker incarnation that ran it
    (`EvalWorker.holder`: another than the one the unit was sent to ran it again after a death)."""

    result_json: str
    seconds: float
    judge_calls: int
    judge_prompt_tokens: int
    worker: str = ""
    worker_started: float = 0.0  # when that incarnation started (time.time())


class ProgressInbox:
    """Progress events from the workers, kept until the driver takes them (the body of a Ray
    actor on the driver's node): workers `put` them as they happen, the driver `take`s them
    while it waits for results."""

    def __init__(self) -> None:
        self._events: list[ProgressEvent] = []

    def put(self, event: ProgressEvent) -> None:
        self._events.append(event)

    def take(self) -> list[ProgressEvent]:
        events, self._events = self._events, []
        return events


class JudgeCacheServer:
    """The run's judge-verdict cache, served from the driver's machine (the body of a Ray actor
    placed on the driver's node): workers elsewhere see the same verdicts."""

    def __init__(self, cache: JudgeCache | str) -> None:
        self._cache = JudgeCacheDB(cache) if isinstance(cache, str) else cache

    def get(self, key: str) -> str | None:
        return self._cache.get(key)

    def put(self, key: str, value: str) -> None:
        self._cache.put(key, value)


class RemoteJudgeCache:
    """A `JudgeCache` over a `JudgeCacheServer` actor, for one unit. A lookup waits for the
    answer (the judge asks synchronously; one local round trip, far below a judge call); a
    store does not, but `flush` waits for the unit's stores, so none is lost when the run ends
    (and its actors are stopped) right after the unit's result."""

    def __init__(self, server: Any) -> None:
        self._ray = import_ray()
        self._server = server
        self._stores: list[Any] = []

    def get(self, key: str) -> str | None:
        value: str | None = self._ray.get(self._server.get.remote(key))
        return value

    def put(self, key: str, value: str) -> None:
        self._stores.append(self._server.put.remote(key, value))

    async def flush(self) -> None:
        for ref in self._stores:
            await ref
        self._stores.clear()


class EvalWorker:
    """Runs units of one run (the body of a Ray async actor; `index` names this worker, and
    stays the same when Ray restarts it in a new process)."""

    def __init__(self, setup: WorkerSetup, index: int) -> None:
        # Judge-cache lookups are deliberately synchronous (a local round trip, far below a judge
        # call); Ray would warn about the first blocking get in an async actor.
        os.environ.setdefault("RAY_WARN_BLOCKING_GET_INSIDE_ASYNC", "0")
        # as the driver logs: a failing ADK turn one line, not google-adk's tracebacks in its output
        configure_logging(setup.log_level)
        self.setup = setup
        self.holder = f"{index}:{uuid.uuid4().hex[:12]}"
        self.started = time.time()
        ray = import_ray()
        self._limiters = {endpoint: ray.get_actor(name) for endpoint, name in setup.limiters.items()}
        # slots a dead earlier incarnation of this worker held come back
        ray.get([limiter.forget.remote(str(index), self.holder) for limiter in self._limiters.values()])
        self._pool = setup.model_pool()
        self._models: dict[str, LLM] = {}
        self._cache_server = ray.get_actor(setup.cache) if setup.cache is not None else None
        self._progress = ray.get_actor(setup.progress) if setup.progress is not None else None
        self._adapter = with_mock_tools(to_adapter(load_agent(setup.agent_path), self.model,
                                                   setup.agent_model, setup.inner_tool_calls),
                                        setup.mock_tools)

    def model(self, name: str) -> LLM:
        """The model `name`, behind its endpoint's cluster-wide limiter (the embedded model is
        each process's own: its slots are limited per process)."""
        if name not in self._models:
            llm: LLM = self._pool.get(name)
            endpoint = parse_model_name(name).name
            limiter = self._limiters.get(endpoint)
            self._models[name] = llm if limiter is None else ClusterLimitedLLM(
                llm, limiter, self.holder, reuse=endpoint not in self.setup.rated)
        return self._models[name]

    def ready(self) -> str:
        """This incarnation's `holder` (new each time Ray restarts the worker), once the agent
        is loaded."""
        return self.holder

    def _simulator(self, scenario: ConversationScenario) -> LlmUserSimulator:
        config = self.setup.simulator
        assert config is not None  # the driver sends one whenever a case is a scenario
        return LlmUserSimulator(scenario, self.model(config.model), config)

    async def run(self, wire: WireUnit) -> UnitDone:
        """Infers and scores one unit; its progress events are in the driver's inbox before it
        returns."""
        setup = self.setup
        sent: list[Any] = []  # the unit's progress events on their way to the inbox
        inbox = self._progress

        def tell(event: ProgressEvent) -> None:
            assert inbox is not None  # told only when there is an inbox
            sent.append(inbox.put.remote(event))

        cache = RemoteJudgeCache(self._cache_server) if self._cache_server is not None else None
        judge = JudgeService(self.model, cache, max_tokens=setup.judge_max_tokens,
                             listener=None if inbox is None else tagging(tell),
                             early_stop=setup.judge_early_stop)
        unit = Unit(wire.index, wire.eval_set_id, wire.case, wire.run_index, setup.metrics[wire.metrics],
                    wire.policy)
        started = time.monotonic()
        result = await run_unit(unit, self._adapter, app_name=setup.app_name,
                                simulator=self._simulator if setup.simulator else None, judge=judge,
                                traces=setup.traces, case_timeout=setup.case_timeout,
                                on_turn=turn_reporter(None if inbox is None else tell, unit),
                                listener=None if inbox is None else tell)
        if cache is not None:
            await cache.flush()
        for ref in sent:
            await ref
        return UnitDone(result.model_dump_json(exclude_none=False), time.monotonic() - started,
                        judge.calls, judge.prompt_tokens, self.holder, self.started)


def agent_location(agent_path: str) -> str:
    """The agent's path as workers load it: absolute when it exists here (workers on this
    machine need not share the driver's working directory), else as given."""
    path = Path(agent_path)
    return str(path.resolve()) if path.exists() else agent_path


__all__ = ["INSTALL_RAY", "EvalWorker", "JudgeCacheServer", "ProgressInbox", "RemoteJudgeCache", "UnitDone",
           "WireUnit", "WorkerSetup", "agent_location", "import_ray", "load_agent"]
