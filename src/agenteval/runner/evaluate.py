"""Running an agent over eval sets: inference then scoring per case, cases and runs in parallel.

Each (case, run) pair is inferred and then scored as soon as its inference ends, by an executor
(`runner.executors`: this process's event loop under one concurrency limit, `parallelism`, or a
Ray cluster); model calls are further limited per model by the models layer. Results come back
in eval-set, case and run order, whatever order they finished in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

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


def _runs_by_case(plan: Sequence[tuple[int, int, EvalCase, int]],
                  slots: Sequence[EvalCaseResult | None]) -> dict[tuple[int, int], list[int]]:
    """(request, case position) -> the plan indices of its finished runs, in run order."""
    out: dict[tuple[int, int], list[int]] = {}
    for i in sorted(range(len(plan)), key=lambda i: plan[i][3]):
        if slots[i] is not None:
            out.setdefault((plan[i][0], plan[i][1]), []).append(i)
    return out


def _verdicts(slots: Sequence[EvalCaseResult | None], runs: Sequence[int]) -> list[bool]:
    return [(r := slots[i]) is not None and r.final_eval_status == EvalStatus.PASSED for i in runs]


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
) -> list[EvalSetResult]:
    """Runs every selected case `num_runs` times; one EvalSetResult per eval set (carrying
    `header` as its `run`). `sink` (default: progress events for `listener`) hears each case run
    as soon as it is known (`Sink.on_case_run`: the journal commits it then) and, once every
    run is done, each case over its runs (`Sink.on_case`); `listener` hears the executor's
    progress (case runs starting, turns). With `traces`, each case run's spans (agent steps,
    model and tool calls, simulated user turns, judge calls) are recorded into its result's
    `trace`. Case runs in `finished` (by eval set id, eval id, run index: a resumed run's) are
    not run again; their results take their places. A case run that takes longer than
    `case_timeout` seconds is stopped and recorded with a timeout error. The case runs go to
    `executor` (default: a `LocalExecutor` over this process's event loop, built from the
    arguments above); whatever runs them, their results come back here, one at a time.

    With `until_decided`, rounds follow the first: each case its rule has not decided yet
    (`verdicts.sequential`) is run again, as many runs as could decide it, until every case is
    decided or has had the rule's `max_runs`; each document's metadata holds the decisions
    (`until_decided`)."""
    if num_runs < 1:
        raise ValueError("num_runs must be at least 1")
    if parallelism < 1:
        raise ValueError("parallelism must be at least 1")
    # (request, case position, case, run index), one per unit; reruns are appended.
    plan = [(ri, pos, case, run) for ri, req in enumerate(requests) for pos, case in enumerate(req.cases())
            for run in range(num_runs)]
    units = [Unit(i, requests[ri].eval_set.eval_set_id, case, run, requests[ri].metrics,
                  requests[ri].policy) for i, (ri, _, case, run) in enumerate(plan)]
    done = finished or {}
    slots: list[EvalCaseResult | None] = [done.get((u.eval_set_id, u.case.eval_id, u.run_index))
                                          for u in units]
    if executor is None:
        executor = LocalExecutor(adapter, parallelism, app_name, simulator, judge, listener, traces,
                                 case_timeout)

    told = sink if sink is not None else Sinks([progress(listener)])

    def accept(unit: Unit, result: EvalCaseResult, seconds: float) -> None:
        if slots[unit.index] is not None:  # a retried unit reported twice: the first result stands
            return
        slots[unit.index] = result
        told.on_case_run(result, seconds)

    todo = [u for u in units if slots[u.index] is None]
    while True:
        if todo:
            await executor.execute(todo, accept)
        if until_decided is None:
            break
        todo, planned = [], len(plan)
        # Rerun rounds: each case not yet decided gets the fewest runs that could decide it.
        for (ri, pos), runs in _runs_by_case(plan, slots).items():
            req = requests[ri]
            case = plan[runs[0]][2]
            for run in range(len(runs), len(runs) + until_decided.more_runs(_verdicts(slots, runs))):
                unit = Unit(len(units), req.eval_set.eval_set_id, case, run, req.metrics, req.policy)
                plan.append((ri, pos, case, run))
                units.append(unit)
                slots.append(done.get((unit.eval_set_id, case.eval_id, run)))
                if slots[-1] is None:
                    todo.append(unit)
        if len(plan) == planned:  # every case decided or out of runs
            break

    out = []
    order = sorted(range(len(plan)), key=lambda i: (plan[i][0], plan[i][1], plan[i][3]))
    for ri, req in enumerate(requests):
        cases = [r for i in order if plan[i][0] == ri and (r := slots[i]) is not None]
        collected = Collected(cases)  # told as they finished: now each case over its runs
        summarise_runs(cases, Sinks([collected, told]), req.gating, req.policy == "ignore")
        collected.on_document(completed(new_document(req.eval_set.eval_set_id, app_name or adapter.name),
                                        req.gating, header))
        if until_decided is not None:
            decided = until_decided.decisions(
                [(plan[runs[0]][2].eval_id, _verdicts(slots, runs))
                 for (o, _), runs in _runs_by_case(plan, slots).items() if o == ri])
            collected.documents[-1].metadata["until_decided"] = decided.model_dump(mode="json")
        out.extend(collected.documents)
    return out
