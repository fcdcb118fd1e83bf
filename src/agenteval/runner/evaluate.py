"""Running an agent over eval sets: inference then scoring per case, cases and runs in parallel.

Each (case, run) pair is inferred and then scored as soon as its inference ends, by an executor
(`runner.executors`: this process's event loop under one concurrency limit, `parallelism`, or a
Ray cluster); model calls are further limited per model by the models layer. Results come back
in eval-set, case and run order, whatever order they finished in.
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import overload

from agenteval.agents.base import AgentAdapter
from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.criteria.spec import ConfiguredMetric
from agenteval.datasets.files import gc_paused
from agenteval.runner.driver import Collected, Sink, Sinks, completed, new_document, progress, summarise_runs
from agenteval.runner.durable import Finished
from agenteval.runner.executors.base import Executor, Unit
from agenteval.runner.executors.local import LocalExecutor
from agenteval.runner.inference import SimulatorFactory
from agenteval.runner.scoring import NotEvaluatedPolicy
from agenteval.runner.selection import StreamedCases
from agenteval.schema import EvalCase, EvalCaseResult, EvalSet, EvalSetResult, EvalStatus
from agenteval.schema.progress import Listener
from agenteval.schema.run import RunSpec
from agenteval.store.kept import KeptCase
from agenteval.store.kept_copy import drop as drop_copy
from agenteval.store.kept_copy import end as end_copy
from agenteval.store.kept_copy import staged_document
from agenteval.store.kept_copy import start as start_copy
from agenteval.verdicts.sequential import SequentialRule


@dataclass
class EvalSetRequest:
    """One eval set to run, optionally restricted to some case ids; with `streamed`, its cases
    are read from its file as they run (`eval_set` then holds none: see `Selection`)."""

    eval_set: EvalSet
    metrics: Sequence[ConfiguredMetric]
    case_ids: Sequence[str] | None = None
    policy: NotEvaluatedPolicy = "fail"
    gating: str = "mean"
    streamed: StreamedCases | None = None

    def cases(self) -> list[EvalCase]:
        """The selected cases; an unknown id is an error (ADK silently ignores it)."""
        every = list(self.streamed) if self.streamed is not None else self.eval_set.eval_cases
        if not self.case_ids:
            return list(every)
        known = {c.eval_id: c for c in every}
        missing = [i for i in self.case_ids if i not in known]
        if missing:
            raise KeyError(f"eval set {self.eval_set.eval_set_id!r} has no case "
                           f"{', '.join(map(repr, missing))}")
        return [known[i] for i in self.case_ids]

    def count(self) -> int:
        """How many cases are selected."""
        if self.case_ids:
            return len(self.case_ids)
        return self.streamed.count if self.streamed is not None else len(self.eval_set.eval_cases)

    def each_case(self, kept: Container[str] = frozenset()) -> Iterator[EvalCase | str]:
        """The selected cases one at a time (a streamed set read from its file as they are asked
        for, holding none of them, and a case in `kept` given as its eval_id, not validated: see
        `StreamedCases.cases`)."""
        if self.streamed is not None and not self.case_ids:
            return self.streamed.cases(kept)
        return iter(self.cases())


Documents = Callable[[EvalSetResult], Sink]
"""Where an eval set's document goes, given its shell (its id; no cases yet): a sink that hears
the set's case runs in case and run order (`on_case_run`), its cases (`on_case`) and its
completed document (`on_document`)."""


@dataclass(eq=False, repr=False)  # compared by identity: two fewer methods compiled at import
class _Case:
    """One case of the run: where it is, its runs planned, and those known but not yet told to
    its document (by run index); `case` None for a case whose runs were all kept (read as its
    eval_id only)."""

    request: int
    eval_id: str
    case: EvalCase | None
    planned: int
    waiting: dict[int, EvalCaseResult] = field(default_factory=dict)
    verdicts: list[bool] = field(default_factory=list)  # every run's, in run order (until_decided)

    def known(self, done: Mapping[tuple[str, str, int], EvalCaseResult], eval_set_id: str) -> bool:
        """Whether every planned run is known (its own or a resumed run's)."""
        for r in range(self.planned):  # (a loop, not `all` of a generator: asked of every kept case)
            if r not in self.waiting and (eval_set_id, self.eval_id, r) not in done:
                return False
        return True


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
    results take their places, read from `finished` only when their place comes (with
    `documents` and a resumed run's `Finished`, as digests, `Finished.kept`: a document sink
    writes them with `result_json`, which gives their journal rows, and reads no more of them
    than a digest holds). A case run that takes longer than `case_timeout` seconds is stopped
    and recorded with a timeout error. The case runs go to `executor` (default: a
    `LocalExecutor` over this process's event loop, built from the arguments above); whatever
    runs them, their results come back here, one at a time.

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
    counts = [req.count() for req in requests]
    ends = list(itertools.accumulate(counts))  # one past each set's last case
    done = finished or {}
    # A streamed document copies a kept case run's journal row as it is, so the rest of the run
    # (summaries, totals, the history's rows, the reports) gets the run's digest, read without
    # parsing the row (`Finished.kept`); a document kept in memory gets the whole result.
    kept = done.kept if documents is not None and isinstance(done, Finished) else done.__getitem__
    # A case whose runs were all kept, and whose verdict the journal holds, goes to the sinks as
    # that verdict and its rows (`Finished.kept_cases`): copied, counted, never summarised again;
    # consecutive ones are read, and told, by the block (`Sink.on_kept_block`).
    kept_cases = done.kept_cases if documents is not None and until_decided is None \
        and isinstance(done, Finished) else None
    # The local executor pulls units one at a time, so the cases are read as it asks for them
    # (memory holds the cases in flight); another executor is handed its units as a list.
    lazy = executor is None
    if executor is None:
        executor = LocalExecutor(adapter, parallelism, app_name, simulator, judge, listener, traces,
                                 case_timeout)
    told = sink if sink is not None else Sinks([progress(listener)])
    # The told cases' rows are staged in the history as the run goes, on a thread
    # (`store.kept_copy`): SQLite's work beside this thread's, not after the run, and left by a
    # kill for the resume, which takes the document id they were staged under.
    source = finished.source() if isinstance(finished, Finished) and documents is not None \
        and until_decided is None and len(requests) == 1 else None
    staged = staged_document(source[0].root, source[1], requests[0].eval_set.eval_set_id) \
        if source is not None and done else None
    shells = [new_document(req.eval_set.eval_set_id, app_name or adapter.name, staged) for req in requests]
    early = start_copy(source[0].root, source[0].path, source[1], requests[0].eval_set.eval_set_id,
                       shells[0].eval_set_result_id) if source is not None else None
    collected: list[Collected] = []
    outs: list[Sink] = []
    # By position: the cases read and not yet told to their documents; a case whose runs were all
    # kept (`whole` below) as its eval_id only, told by the block (`tell_kept`).
    cases: dict[int, _Case | str] = {}
    read = 0  # cases read so far
    cursor = 0  # the first case not yet told to its document
    where: dict[int, int] = {}  # unit (its place in the run's plan) -> case position, in flight
    planned = 0  # units made so far
    verdicts: list[list[tuple[str, list[bool]]]] = [[] for _ in requests]  # told cases' (until_decided)

    def case_at(pos: int) -> _Case:
        """The case at `pos`, one with runs to make (never given as its eval_id)."""
        c = cases[pos]
        assert isinstance(c, _Case)
        return c

    def unit(pos: int, run: int) -> Unit | None:
        """The unit of run `run` of case `pos` (None: a resumed run's result is known)."""
        nonlocal planned
        c = case_at(pos)
        req = requests[c.request]
        if (req.eval_set.eval_set_id, c.eval_id, run) in done:
            return None
        assert c.case is not None  # (a case given as its eval_id has every run in `done`)
        where[planned] = pos
        planned += 1
        return Unit(planned - 1, req.eval_set.eval_set_id, c.case, run, req.metrics, req.policy)

    def first_round() -> Iterator[Unit]:
        """Each case's units as its case is read; a case whose runs are all known (kept by a
        resumed run) is told as soon as its place comes."""
        nonlocal read
        for ri, req in enumerate(requests):
            # A case whose every run a resumed run kept is only told (and, read from its file,
            # not validated); with until_decided it may run again, so it is read whole.
            whole = _kept_cases(req.eval_set.eval_set_id, done, num_runs) if until_decided is None else ()
            for case in req.each_case(whole):
                pos = read
                read += 1
                if case.__class__ is str:  # (in `whole`: every run kept, none to make)
                    cases[pos] = case
                    if read - cursor >= _BLOCK:
                        advance()
                    continue
                assert not isinstance(case, str)  # (for the type checker: str was told above)
                cases[pos] = _Case(ri, case.eval_id, case, num_runs)
                made = [u for run in range(num_runs) if (u := unit(pos, run))]
                if not made:  # told with those after it, by the block (at most `_BLOCK` wait)
                    if read - cursor >= _BLOCK:
                        advance()
                    continue
                advance()  # the kept cases before it go first
                yield from made
        advance()

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
        (with `until_decided`) decided; a told case is dropped here."""
        nonlocal cursor
        while cursor < read:
            c = cases[cursor]
            if c.__class__ is str:  # every run kept
                ri = bisect.bisect_right(ends, cursor)
                if kept_cases is not None:
                    tell_kept(out_for(ri), requests[ri])
                    continue
                c = cases[cursor] = _Case(ri, c, None, num_runs)
            assert isinstance(c, _Case)
            req = requests[c.request]
            set_id = req.eval_set.eval_set_id
            if not c.known(done, set_id):
                return
            if until_decided is not None and len(c.verdicts) < c.planned:
                c.verdicts = [(r.final_eval_status == EvalStatus.PASSED) for r in _runs(c, kept, set_id)]
            if not decided(c):
                return
            out = out_for(c.request)
            if kept_cases is not None and not c.waiting:
                tell_kept(out, req)
                continue
            tell_runs(c, out, req)
            if until_decided is not None:
                verdicts[c.request].append((c.eval_id, c.verdicts))
            del cases[cursor]
            cursor += 1

    def tell_runs(c: _Case, out: Sink, req: EvalSetRequest) -> None:
        """Tells the documents and the sinks case `c`, its runs and its summary made of them."""
        runs = _runs(c, kept, req.eval_set.eval_set_id)
        for result in runs:
            out.on_case_run(result, 0.0)
        summarise_runs(runs, Sinks([out, told]), req.gating, req.policy == "ignore")

    def tell_kept(out: Sink, req: EvalSetRequest) -> None:
        """Tells the case at the cursor, whose runs were all kept, and the kept cases of its set
        that follow it (`_BLOCK` at most): each as the journal's verdict of it, consecutive ones
        in one block, or, without a usable verdict, as its runs."""
        nonlocal cursor
        assert kept_cases is not None
        first = cases[cursor]
        ri = bisect.bisect_right(ends, cursor)
        planned = first.planned if isinstance(first, _Case) else num_runs
        set_id = req.eval_set.eval_set_id
        end = cursor + 1
        last = min(read, cursor + _BLOCK, ends[ri])  # (the set's cases only)
        while end < last:
            c = cases[end]
            if c.__class__ is not str and (c.waiting or c.planned != planned  # type: ignore[union-attr]
                                           or not c.known(done, set_id)):  # type: ignore[union-attr]
                break
            end += 1
        ids = [c if c.__class__ is str else c.eval_id  # type: ignore[union-attr]
               for c in (cases[p] for p in range(cursor, end))]
        # The block's verdicts, rows and cases are made, told and dropped with the cyclic GC
        # paused: they hold no cycles, and its passes over them were a tenth of a kept case.
        with gc_paused():
            whole = kept_cases(set_id, ids, planned, req.gating)
            block: list[KeptCase] = []
            for pos, case in zip(range(cursor, end), whole, strict=True):
                if case is None:
                    if block:
                        out.on_kept_block(block, True)
                        told.on_kept_block(block, False)
                        block = []
                    c = cases[pos]
                    tell_runs(c if isinstance(c, _Case) else _Case(ri, c, None, planned), out, req)
                else:
                    block.append(case)
                del cases[pos]
            if block:
                out.on_kept_block(block, True)
                told.on_kept_block(block, False)
            del block, whole
        cursor = end

    def accept(u: Unit, result: EvalCaseResult, seconds: float) -> None:
        pos = where.pop(u.index, None)
        if pos is None:
            return  # a retried unit reported twice: the first result stands
        case_at(pos).waiting[u.run_index] = result
        told.on_case_run(result, seconds)
        advance()

    try:
        count = _to_run(requests, counts, num_runs, done) if lazy else 0
        if count:
            todo: Sequence[Unit] = _Units(first_round(), count)
        else:  # (nothing to run: the cases are read here, each kept one told in its place)
            todo = list(first_round())
        advance()  # what a resumed run kept at the start goes first
        while True:
            if todo:
                await executor.execute(todo, accept)
            if until_decided is None:
                break
            # Rerun rounds: each case not yet decided gets the fewest runs that could decide it.
            todo, grew = [], False
            for pos in range(cursor, read):
                c = case_at(pos)
                set_id = requests[c.request].eval_set.eval_set_id
                if c.known(done, set_id):
                    c.verdicts = [(r.final_eval_status == EvalStatus.PASSED) for r in _runs(c, kept, set_id)]
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
        if early is not None:
            drop_copy(early)
        raise
    total = ends[-1] if ends else 0
    if cursor < total:  # an executor must report every unit it was given
        raise RuntimeError(f"the executor did not report every run of {total - cursor} case(s)")
    if end is not None:
        try:
            end()  # (commits the journal: a failure there leaves no document half written either)
        except BaseException:
            for out in outs:
                out.on_abort()
            if early is not None:
                drop_copy(early)
            raise
    if early is not None:  # (its last stage beside the documents' completion; the recording, if
        end_copy(early)    # any, adds the rest, and a run never recorded leaves no thread behind)
    out_documents = []
    for ri, (shell, req) in enumerate(zip(shells, requests, strict=True)):
        document = completed(shell, req.gating, header)
        if until_decided is not None:
            decisions = until_decided.decisions(verdicts[ri])
            document.metadata["until_decided"] = decisions.model_dump(mode="json")
        out_for(ri).on_document(document)
        told.on_document(document)
        out_documents.append(document)
    if documents is None:
        return [d for c in collected for d in c.documents]
    return out_documents


_BLOCK = 256
"""Consecutive kept cases read from the journal and told to the sinks at once, at most (each
case's rows are held until told: a few megabytes)."""


class _Units(Sequence[Unit]):
    """The first round's units, made as an executor iterates them (once): `len` is known
    beforehand, the units are not. Indexing walks them (no executor indexes)."""

    def __init__(self, units: Iterator[Unit], count: int) -> None:
        self._units, self._count, self._used = units, count, False

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Unit]:
        if self._used:
            raise RuntimeError("the units of a run's first round are read once")
        self._used = True
        return self._units

    @overload
    def __getitem__(self, index: int) -> Unit: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Unit]: ...

    def __getitem__(self, index: int | slice) -> Unit | Sequence[Unit]:
        raise TypeError("the units of a run's first round are read in order, not by index")


def _to_run(requests: Sequence[EvalSetRequest], counts: Sequence[int], num_runs: int, done: Known) -> int:
    """How many units the first round runs: every selected case's runs but those `done`
    holds (counted by key: `done` may hold case runs the run does not select)."""
    total = sum(counts) * num_runs
    if not done:
        return total
    # Every case of a streamed set trusted without its ids (`StreamedCases.trusted`) is selected:
    # the resumed run's cases of it are the set's (its content is the one journaled).
    every = {req.eval_set.eval_set_id for req in requests
             if not req.case_ids and req.streamed is not None and req.streamed.trusted}
    selected = {(req.eval_set.eval_set_id, eval_id) for req in requests
                for eval_id in (req.case_ids or (req.streamed.ids if req.streamed is not None
                                                  else [c.eval_id for c in req.eval_set.eval_cases]))}
    return total - sum(1 for (set_id, eval_id, run) in done
                       if run < num_runs and (set_id in every or (set_id, eval_id) in selected))


def _kept_cases(eval_set_id: str, done: Known, num_runs: int) -> set[str]:
    """The eval ids of the set's cases whose runs (all `num_runs`) are in `done`."""
    if not done:
        return set()
    runs = Counter(eval_id for (set_id, eval_id, run) in done if set_id == eval_set_id and run < num_runs)
    return {eval_id for eval_id, n in runs.items() if n == num_runs}


Known = Mapping[tuple[str, str, int], EvalCaseResult]


def _runs(c: _Case, kept: Callable[[tuple[str, str, int]], EvalCaseResult],
          eval_set_id: str) -> list[EvalCaseResult]:
    """A case's runs in run order: its own, else the resumed run's (`kept`)."""
    return [c.waiting[r] if r in c.waiting else kept((eval_set_id, c.eval_id, r))
            for r in range(c.planned)]
