"""One case-by-case driver under every run, and the sinks its outputs plug into.

A run's case runs come from a source: for `eval`, an executor inferring and scoring each (case,
run) (`runner.evaluate`); for re-scoring, the recorded runs of an eval set of actual
conversations or of a result document, loaded (`runner.recorded`) or read from files a case at
a time (`runner.streamed`). Whatever the source, each scored case run goes to the sinks as it
is known (`Sink.on_case_run`), runs are grouped by case, each case is summarised over its runs
(`verdicts.aggregate.summarise_case`) and goes to the sinks in source order (`Sink.on_case`),
and each eval set's document and the run's end follow. A sink keeps what it needs: the document
in memory (`Collected`) or on disk (`Written`), the totals (`Totals`), the journal
(`Journaled`), progress (`Progress`), the reports the CLI writes.

Memory: `drive` scores in source order with at most `parallelism` runs in flight and a bounded
number waiting (`ordered_map`), and holds the runs of the case being scored (all of them when
a source's runs of a case are not together); what else stays is the sinks' choice.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import anyio

from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.criteria.spec import ConfiguredMetric
from agenteval.runner.header import TotalsCounter, end_header, start_header
from agenteval.runner.job import ScoreJob, judge_models
from agenteval.runner.judges import canonical, judge_service
from agenteval.runner.plan import RunPlan
from agenteval.runner.scoring import CaseRun, NotEvaluatedPolicy, score_case
from agenteval.runner.selection import Selection
from agenteval.runner.services import Services
from agenteval.schema import CaseSummary, EvalCaseResult, EvalSetResult, ModelRoles, RunSpec
from agenteval.schema.progress import CaseFinished, CaseStarted, Listener, RunFinished, RunStarted
from agenteval.store.journal import Journal
from agenteval.store.journal_rows import RowsReader
from agenteval.store.kept import KeptCase
from agenteval.store.output import DocumentWriter
from agenteval.verdicts.aggregate import summarise_case
from agenteval.verdicts.outcome import CaseOutcome

T = TypeVar("T")
R = TypeVar("R")


class Sink:
    """What an output hears of a run, in this order: `on_start`; each case run as it is scored
    (`on_case_run`) and each case once its runs are all scored (`on_case`, source order, its
    runs in run order); each eval set's document (`on_document`); `on_end`. A run that fails
    calls `on_abort` instead of what is left. Each method does nothing here: a sink overrides
    what it needs."""

    def on_start(self, header: RunSpec, total: int) -> None:
        """The run starts: `total` case runs to score (0: not known yet)."""

    def on_case_run(self, result: EvalCaseResult, seconds: float) -> None:
        """A case run is scored (`seconds` after it started)."""

    def on_case(self, outcome: CaseOutcome) -> None:
        """A case's runs are all scored: its verdict over them, and the runs."""

    def on_kept_case(self, case: KeptCase, runs: bool) -> None:
        """A case whose runs a resumed run all kept, in its place among the cases, given as the
        journal's verdict of it (`store.kept.KeptCase`). Heard here as `on_case` of the case
        rebuilt (`KeptCase.outcome`), after each of its runs as `on_case_run` with `runs` (a
        document's sinks hear kept runs, the run's do not); a sink that can do with the rows
        and the record overrides this, so that the case is never rebuilt."""
        hears_runs = runs and _overrides(self, "on_case_run")
        hears_case = _overrides(self, "on_case")
        if hears_runs or hears_case:
            outcome = case.outcome()
            if hears_runs:
                for result in outcome.runs:
                    self.on_case_run(result, 0.0)
            if hears_case:
                self.on_case(outcome)

    def on_kept_block(self, cases: Sequence[KeptCase], runs: bool) -> None:
        """Consecutive kept cases, in their order: `on_kept_case` of each here (nothing when the
        sink hears neither kept cases nor cases); a sink that can take them together overrides
        this (a resumed run's 10,000 kept cases were 10,000 calls through every sink)."""
        if not (_overrides(self, "on_kept_case") or _overrides(self, "on_case")
                or (runs and _overrides(self, "on_case_run"))):
            return
        for case in cases:
            self.on_kept_case(case, runs)

    def on_document(self, document: EvalSetResult) -> None:
        """An eval set is done: its document, header (`run`) complete; a streamed one holds no
        case results or summaries (a sink that wants them kept them as they came)."""

    def on_end(self, header: RunSpec) -> None:
        """The run is done; `header` holds its totals."""

    def on_abort(self) -> None:
        """The run failed: nothing more comes."""


def _overrides(sink: Sink, method: str) -> bool:
    """Whether `sink`'s class overrides `Sink`'s own `method`."""
    return getattr(getattr(sink, method), "__func__", None) is not getattr(Sink, method)


class Sinks(Sink):
    """Every sink given (None left out), each told everything in turn."""

    def __init__(self, sinks: Iterable[Sink | None]) -> None:
        self.sinks = [s for s in sinks if s is not None]
        # Told once per case run and once per case: only the sinks that hear them (those whose
        # method is not `Sink`'s, which does nothing).
        self._case_run = [s.on_case_run for s in self.sinks if _overrides(s, "on_case_run")]
        self._case = [s.on_case for s in self.sinks if _overrides(s, "on_case")]

    def on_start(self, header: RunSpec, total: int) -> None:
        for s in self.sinks:
            s.on_start(header, total)

    def on_case_run(self, result: EvalCaseResult, seconds: float) -> None:
        for on_case_run in self._case_run:
            on_case_run(result, seconds)

    def on_case(self, outcome: CaseOutcome) -> None:
        for on_case in self._case:
            on_case(outcome)

    def on_kept_case(self, case: KeptCase, runs: bool) -> None:
        for s in self.sinks:
            s.on_kept_case(case, runs)

    def on_kept_block(self, cases: Sequence[KeptCase], runs: bool) -> None:
        for s in self.sinks:
            s.on_kept_block(cases, runs)

    def on_document(self, document: EvalSetResult) -> None:
        for s in self.sinks:
            s.on_document(document)

    def on_end(self, header: RunSpec) -> None:
        for s in self.sinks:
            s.on_end(header)

    def on_abort(self) -> None:
        for s in self.sinks:
            s.on_abort()


class Cases:
    """Scored case runs grouped by case, in the order they come: a case goes to `sink.on_case`
    when the next case's first run comes (`together`: each case's runs come one after another)
    or when the source ends (`close`; all cases then, in the order their first runs came)."""

    def __init__(self, sink: Sink, gating: str, ignore_not_evaluated: bool, together: bool = True) -> None:
        self._sink, self._gating, self._ignore, self._together = sink, gating, ignore_not_evaluated, together
        self._open: dict[str, list[EvalCaseResult]] = {}

    def add(self, result: EvalCaseResult) -> None:
        if self._together and self._open and result.eval_id not in self._open:
            self.close()
        self._open.setdefault(result.eval_id, []).append(result)

    def close(self) -> None:
        for eval_id, runs in self._open.items():
            summary = summarise_case(eval_id, runs, self._gating, self._ignore)
            self._sink.on_case(CaseOutcome(runs[0].eval_set_id, self._gating, summary,
                                           sorted(runs, key=lambda r: r.run_index)))
        self._open.clear()


def summarise_runs(results: Iterable[EvalCaseResult], sink: Sink, gating: str,
                   ignore_not_evaluated: bool) -> None:
    """Each case of `results` (grouped by eval id) to `sink.on_case`."""
    cases = Cases(sink, gating, ignore_not_evaluated, together=False)
    for result in results:
        cases.add(result)
    cases.close()


async def ordered_map(items: Iterator[T], fn: Callable[[T], Awaitable[R]], parallelism: int,
                      emit: Callable[[R], None]) -> None:
    """`emit(await fn(item))` for every item, in item order, with at most `parallelism` calls
    running and at most 4 × `parallelism` results waiting for an earlier one (memory stays
    bounded however many items there are). The first error (from `items`, `fn` or `emit`) stops
    the rest and is raised as it is, not wrapped in an exception group."""
    slots = anyio.Semaphore(4 * parallelism)
    limiter = anyio.CapacityLimiter(parallelism)
    done: dict[int, R] = {}
    next_index = 0
    failed: list[BaseException] = []

    async def one(index: int, item: T, scope: anyio.CancelScope) -> None:
        nonlocal next_index
        try:
            async with limiter:
                done[index] = await fn(item)
            while next_index in done:
                emit(done.pop(next_index))
                next_index += 1
                slots.release()
        except Exception as e:  # kept, and raised once the others are stopped
            failed.append(e)
            scope.cancel()

    async with anyio.create_task_group() as tg:
        try:
            for index, item in enumerate(items):
                await slots.acquire()
                tg.start_soon(one, index, item, tg.cancel_scope)
        except Exception as e:  # as above
            failed.append(e)
            tg.cancel_scope.cancel()
    if failed:
        raise failed[0]


@dataclass(frozen=True, eq=False, repr=False)  # compared by identity: two fewer methods compiled at import
class Scorer:
    """How each case run is scored: the run's criteria, not-evaluated policy and judge; the
    listener hears each case run start."""

    metrics: Sequence[ConfiguredMetric]
    policy: NotEvaluatedPolicy = "fail"
    judge: JudgeService | None = None
    listener: Listener | None = None

    def concurrent(self) -> bool:
        """Whether case runs are worth scoring concurrently (a criterion waits on a model)."""
        return any(m.build().is_async for m in self.metrics)

    async def __call__(self, run: CaseRun) -> tuple[EvalCaseResult, float]:
        started = time.monotonic()
        if self.listener is not None:
            self.listener(CaseStarted(run.eval_set_id, run.case.eval_id, run.run_index))
        result = await score_case(run, self.metrics, self.policy, self.judge)
        return result, time.monotonic() - started


async def drive(runs: Iterable[CaseRun], scorer: Scorer, sink: Sink, *, parallelism: int = 4,
                gating: str = "mean", together: bool = True) -> None:
    """Scores each case run of `runs` (concurrently, in order, when a criterion waits on a
    model; else one after another: no point paying for tasks) and tells `sink` of each case run
    and each case (`Cases`)."""
    cases = Cases(sink, gating, scorer.policy == "ignore", together)

    def emit(scored: tuple[EvalCaseResult, float]) -> None:
        result, seconds = scored
        sink.on_case_run(result, seconds)
        cases.add(result)

    if scorer.concurrent():
        await ordered_map(iter(runs), scorer, parallelism, emit)
    else:
        for run in runs:
            emit(await scorer(run))
    cases.close()


def result_id(eval_set_id: str, app_name: str | None = None) -> str:
    """A result id in ADK's `<app>_<eval_set_id>_<timestamp>` form."""
    prefix = f"{app_name}_" if app_name else ""
    return f"{prefix}{eval_set_id}_{time.time()}"


def new_document(eval_set_id: str, app_name: str | None = None, rid: str | None = None) -> EvalSetResult:
    """The document of an eval set about to be scored: its id (`rid`, else a new one), nothing
    else yet."""
    rid = rid or result_id(eval_set_id, app_name)
    return EvalSetResult(eval_set_result_id=rid, eval_set_result_name=rid.replace("/", "_"),
                         eval_set_id=eval_set_id)


def completed(document: EvalSetResult, gating: str, header: RunSpec | None) -> EvalSetResult:
    """`document` as its eval set ends: its time, gating rule and run header."""
    return document.model_copy(update={"creation_timestamp": time.time(), "gating": gating,
                                       "run": header})


class Collected(Sink):
    """The document in memory: every case run (in the order they were told) and summary."""

    def __init__(self, results: Sequence[EvalCaseResult] = ()) -> None:
        self.results: list[EvalCaseResult] = list(results)  # those told before, if any
        self.summaries: list[CaseSummary] = []
        self.documents: list[EvalSetResult] = []

    def on_case_run(self, result: EvalCaseResult, seconds: float) -> None:
        self.results.append(result)

    def on_case(self, outcome: CaseOutcome) -> None:
        self.summaries.append(outcome.summary)

    def on_document(self, document: EvalSetResult) -> None:
        self.documents.append(document.model_copy(update={"eval_case_results": self.results,
                                                          "summary": self.summaries}))
        self.results, self.summaries = [], []


class Written(Sink):
    """The document streamed to `paths` as cases are scored (`store.output.DocumentWriter`):
    put in place when the eval set ends, left as it was when the run fails."""

    def __init__(self, paths: Sequence[str | Path], document: EvalSetResult) -> None:
        self.writer = DocumentWriter(paths, document, background=True)
        self._readers: dict[Path, RowsReader] = {}  # the writer's thread's own, by rows file

    def on_case_run(self, result: EvalCaseResult, seconds: float) -> None:
        self.writer.add(result)

    def on_case(self, outcome: CaseOutcome) -> None:
        self.writer.add_summary(outcome.summary)

    def on_kept_case(self, case: KeptCase, runs: bool) -> None:
        if runs:
            for raw in case.rows:  # (placed: copied as they are)
                self.writer.add_placed(raw)
        self.writer.add_summary_placed(case.summary)

    def on_kept_block(self, cases: Sequence[KeptCase], runs: bool) -> None:
        later = cases[0].rows_from
        if later is not None and all(case.rows_from is later for case in cases):
            # Rows not read yet (`store.kept.KeptRows`, cases of one run): the writer's thread
            # reads them and writes them from where it read them (the reads, checks and copies
            # were a third of the run's thread's work on a resume of 10,000 cases).
            reader = self._readers.get(later.path)
            if reader is None:
                reader = self._readers[later.path] = RowsReader(later.path)
            if runs:
                rows = [later.runs[case.run_at] for case in cases]
                self.writer.add_read(functools.partial(reader.views, rows), len(rows),
                                     sum(f[1] for f in rows))
            summaries = [later.summaries[case.summary_at] for case in cases]
            self.writer.add_summaries_read(functools.partial(reader.views, summaries), len(summaries),
                                           sum(f[1] for f in summaries))
            return
        if runs:
            self.writer.add_placed_many([raw for case in cases for raw in case.rows])
        self.writer.add_summaries_placed([case.summary for case in cases])

    def on_document(self, document: EvalSetResult) -> None:
        try:
            self.writer.commit(document)
        finally:
            self._close()

    def on_abort(self) -> None:
        try:
            self.writer.abort()
        finally:
            self._close()

    def _close(self) -> None:
        """Closes the writer's rows files (its thread has ended: `commit` and `abort` wait)."""
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()


class Totals(Sink):
    """The run's totals, counted case by case."""

    def __init__(self) -> None:
        self.counter = TotalsCounter()

    def on_case(self, outcome: CaseOutcome) -> None:
        self.counter.add(outcome)

    def on_kept_case(self, case: KeptCase, runs: bool) -> None:
        self.counter.add_kept(case)

    def on_kept_block(self, cases: Sequence[KeptCase], runs: bool) -> None:
        add = self.counter.add_kept
        for case in cases:
            add(case)


class Progress(Sink):
    """Progress events for `listener`: the run's start and end, each case run's finish."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener

    def on_start(self, header: RunSpec, total: int) -> None:
        self.listener(RunStarted(header.run_id, total))

    def on_case_run(self, result: EvalCaseResult, seconds: float) -> None:
        self.listener(CaseFinished(result.eval_set_id, result.eval_id, result.run_index,
                                   result.final_eval_status, seconds, result.error_message))

    def on_end(self, header: RunSpec) -> None:
        t = header.totals
        self.listener(RunFinished(header.run_id, t.passed, t.failed, t.not_evaluated,
                                  header.duration_seconds or 0.0))


def progress(listener: Listener | None) -> Progress | None:
    return None if listener is None else Progress(listener)


class Journaled(Sink):
    """Each case run queued to the run journal as soon as it is scored (durable within the
    journal's flush window; `runner.run` flushes it before the documents are completed); a run
    that fails is released at once (interrupted: resumable, by this process or another)."""

    def __init__(self, journal: Journal, fingerprint: str, total: int) -> None:
        self.journal, self.fingerprint, self.total = journal, fingerprint, total
        self.run_id = ""
        self._told: dict[str, int] = {}  # cases told so far, by eval set: the next one's place

    def _place(self, eval_set_id: str) -> int:
        place = self._told.get(eval_set_id, 0)
        self._told[eval_set_id] = place + 1
        return place

    def on_start(self, header: RunSpec, total: int) -> None:
        self.run_id = header.run_id
        self.journal.begin(header, self.fingerprint, self.total)

    def on_case_run(self, result: EvalCaseResult, seconds: float) -> None:
        self.journal.append(self.run_id, result.eval_set_id, result)  # queued: durable within 0.5 s

    def on_case(self, outcome: CaseOutcome) -> None:
        # What a resume reads of a kept case, and the history of every case.
        self.journal.append_verdict(self.run_id, outcome, self._place(outcome.eval_set_id))

    def on_kept_case(self, case: KeptCase, runs: bool) -> None:
        self._place(case.eval_set_id)  # its verdict is journaled already, at this place

    def on_kept_block(self, cases: Sequence[KeptCase], runs: bool) -> None:
        for case in cases:
            self._place(case.eval_set_id)

    def on_abort(self) -> None:
        if self.run_id:
            self.journal.release(self.run_id)


def end_run(header: RunSpec, totals: Totals, judge: JudgeService, services: Services) -> RunSpec:
    """The header completed in place: end time, totals, the limits the endpoints had."""
    return end_header(header, totals.counter.totals(judge.calls, judge.prompt_tokens),
                      services.models.limits())


@dataclass(eq=False, repr=False)  # compared by identity: two fewer methods compiled at import
class Source:
    """The recorded case runs of one eval set, to score again."""

    eval_set_id: str
    read: Callable[[], Iterator[CaseRun]]  # from the start, each call
    total: int = 0  # case runs, when known without reading them (0: not known)
    cases: int | None = None  # cases of the expected set, when known (None: those scored)
    together: bool = True  # each case's runs come one after another
    actual_file: str | None = None  # where the runs were read from


async def rescore_source(job: ScoreJob, plan: RunPlan, services: Services,
                         selection: Selection, source: Source, document: EvalSetResult,
                         outputs: Sequence[Sink], listener: Listener | None = None) -> RunSpec:
    """Scores the recorded runs of `source` against the expected set of `selection` into
    `document` (from `new_document`), told to `outputs`, as `plan` says; returns the completed
    run header.
    When a criterion waits on a model (a judge), every run is read, and so checked, before the
    first judge call."""
    judge = judge_service(services, listener)
    metrics = plan.metrics
    scorer = Scorer(metrics, plan.not_evaluated, judge, listener)
    totals = Totals()
    sink = Sinks([progress(listener), totals, *outputs])
    gating = plan.repeat_gating
    try:
        total = source.total
        if scorer.concurrent() and not total:
            total = sum(1 for _ in source.read())
        roles = ModelRoles(judge=[canonical(n) for n in judge_models(metrics)])
        header = start_header(job, [selection], roles, endpoints=plan.endpoint_settings())
        header.actual_file = source.actual_file
        sink.on_start(header, total)
        await drive(source.read(), scorer, sink, parallelism=plan.parallelism, gating=gating,
                    together=source.together)
        header.eval_sets[0].cases = source.cases if source.cases is not None else totals.counter.cases
        header.num_runs = max(totals.counter.max_runs, 1)
        end_run(header, totals, judge, services)
        sink.on_document(completed(document, gating, header))
    except BaseException:
        sink.on_abort()
        raise
    sink.on_end(header)
    return header


__all__ = ["Cases", "Collected", "Journaled", "Progress", "Scorer", "Sink", "Sinks", "Source",
           "Totals", "Written", "completed", "drive", "end_run", "new_document", "ordered_map",
           "progress", "rescore_source", "result_id", "summarise_runs"]
