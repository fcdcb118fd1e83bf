"""Running an agent over eval sets: inference then scoring per case, cases and runs in parallel.

Each (case, run) pair is inferred and then scored as soon as its inference ends, by an executor
(`runner.executors`: this process's event loop under one concurrency limit, `parallelism`, or a
Ray cluster); model calls are further limited per model by the models layer. Results come back
in eval-set, case and run order, whatever order they finished in.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from agenteval.agents.base import AgentAdapter
from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.criteria.spec import ConfiguredMetric
from agenteval.runner.driver import Collected, Sink, Sinks, completed, new_document, progress, summarise_runs
from agenteval.runner.executors.base import Executor, Unit
from agenteval.runner.executors.local import LocalExecutor
from agenteval.runner.inference import SimulatorFactory
from agenteval.runner.scoring import NotEvaluatedPolicy
from agenteval.schema import EvalCase, EvalCaseResult, EvalSet, EvalSetResult, EvalStatus
from agenteval.schema.progress import Listener
from agenteval.schema.run import RunSpec
from agenteval.verdicts.sequential import SequentialRule


@dataclass
class EvalSetRequest:
    """One eval set to run, optionally restricted to some case ids."""

    eval_set: EvalSet
    metrics: Sequence[ConfiguredMetric]
    case_ids: Sequence[str] | None = None
    policy: NotEvaluatedPolicy = "fail"
    gating: str = "mean"

    def cases(self) -> list[EvalCase]:
        """The selected cases; an unknown id is an error (ADK silently ignores it)."""
        if not self.case_ids:
            return list(self.eval_set.eval_cases)
        known = {c.eval_id: c for c in self.eval_set.eval_cases}
        missing = [i for i in self.case_ids if i not in known]
        if missing:
            raise KeyError(f"eval set {self.eval_set.eval_set_id!r} has no case "
                           f"{', '.join(map(repr, missing))}")
        return [known[i] for i in self.case_ids]


Documents = Callable[[EvalSetResult], Sink]
"""Where an eval set's document goes, given its shell (its id; no cases yet): a sink that hears
the set's case runs in case and run order (`on_case_run`), its cases (`on_case`) and its
completed document (`on_document`)."""


@dataclass
class _Case:
    """One case of the run: where it is, its runs planned, and those known but not yet told to
    its document (by run index)."""

    request: int
    case: EvalCase
    planned: int
    waiting: dict[int, EvalCaseResult] = field(default_factory=dict)
    verdicts: list[bool] = field(default_factory=list)  # every run's, in run order (until_decided)

    def known(self, done: Mapping[tuple[str, str, int], EvalCaseResult], eval_set_id: str) -> bool:
        """Whether every planned run is known (its own or a resumed run's)."""
        return all(r in self.waiting or (eval_set_id, self.case.eval_id, r) in done
                   for r in range(self.planned))


async def run_evaluation(
    adapter: AgentAdapter,
    requests: Sequence[EvalSetRequest],
    *,
    num_runs: int = 1,
    parallelism: int = 4,
    app_name: str | None = None,
    simulator: SimulatorFactory | None = None,
    judge: JudgeService | None = None,
    listener: Listener | None = None,
    header: RunSpec | None = None,
    traces: bool = True,
    finished: Mapping[tuple[str, str, int], EvalCaseResult] | None = None,
    case_timeout: float | None = None,
    executor: Executor | None = None,
    sink: Sink | None = None,
    until_decided: SequentialRule | None = None,
    documents: Documents | None = None,
    end: Callable[[], object] | None = None,
) -> list[EvalSetResult]:
    """Runs every selected case `num_runs` times; one EvalSetResult per eval set (carrying
    `header` as its `run`). `sink` (default: progress events for `listener`) hears each case run
    as soon as it is known (`Sink.on_case_run`: the journal commits it then), each case over its
    runs (`Sink.on_case`) and each document; `listener` hears the executor's progress (case runs
    starting, turns). With `traces`, each case run's spans (agent steps, model and tool calls,
    simulated user turns, judge calls) are recorded into its result's `trace`. Case runs in
    `finished` (by eval set id, eval id, run index: a resumed run's) are not run again; their
    results take their places, read from `finished` only when their place comes. A case run that
    takes longer than `case_timeout` seconds is stopped and recorded with a timeout error. The
    case runs go to `executor` (default: a `LocalExecutor` over this process's event loop, built
    from the arguments above); whatever runs them, their results come back here, one at a time.

    Each eval set's document goes to `documents` (default: `Collected`, in memory, returned
    whole) in eval-set, case and run order, as soon as the cases before it are told: a case
    waits only for its own runs and those before it, and its runs are dropped here once told, so
    memory holds only what finished out of order (with a streaming sink such as `Written`, it
    stays flat however many cases run). Once every case is told and `end` has run (the header's
    totals, say), each document is completed; the documents returned are those `Collected`
    kept, or, with `documents`, the completed documents without their case lists.

    With `until_decided`, rounds follow the first: each case its rule has not decided yet
    (`verdicts.sequential`) is run again, as many runs as could decide it, until every case is
    decided or has had the rule's `max_runs`; each document's metadata holds the decisions
    (`until_decided`). A case is told to its document once decided, so an undecided one holds
    back those after it until its next round."""
    if num_runs < 1:
        raise ValueError("num_runs must be at least 1")
    if parallelism < 1:
        raise ValueError("parallelism must be at least 1")
    cases = [_Case(ri, case, num_runs) for ri, req in enumerate(requests) for case in req.cases()]
    ends = list(itertools.accumulate(len(req.cases()) for req in requests))  # one past each set's last
    done = finished or {}
    if executor is None:
        executor = LocalExecutor(adapter, parallelism, app_name, simulator, judge, listener, traces,
                                 case_timeout)
    told = sink if sink is not None else Sinks([progress(listener)])
    shells = [new_document(req.eval_set.eval_set_id, app_name or adapter.name) for req in requests]
    collected: list[Collected] = []
    outs: list[Sink] = []
    units: list[Unit] = []  # position in the run's plan -> (case position, run)
    where: list[int] = []
    cursor = 0  # the first case not yet told to its document

    def unit(pos: int, run: int) -> Unit | None:
        """The unit of run `run` of case `pos` (None: a resumed run's result is known)."""
        c, req = cases[pos], requests[cases[pos].request]
        if (req.eval_set.eval_set_id, c.case.eval_id, run) in done:
            return None
        units.append(Unit(len(units), req.eval_set.eval_set_id, c.case, run, req.metrics, req.policy))
        where.append(pos)
        return units[-1]

    def out_for(ri: int) -> Sink:
        """The document sink of eval set `ri`, made (with those before it) when it starts."""
        while len(outs) <= ri:
            if documents is not None:
                outs.append(documents(shells[len(outs)]))
            else:
                collected.append(Collected())
                outs.append(collected[-1])
        return outs[ri]

    def decided(c: _Case) -> bool:
        return until_decided is None or until_decided.more_runs(c.verdicts) == 0

    def advance() -> None:
        """Tells the documents every case whose place has come, whose runs are all known and
        (with `until_decided`) decided."""
        nonlocal cursor
        while cursor < len(cases):
            c = cases[cursor]
            req = requests[c.request]
            set_id = req.eval_set.eval_set_id
            if not c.known(done, set_id):
                return
            if len(c.verdicts) < c.planned:
                c.verdicts = [(r.final_eval_status == EvalStatus.PASSED) for r in _runs(c, done, set_id)]
            if not decided(c):
                return
            out = out_for(c.request)
            runs = _runs(c, done, set_id)
            for result in runs:
                out.on_case_run(result, 0.0)
            summarise_runs(runs, Sinks([out, told]), req.gating, req.policy == "ignore")
            c.waiting.clear()
            cursor += 1

    def accept(u: Unit, result: EvalCaseResult, seconds: float) -> None:
        c = cases[where[u.index]]
        if where[u.index] < cursor or u.run_index in c.waiting:
            return  # a retried unit reported twice: the first result stands
        c.waiting[u.run_index] = result
        told.on_case_run(result, seconds)
        advance()

    try:
        todo = [u for pos in range(len(cases)) for run in range(num_runs) if (u := unit(pos, run))]
        advance()  # what a resumed run kept at the start goes first
        while True:
            if todo:
                await executor.execute(todo, accept)
            if until_decided is None:
                break
            # Rerun rounds: each case not yet decided gets the fewest runs that could decide it.
            todo, grew = [], False
            for pos in range(cursor, len(cases)):
                c = cases[pos]
                set_id = requests[c.request].eval_set.eval_set_id
                if c.known(done, set_id):
                    c.verdicts = [(r.final_eval_status == EvalStatus.PASSED) for r in _runs(c, done, set_id)]
                    more = until_decided.more_runs(c.verdicts)
                    todo += [u for run in range(c.planned, c.planned + more) if (u := unit(pos, run))]
                    c.planned += more
                    grew = grew or more > 0
            advance()
            if not grew:  # every case decided or out of runs (runs a resumed run kept count)
                break
    except BaseException:
        for out in outs:  # a document streamed to a file is left as it was
            out.on_abort()
        raise
    if cursor < len(cases):  # an executor must report every unit it was given
        raise RuntimeError(f"the executor did not report every run of {len(cases) - cursor} case(s)")
    if end is not None:
        end()
    out_documents = []
    for ri, (shell, req) in enumerate(zip(shells, requests, strict=True)):
        document = completed(shell, req.gating, header)
        if until_decided is not None:
            first = ends[ri - 1] if ri else 0
            decisions = until_decided.decisions([(c.case.eval_id, c.verdicts) for c in cases[first:ends[ri]]])
            document.metadata["until_decided"] = decisions.model_dump(mode="json")
        out_for(ri).on_document(document)
        told.on_document(document)
        out_documents.append(document)
    if documents is None:
        return [d for c in collected for d in c.documents]
    return out_documents


Known = Mapping[tuple[str, str, int], EvalCaseResult]


def _runs(c: _Case, done: Known, eval_set_id: str) -> list[EvalCaseResult]:
    """A case's runs in run order: its own, else the resumed run's."""
    return [c.waiting[r] if r in c.waiting else done[(eval_set_id, c.case.eval_id, r)]
            for r in range(c.planned)]
