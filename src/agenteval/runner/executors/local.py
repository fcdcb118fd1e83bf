"""The local executor: every unit in this process's event loop, `parallelism` at a time."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass

import anyio

from agenteval.agents.base import AgentAdapter
from agenteval.criteria.judge.engine.progress import judging
from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.runner.executors.base import Done, Unit
from agenteval.runner.inference import SimulatorFactory, infer_case
from agenteval.runner.scoring import CaseRun, score_case
from agenteval.schema import EvalCaseResult, Invocation
from agenteval.schema.progress import CaseStarted, Listener, TurnDone
from agenteval.tracing import TraceRecorder, recording, span

Infer = Callable[[], Awaitable[CaseRun]]
"""One case run's inference, however it is done (in this process, in a worker process)."""


async def run_unit(unit: Unit, adapter: AgentAdapter, *, app_name: str | None = None,
                   simulator: SimulatorFactory | None = None, judge: JudgeService | None = None,
                   traces: bool = True, case_timeout: float | None = None,
                   on_turn: Callable[[Invocation], None] | None = None,
                   listener: Listener | None = None) -> EvalCaseResult:
    """Infers one case run in this process and scores it as soon as its inference ends (see
    `score_unit`); a run longer than `case_timeout` seconds is stopped and recorded with a
    timeout error; `on_turn` hears each turn as it finishes, `listener` the judge questions
    planned (see `score_unit`). Every executor that runs the
    agent in its own process runs units through this."""
    async def infer() -> CaseRun:
        return await infer_case(adapter, unit.case, unit.eval_set_id, unit.run_index, app_name,
                                simulator, timeout=case_timeout, on_turn=on_turn)

    return await score_unit(unit, infer, judge=judge, traces=traces, listener=listener)


async def score_unit(unit: Unit, infer: Infer, *, judge: JudgeService | None = None,
                     traces: bool = True, listener: Listener | None = None) -> EvalCaseResult:
    """Runs `infer` for one case run, then scores what it recorded. With `traces`, its spans
    (agent steps, model and tool calls, simulated user turns, judge calls) are recorded into
    the result's `trace`, under one `case` span (spans `infer` brings back from elsewhere in
    its run's `trace` are put under it by `infer`, see `graft`). Its judge questions are counted
    as the case run's (`engine.progress.judging`): `listener` hears them planned."""
    recorder = TraceRecorder() if traces else None
    with recording(recorder) if recorder else nullcontext(), \
            span("case", f"case {unit.case.eval_id}", {"agenteval.eval_set_id": unit.eval_set_id,
                                                      "agenteval.eval_id": unit.case.eval_id,
                                                      "agenteval.run_index": unit.run_index}):
        run = await infer()
        run.trace = recorder.trace if recorder else None
        with span("scoring", "scoring"), judging(unit.eval_set_id, unit.case.eval_id, unit.run_index,
                                                 listener):
            result = await score_case(run, unit.metrics, unit.policy, judge)
    result.trace = run.trace
    return result


@dataclass(eq=False, repr=False)  # compared by identity: two fewer methods compiled at import
class LocalExecutor:
    """Runs units as tasks of the calling event loop, at most `parallelism` at once; model
    calls are further limited per endpoint by the models layer (the run's `ModelPool`)."""

    adapter: AgentAdapter
    parallelism: int = 4
    app_name: str | None = None
    simulator: SimulatorFactory | None = None
    judge: JudgeService | None = None
    listener: Listener | None = None
    traces: bool = True
    case_timeout: float | None = None

    async def execute(self, units: Sequence[Unit], done: Done) -> None:
        if self.parallelism < 1:
            raise ValueError("parallelism must be at least 1")
        todo = iter(units)

        async def worker() -> None:
            # `parallelism` workers pull units in order from one iterator: a task per unit in
            # flight, not one per unit of the run (50,000 waiting tasks are memory, not work).
            for unit in todo:
                started = time.monotonic()
                if self.listener is not None:
                    self.listener(CaseStarted(unit.eval_set_id, unit.case.eval_id, unit.run_index))
                result = await run_unit(unit, self.adapter, app_name=self.app_name,
                                        simulator=self.simulator, judge=self.judge, traces=self.traces,
                                        case_timeout=self.case_timeout,
                                        on_turn=turn_reporter(self.listener, unit), listener=self.listener)
                done(unit, result, time.monotonic() - started)

        async with anyio.create_task_group() as tg:
            for _ in range(min(self.parallelism, len(units))):
                tg.start_soon(worker)



def turn_reporter(listener: Callable[[TurnDone], None] | None,
                  unit: Unit) -> Callable[[Invocation], None] | None:
    """What tells `listener` of each turn of `unit` that finishes (`TurnDone`: turns done of
    the case's, None for a scenario); None without a listener. Every executor reports turns
    through it, wherever the agent runs."""
    if listener is None:
        return None
    conversation = unit.case.conversation
    turns = len(conversation) if conversation else None
    done = 0

    def heard(_: Invocation) -> None:
        nonlocal done
        done += 1
        listener(TurnDone(unit.eval_set_id, unit.case.eval_id, unit.run_index, done, turns))
    return heard


__all__ = ["Infer", "LocalExecutor", "run_unit", "score_unit", "turn_reporter"]
