"""Scoring a recorded run in bounded memory: the expected and actual eval sets are read a case
at a time, each case is scored and written to the result document as it finishes, and only
counts (and the few cases a report shows) stay in memory.

`rescore_files` is `rescore` for an expected eval set and an eval set of actual conversations
given as files, written to `output`: the document has the bytes `rescore` + `write_outputs`
would write (but for its ids and times). Cases are paired by eval id in the expected set's
order; an actual set in another order is read ahead as far as it needs (memory then grows with
how far out of order it is). Bad input is a DataError naming the file and the case: when a
judge is configured, every case is read and paired before the first is scored, so that no
judge call is spent on a run that would then be refused; deterministic criteria cost nothing
to redo, so the two files are then read once, and a refusal part-way leaves nothing written.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import anyio

from agenteval.datasets.nesting import MAX_DEPTH
from agenteval.datasets.stream import CaseStream, read_head
from agenteval.errors import DataError
from agenteval.runner.header import TotalsCounter, end_header, start_header
from agenteval.runner.job import ScoreJob, judge_models
from agenteval.runner.recorded import paired_case, result_id
from agenteval.runner.result_stream import (
    RunsApart,
    expected_ids,
    is_result_document,
    open_results,
    result_runs,
)
from agenteval.runner.run import _canonical, _judge, check_judges
from agenteval.runner.scoring import CaseRun, score_case
from agenteval.runner.selection import (
    Selection,
    add_tool_args,
    check_args_table,
    uses_args_match,
)
from agenteval.runner.services import Services
from agenteval.schema import (
    CaseSummary,
    EvalCase,
    EvalCaseResult,
    EvalSet,
    EvalSetResult,
    EvalStatus,
    ModelRoles,
    RunSpec,
)
from agenteval.schema.progress import CaseFinished, CaseStarted, Listener, RunFinished, RunStarted
from agenteval.store.output import DocumentWriter
from agenteval.verdicts.aggregate import summarise_case
from agenteval.verdicts.outcome import CaseOutcome

T = TypeVar("T")
R = TypeVar("R")

_HEAD_KEYS = ("eval_set_id",)


@dataclass
class StreamedRun:
    """What stays of a streamed run: its header (with the totals) and, for the report, the
    first `keep` case runs, the first `keep` that did not pass and the first `keep` verdicts."""

    spec: RunSpec
    document: EvalSetResult  # the result document without its cases and summaries
    paths: list[Path] = field(default_factory=list)  # where it was written
    first: list[EvalCaseResult] = field(default_factory=list)
    summaries: list[CaseSummary] = field(default_factory=list)  # the first `keep` cases' verdicts
    not_passed: list[EvalCaseResult] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return self.spec.run_id

    @property
    def eval_set_id(self) -> str:
        return self.document.eval_set_id


def open_eval_set(path: str | Path) -> tuple[EvalSet, CaseStream[EvalCase]]:
    """An eval set file's fields but its cases (validated; `eval_cases` empty) and a stream of
    its cases. A DataError when it is not a current-format eval set (legacy files are loaded
    whole: see `datasets.load_eval_set`)."""
    cases = CaseStream(path, "eval_cases", EvalCase, MAX_DEPTH)  # scans the nesting first
    head = read_head(path, "eval_cases", _HEAD_KEYS, what="eval case")
    if "eval_set_id" not in head:
        raise DataError(path, "eval_set_id", "field required")
    try:
        shell = EvalSet.model_validate({**head, "eval_cases": []})
    except ValueError as e:
        raise DataError(path, "", str(e)) from None
    return shell, cases


def pair_streams(expected: CaseStream[EvalCase], actual: CaseStream[EvalCase],
                 eval_set_id: str) -> Iterator[CaseRun]:
    """Case runs in expected order, each expected case with the actual case of its eval id;
    the checks of `recorded.pair_runs` (no missing, extra or repeated ids, equal turn counts),
    with the same errors."""
    src = actual.path
    ahead: dict[str, tuple[int, EvalCase]] = {}  # actual cases read before their turn
    seen_actual: dict[str, int] = {}
    seen_expected: dict[str, int] = {}
    expected_iter, actual_iter = iter(expected), iter(actual)

    def read_actual() -> bool:
        nxt = next(actual_iter, None)
        if nxt is None:
            return False
        i, got = nxt
        if (k := seen_actual.setdefault(got.eval_id, i)) != i:
            raise DataError(src, f"eval_cases[{i}].eval_id",
                            f"duplicate eval_id {got.eval_id!r} (also eval_cases[{k}])")
        ahead[got.eval_id] = nxt
        return True

    for j, case in expected_iter:
        if (k := seen_expected.setdefault(case.eval_id, j)) != j:
            raise DataError(expected.path, f"eval_cases[{j}].eval_id",
                            f"duplicate eval_id {case.eval_id!r} (also eval_cases[{k}])")
        while case.eval_id not in ahead:
            if not read_actual():
                # An actual case no expected one has is named first, as `pair_runs` does.
                rest = {c.eval_id for _, c in expected_iter} | {case.eval_id}
                _refuse_extra(src, ahead, rest.__contains__)
                raise DataError(src, "eval_cases",
                                f"no case with eval_id {case.eval_id!r} (the expected set has it)")
        i, got = ahead.pop(case.eval_id)
        yield paired_case(case, got, i, eval_set_id, src)
    while read_actual():
        pass
    _refuse_extra(src, ahead, lambda eval_id: False)


def _refuse_extra(src: str | Path, ahead: dict[str, tuple[int, EvalCase]],
                  expected: Callable[[str], bool]) -> None:
    extra = sorted(i for i, got in ahead.values() if not expected(got.eval_id))
    if extra:
        i = extra[0]
        eval_id = next(got.eval_id for k, got in ahead.values() if k == i)
        raise DataError(src, f"eval_cases[{i}].eval_id", f"{eval_id!r} is not in the expected eval set")


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


Targets = Callable[[EvalSetResult], Sequence[Path]]


async def rescore_files(job: ScoreJob, expected_path: str | Path, actual_path: str | Path,
                        services: Services, output: str | Path | Targets | None = None,
                        listener: Listener | None = None, keep: int = 50,
                        on_case: Callable[[CaseOutcome], None] | None = None) -> StreamedRun:
    """Scores what the agent did, at `actual_path` (an eval set of actual conversations, or a
    result document whose recorded runs are re-scored), against the expected eval set at
    `expected_path`, streaming the result document to `output`: a path, or a function of the
    document (its id) giving the paths to write it to; none written when None. `on_case` gets
    each case's outcome (its verdict and runs) once its last run is scored. A result
    document whose runs of one case are apart raises `RunsApart` (see `result_stream`),
    nothing written."""
    metrics = job.metrics()
    check_judges(metrics, job, services)
    shell, expected = open_eval_set(expected_path)
    if is_result_document(actual_path):
        results = open_results(actual_path)
        cases = expected_ids(expected)

        def case_runs() -> Iterator[CaseRun]:
            return result_runs(expected, results, shell.eval_set_id)
    else:
        _, actual = open_eval_set(actual_path)
        cases = 0

        def case_runs() -> Iterator[CaseRun]:
            return pair_streams(expected, actual, shell.eval_set_id)
    if uses_args_match(metrics):  # the tools and arguments it names must be in expected calls
        args: dict[str, set[str]] = {}
        for _, case in expected:
            add_tool_args(case, args)
        check_args_table(metrics, args, job.config_source)
    judged = any(m.build().is_async for m in metrics)
    total = 0
    if judged:  # everything is read and checked before the first judge call
        total = sum(1 for _ in case_runs())
    judge = _judge(services, listener)
    roles = ModelRoles(judge=[_canonical(n) for n in judge_models(metrics)])
    header = start_header(job, [Selection(Path(expected_path), shell)], roles,
                          endpoints=job.endpoint_settings(metrics))
    header.actual_file = str(actual_path)
    rid = result_id(shell.eval_set_id)
    document = EvalSetResult(eval_set_result_id=rid, eval_set_result_name=rid.replace("/", "_"),
                             eval_set_id=shell.eval_set_id)
    paths = [Path(output)] if isinstance(output, (str, Path)) else \
        list(output(document)) if output is not None else []
    writer = DocumentWriter(paths, document) if paths else None
    if listener is not None:
        listener(RunStarted(header.run_id, total))  # 0: not known yet
    policy, gating = job.config.not_evaluated, job.config.repeat_gating
    counter = TotalsCounter()
    out = StreamedRun(header, document, paths)
    group: list[EvalCaseResult] = []  # the runs of the case being scored

    async def score(run: CaseRun) -> tuple[EvalCaseResult, float]:
        started = time.monotonic()
        if listener is not None:
            listener(CaseStarted(run.eval_set_id, run.case.eval_id, run.run_index))
        return await score_case(run, metrics, policy, judge), started

    def close_case() -> None:
        """Summarises the case whose runs are all scored."""
        summary = summarise_case(group[0].eval_id, group, gating, policy == "ignore")
        outcome = CaseOutcome(group[0].eval_set_id, gating, summary, list(group))
        counter.add(outcome)
        if on_case is not None:
            on_case(outcome)
        if writer is not None:
            writer.add_summary(summary)
        if len(out.summaries) < keep:
            out.summaries.append(summary)
        if summary.final_eval_status != EvalStatus.PASSED:
            out.not_passed += group[:keep - len(out.not_passed)]
        group.clear()

    def emit(scored: tuple[EvalCaseResult, float]) -> None:
        result, started = scored
        if group and group[0].eval_id != result.eval_id:
            close_case()
        group.append(result)
        if writer is not None:
            writer.add(result)
        if len(out.first) < keep:
            out.first.append(result)
        if listener is not None:
            listener(CaseFinished(result.eval_set_id, result.eval_id, result.run_index,
                                  result.final_eval_status, time.monotonic() - started,
                                  result.error_message))

    try:
        if judged:
            await ordered_map(case_runs(), score, job.concurrency.cases, emit)
        else:  # deterministic criteria only: no point paying for tasks
            for run in case_runs():
                emit(await score(run))
        if group:
            close_case()
        header.eval_sets[0].cases = cases or counter.cases
        header.num_runs = max(counter.max_runs, 1)
        end_header(header, counter.totals(judge.calls, judge.prompt_tokens), services.models.limits())
        out.document = document.model_copy(update={"creation_timestamp": time.time(),
                                                   "gating": gating, "run": header})
        if writer is not None:
            writer.commit(out.document)
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    if listener is not None:
        t = header.totals
        listener(RunFinished(header.run_id, t.passed, t.failed, t.not_evaluated,
                             header.duration_seconds or 0.0))
    return out


__all__ = ["RunsApart", "StreamedRun", "open_eval_set", "ordered_map", "pair_streams", "rescore_files"]
