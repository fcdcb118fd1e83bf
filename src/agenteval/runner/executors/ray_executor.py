"""The Ray executor: a run's (case, run) units spread over a Ray cluster.

Ray is the engine: workers are Ray actors (one per CPU of the cluster unless told otherwise),
each unit is one actor call, and a worker that dies is restarted by Ray, which runs its
unfinished calls again (`max_task_retries`). The driver (this process) keeps `parallelism`
units in flight, each sent to the least busy worker, takes results as they finish
(`ray.wait`) and alone reports them: the journal, the history and the result document are
written here, never on a worker. Calls to each model endpoint are limited across the cluster
by one named limiter actor per endpoint (`cluster_limits`), judge verdicts cached by one
actor on the driver's machine. Progress events from the workers (finished turns, answered
judge questions) go to one inbox actor, which the driver empties each time it waits for results
and tells its listener, so a unit's events come before its result. Ray is imported when a run
uses this executor, never before.
"""

from __future__ import annotations

import importlib
import logging
import math
import socket
import threading
import time
import uuid
from collections.abc import Sequence
from typing import Any

import anyio

from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.criteria.spec import ConfiguredMetric
from agenteval.errors import AgentEvalError
from agenteval.models.limits import Slots
from agenteval.models.resolve import DEFAULT_HTTP_CONCURRENCY, parse_model_name
from agenteval.runner.executors.base import Done, Unit, require_by_path
from agenteval.runner.executors.cluster_limits import ClusterSlots, EndpointLimiter
from agenteval.runner.executors.ray_worker import (
    EvalWorker,
    JudgeCacheServer,
    ProgressInbox,
    UnitDone,
    WireUnit,
    WorkerSetup,
    agent_location,
    import_ray,
)
from agenteval.runner.job import EvalJob
from agenteval.runner.plan import RunPlan
from agenteval.runner.scoring import CaseRun, score_case
from agenteval.runner.services import Services
from agenteval.schema import EvalCaseResult
from agenteval.schema.progress import CaseStarted, Listener
from agenteval.store.judge_cache import JudgeCacheDB

log = logging.getLogger(__name__)

RETRIES = 3  # runs of a unit again after its worker died (Ray's max_task_retries)
_POLL = 1.0  # seconds one ray.wait blocks, so a cancelled run stops within about that
_CONNECT_TIMEOUT = 10.0  # seconds to reach a cluster's HOST:PORT
# A case run Ray ran again after its worker died: the result is the second run's, but the first
# may have got as far as calling the agent and its tools (costs, side effects, a flaky crash).
RERUN_WARNING = ("its Ray worker died while holding this case run, which was run again from its start "
                 "on the restarted worker: the agent and its tools may have been called more than once")

# One Ray connection per process, shared by every run in it (two evals started from the web UI):
# the runs using it, and whether a run made it (then the last run to end closes it).
_connection = threading.Lock()
_runs = 0
_owned = False


class RayExecutor:
    """Runs units on Ray workers. `address`: the cluster (`auto`, `ray://HOST:PORT`, ...;
    None: the one this process is connected to, else a new local one); `workers`: how many
    (default: one per CPU of the cluster)."""

    def __init__(self, job: EvalJob, plan: RunPlan, services: Services, judge: JudgeService,
                 listener: Listener | None = None, *, address: str | None = None,
                 workers: int | None = None) -> None:
        require_by_path(job, services, "the Ray executor (on every worker)", "runs with the local executor")
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.job, self.plan, self.services, self.judge, self.listener = job, plan, services, judge, listener
        self.address = address if address is not None else job.ray_address
        self.workers = workers
        self.parallelism = plan.parallelism
        self.ray: Any = import_ray()  # now: a missing Ray fails before anything has run
        self._inbox: Any = None  # the run's ProgressInbox actor, when there is a listener

    async def execute(self, units: Sequence[Unit], done: Done) -> None:
        if not units:
            return
        ray = self.ray
        self._connect()
        actors: list[Any] = []
        try:
            # Each eval set's metrics go to the workers once; a unit names its set's by index.
            metric_sets: dict[int, int] = {}
            distinct: list[Sequence[ConfiguredMetric]] = []
            for unit in units:
                if id(unit.metrics) not in metric_sets:
                    metric_sets[id(unit.metrics)] = len(distinct)
                    distinct.append(unit.metrics)
            setup = self._setup(distinct, units, actors)
            workers = self._start(setup, len(units), actors)
            incarnations = await self._ready(workers)
            await self._dispatch(workers, incarnations, units, metric_sets, done)
        finally:
            self.services.models.unshare()
            for actor in actors:
                ray.kill(actor, no_restart=True)
            self._disconnect()

    def _connect(self) -> None:
        """Joins the cluster at `address` (None: the one `ray start` runs here, else a new local
        one), unless this process is connected already (then that connection is used, whatever
        `address` says); a cluster that cannot be reached is an AgentEvalError naming it."""
        global _runs, _owned
        with _connection:
            if not self.ray.is_initialized():
                join_cluster(self.ray, self.address)
                _owned = True
            _runs += 1

    def _disconnect(self) -> None:
        """Leaves the cluster (stopping it if it was started here) when the last run in this
        process that uses the connection it made ends."""
        global _runs, _owned
        with _connection:
            _runs -= 1
            if _runs == 0 and _owned:
                self.ray.shutdown()
                _owned = False

    def _setup(self, metrics: list[Sequence[ConfiguredMetric]], units: Sequence[Unit],
               actors: list[Any]) -> WorkerSetup:
        """What workers need; creates the limiter actors and the judge cache's actor."""
        ray, job, plan = self.ray, self.job, self.plan
        assert job.agent_path is not None
        endpoints = plan.endpoint_settings()
        limits = self.services.models.limits()
        tag = uuid.uuid4().hex[:8]  # this run's actors apart from any other run's on the cluster
        limiters: dict[str, str] = {}
        rated: set[str] = set()
        limiter_class = ray.remote(EndpointLimiter)
        driver: dict[str, Slots] = {}
        for name, limit in limits.items():
            if parse_model_name(name).backend == "local":
                continue  # the embedded model runs inside each worker: its slots are per process
            options = endpoints.get(name)
            limiters[name] = f"agenteval-limit-{tag}-{name}"
            actors.append(limiter_class.options(name=limiters[name], num_cpus=0).remote(
                limit, options.requests_per_minute if options else None,
                options.tokens_per_minute if options else None))
            driver[name] = ClusterSlots(actors[-1], f"driver:{tag}")  # this process's calls too
            if options is not None and (options.requests_per_minute or options.tokens_per_minute):
                rated.add(name)  # the limiter keeps the rates for the whole cluster
                endpoints[name] = options.model_copy(update={"requests_per_minute": None,
                                                             "tokens_per_minute": None})
        self.services.models.share(driver)  # until `execute` ends
        simulator = None
        if any(u.case.conversation_scenario is not None for u in units):
            simulator = plan.simulator_config()
        return WorkerSetup(
            agent_path=agent_location(job.agent_path), agent_model=job.agent_model, app_name=job.app_name,
            metrics=metrics, limits=limits, default_http=max(DEFAULT_HTTP_CONCURRENCY, self.parallelism),
            endpoints=endpoints, limiters=limiters, cache=self._cache(tag, actors), rated=frozenset(rated),
            progress=self._progress_inbox(tag, actors),
            simulator=simulator,
            judge_max_tokens=self.judge.max_tokens, judge_early_stop=self.judge.early_stop,
            traces=plan.traces, case_timeout=plan.case_timeout,
            inner_tool_calls=plan.inner_tool_calls, mock_tools=plan.mock_tools,
            log_level=logging.getLogger().getEffectiveLevel())

    def _cache(self, tag: str, actors: list[Any]) -> str | None:
        """The name of an actor serving the run's judge cache from this machine (None: no cache)."""
        ray, cache = self.ray, self.services.judge_cache
        if cache is None:
            return None
        if importlib.import_module("ray.util.client").ray.is_connected():
            # Ray Client: this process is not on the cluster, so no actor can open its files.
            log.warning("judge verdicts are not cached on a Ray Client connection (ray://)")
            return None
        strategies = importlib.import_module("ray.util.scheduling_strategies")
        here = strategies.NodeAffinitySchedulingStrategy(
            ray.get_runtime_context().get_node_id(), soft=False)
        name = f"agenteval-judge-cache-{tag}"
        actors.append(ray.remote(JudgeCacheServer).options(name=name, num_cpus=0, scheduling_strategy=here)
                      .remote(str(cache.path) if isinstance(cache, JudgeCacheDB) else cache))
        return name

    def _progress_inbox(self, tag: str, actors: list[Any]) -> str | None:
        """The name of the actor collecting the workers' progress events on this machine (None:
        no listener, no events)."""
        if self.listener is None:
            return None
        ray = self.ray
        name = f"agenteval-progress-{tag}"
        self._inbox = ray.remote(ProgressInbox).options(name=name, num_cpus=0).remote()
        actors.append(self._inbox)
        return name

    def _tell_progress(self) -> None:
        """Tells the listener the events the workers sent since last time (blocking)."""
        if self._inbox is None or self.listener is None:
            return
        for event in self.ray.get(self._inbox.take.remote()):
            self.listener(event)

    def _start(self, setup: WorkerSetup, units: int, actors: list[Any]) -> list[Any]:
        """The worker actors, each taking up to its share of the units in flight."""
        ray = self.ray
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        count = min(self.workers or max(1, int(cpus)), units, self.parallelism)
        worker_class = ray.remote(EvalWorker).options(
            num_cpus=min(1.0, cpus / count), max_concurrency=math.ceil(self.parallelism / count),
            max_restarts=-1, max_task_retries=RETRIES)
        workers = [worker_class.remote(setup, i) for i in range(count)]
        actors.extend(workers)
        return workers

    async def _ready(self, workers: list[Any]) -> list[str]:
        """Waits until every worker has loaded the agent, and gives each one's incarnation
        (`EvalWorker.holder`); one that cannot fails the run here, with its reason (an agent
        missing on a worker's machine, a failing import)."""
        ray = self.ray
        refs = [w.ready.remote() for w in workers]
        holders = [""] * len(workers)
        left = list(refs)
        while left:
            for ref in await self._wait(left):
                left.remove(ref)
                try:
                    holders[refs.index(ref)] = ray.get(ref)
                except ray.exceptions.RayError as e:
                    raise AgentEvalError(f"a Ray worker could not start: {_cause(e)}") from None
        return holders

    async def _wait(self, refs: list[Any]) -> list[Any]:
        """The refs that are done (at least one, unless `_POLL` seconds pass first)."""
        ray = self.ray

        def wait() -> list[Any]:
            ready, rest = ray.wait(refs, num_returns=1, timeout=_POLL)
            if ready and rest:  # take every other result that is in too
                more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
                ready += more
            return list(ready)

        return await anyio.to_thread.run_sync(wait)

    async def _dispatch(self, workers: list[Any], incarnations: list[str], units: Sequence[Unit],
                        metric_sets: dict[int, int], done: Done) -> None:
        """Keeps `parallelism` units in flight and reports each result as it comes. A result
        from another incarnation of its worker than the one it was sent to was run again after
        the worker died: it says so in a warning (its agent may have been called twice), unless
        it was sent after that incarnation started (a unit sent while Ray restarted the worker)."""
        busy = [0] * len(workers)
        pending: dict[Any, tuple[Unit, int, float, tuple[str, float]]] = {}
        todo = iter(units)

        def submit() -> None:
            while len(pending) < self.parallelism and (unit := next(todo, None)) is not None:
                w = min(range(len(workers)), key=busy.__getitem__)
                wire = WireUnit(unit.index, unit.eval_set_id, unit.case, unit.run_index,
                                metric_sets[id(unit.metrics)], unit.policy)
                pending[workers[w].run.remote(wire)] = (unit, w, time.monotonic(),
                                                        (incarnations[w], time.time()))
                busy[w] += 1
                if self.listener is not None:
                    self.listener(CaseStarted(unit.eval_set_id, unit.case.eval_id, unit.run_index))

        submit()
        while pending:
            ready = await self._wait(list(pending))
            # a finished unit's events were in the inbox before its result: told first
            await anyio.to_thread.run_sync(self._tell_progress)
            for ref in ready:
                unit, w, sent, (sent_to, sent_at) = pending.pop(ref)
                busy[w] -= 1
                result, seconds, ran_on = await self._take(ref, unit, sent)
                if ran_on is not None and ran_on[0] != sent_to:
                    if sent_at < ran_on[1]:
                        result.warnings.append(RERUN_WARNING)
                    incarnations[w] = ran_on[0]
                done(unit, result, seconds)
            submit()

    async def _take(self, ref: Any, unit: Unit,
                    sent: float) -> tuple[EvalCaseResult, float, tuple[str, float] | None]:
        """The result behind a finished ref and the worker incarnation that ran it; a unit Ray
        gave up on is an error result (no incarnation)."""
        ray = self.ray
        try:
            out: UnitDone = ray.get(ref)
        except ray.exceptions.RayActorError as e:
            message = (f"WorkerDied: the Ray worker running this case run died, and Ray gave up after "
                       f"running it again up to {RETRIES} times: {_first_line(e)}")
        except ray.exceptions.RayError as e:
            message = f"{_cause(e)} (on a Ray worker)"
        else:
            self.judge.calls += out.judge_calls
            self.judge.prompt_tokens += out.judge_prompt_tokens
            return (EvalCaseResult.model_validate_json(out.result_json), out.seconds,
                    (out.worker, out.worker_started))
        run = CaseRun(case=unit.case, actual=[], eval_set_id=unit.eval_set_id, run_index=unit.run_index,
                      error_message=message)
        return await score_case(run, unit.metrics, unit.policy), time.monotonic() - sent, None


def join_cluster(ray: Any, address: str | None) -> None:
    """Connects this process to the Ray cluster at `address` (None: `RAY_ADDRESS`, else the one
    `ray start` runs here, else a new local one); one that cannot be used is an AgentEvalError
    naming it, with Ray's first line of why."""
    extra = {} if address else {"include_dashboard": False}
    try:
        _check_reachable(address)
        ray.init(address=address, logging_level=logging.WARNING, **extra)
    except Exception as e:  # OSError: refused, timed out, unknown host; a local node that does
        # not start in time (a busy machine) is a bare Exception
        where = f"the Ray cluster at {address}" if address else "a local Ray cluster"
        raise AgentEvalError(f"cannot use {where}: {_first_line(e)}") from None


def _check_reachable(address: str | None) -> None:
    """A ConnectionError now when `address` is a HOST:PORT nothing listens on (Ray itself would
    keep retrying for minutes); `auto`, `local` and `ray://` addresses are left to Ray."""
    if not address or "://" in address or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        return
    with socket.create_connection((host, int(port)), timeout=_CONNECT_TIMEOUT):
        pass


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _cause(error: BaseException) -> str:
    """`Type: message` of what went wrong on the worker (Ray wraps it, traceback and all)."""
    cause = getattr(error, "cause", None) or error
    return f"{type(cause).__name__}: {_first_line(cause)}"


__all__ = ["RERUN_WARNING", "RETRIES", "RayExecutor", "join_cluster"]
