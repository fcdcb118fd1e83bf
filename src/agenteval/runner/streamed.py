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

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agenteval.datasets.nesting import MAX_DEPTH
from agenteval.datasets.scan import DepthScan
from agenteval.datasets.split import ItemWalk
from agenteval.datasets.stream import CaseStream, read_head
from agenteval.errors import DataError, from_validation_error
from agenteval.runner.driver import Sink, Source, Written, new_document, rescore_source
from agenteval.runner.job import ScoreJob
from agenteval.runner.plan import RunPlan, prepare
from agenteval.runner.result_stream import (
    RunsApart,
    expected_ids,
    is_result_document,
    open_results,
    result_runs,
)
from agenteval.runner.scoring import CaseRun
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
    RunSpec,
)
from agenteval.schema.progress import Listener
from agenteval.store.kept import KeptCase
from agenteval.verdicts.outcome import CaseOutcome

# `recorded` (with `tracing.ingest`), `sharded` and `shard_worker` (with multiprocessing) are
# imported by the functions that re-score: `eval` imports this module for `StreamedRun` and
# `Kept` only (2% of its start-up's instructions, bench/README.md session 35).
if TYPE_CHECKING:
    from agenteval.runner.sharded import TableReady

_HEAD_KEYS = ("eval_set_id",)


@dataclass(eq=False, repr=False)  # compared by identity: two fewer methods compiled at import
class StreamedRun:
    """What stays of a streamed run: its header (with the totals) and, for the report, the
    first `keep` case runs, the first `keep` that did not pass and the first `keep` verdicts."""

    spec: RunSpec
    document: EvalSetResult  # the result document without its cases and summaries
    paths: list[Path] = field(default_factory=list)  # where it was written
    first: list[EvalCaseResult] = field(default_factory=list)
    summaries: list[CaseSummary] = field(default_factory=list)  # the first `keep` cases' verdicts
    not_passed: list[EvalCaseResult] = field(default_factory=list)
    processes: int = 1  # that scored it (`runner.sharded`)

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
    return _shell(path, read_head(path, "eval_cases", _HEAD_KEYS, what="eval case")), cases


def eval_set_shell(path: str | Path) -> EvalSet:
    """`open_eval_set`'s eval set without its cases, without the scan of the whole file's
    nesting (a sharded run's workers check its cases as they score them): only the bytes
    before the list of cases are checked and parsed. Where they cannot be found so (the list
    not within the first MiB, the id not before it) or are refused, the file is opened as
    `open_eval_set` opens it, which checks it in its order and raises its error."""
    with open(path, "rb") as f:
        walk = ItemWalk(f, "eval_cases")
        next(iter(walk), None)  # (the head is known once the list is found)
    scan = DepthScan()
    if walk.head is not None:
        scan.feed(walk.head + b"]}", MAX_DEPTH)
    if walk.head is None or scan.deepest > MAX_DEPTH or scan.surrogates:
        return open_eval_set(path)[0]
    head = read_head(path, "eval_cases", what="eval case")  # parses what was checked
    if "eval_set_id" not in head:
        return open_eval_set(path)[0]
    return _shell(path, head)


def _shell(path: str | Path, head: dict[str, Any]) -> EvalSet:
    if "eval_set_id" not in head:
        raise DataError(path, "eval_set_id", "field required")
    try:
        return EvalSet.model_validate({**head, "eval_cases": []})
    except ValidationError as e:
        raise from_validation_error(path, e) from None


def pair_streams(expected: CaseStream[EvalCase], actual: CaseStream[EvalCase],
                 eval_set_id: str) -> Iterator[CaseRun]:
    """Case runs in expected order, each expected case with the actual case of its eval id;
    the checks of `recorded.pair_runs` (no missing, extra or repeated ids, equal turn counts),
    with the same errors."""
    from agenteval.runner.recorded import paired_case

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


Targets = Callable[[EvalSetResult], Sequence[Path]]


async def rescore_files(job: ScoreJob, expected_path: str | Path, actual_path: str | Path,
                        services: Services, output: str | Path | Targets | None = None,
                        listener: Listener | None = None, keep: int = 50,
                        outputs: Sequence[Sink] = (), plan: RunPlan | None = None,
                        workers: int | None = None, table_ready: TableReady | None = None) -> StreamedRun:
    """Scores what the agent did, at `actual_path` (an eval set of actual conversations, or a
    result document whose recorded runs are re-scored), against the expected eval set at
    `expected_path`, streaming the result document to `output`: a path, or a function of the
    document (its id) giving the paths to write it to; none written when None. `outputs` hear
    the run case by case (`runner.driver.Sink`); `plan` is as `rescore`'s. A result document
    whose runs of one case are apart raises `RunsApart` (see `result_stream`), nothing written.
    `workers`: processes to score in (`runner.sharded`, where it applies; the same document);
    None: the plan's parallelism, at most one per CPU, for files of `SHARD_MIN_BYTES` or more.
    `table_ready` is told, while a sharded run scores, what the report's table of cases that
    did not pass shows, once it is final (`sharded.ReportCases.offer_table`)."""
    from agenteval.runner.sharded import forks_here, hold_fork_server, worker_count

    plan = plan if plan is not None else prepare(job, services)
    shardable = not is_result_document(actual_path) and not any(m.build().is_async for m in plan.metrics)
    if workers is None:
        workers = worker_count(plan.parallelism, expected_path, actual_path) if shardable else 1
    # The fork server imports the workers' modules while this process reads the files (where
    # the workers cannot be forked from this process itself).
    release = hold_fork_server() if workers > 1 and shardable and not forks_here() else None
    try:
        return await _rescore_files(job, plan, expected_path, actual_path, services, output,
                                    listener, keep, outputs, workers if shardable else 1, table_ready)
    finally:
        if release is not None:
            release()


async def _rescore_files(job: ScoreJob, plan: RunPlan, expected_path: str | Path,
                         actual_path: str | Path, services: Services,
                         output: str | Path | Targets | None, listener: Listener | None, keep: int,
                         outputs: Sequence[Sink], workers: int,
                         table_ready: TableReady | None = None) -> StreamedRun:
    from agenteval.runner.sharded import ShardsRefused

    metrics = list(plan.metrics)
    document: EvalSetResult | None = None
    if workers > 1 and not uses_args_match(metrics):
        # Sharded, the files are not scanned here: the workers check the nesting of the cases'
        # bytes as they score them (`sharded.frame_ok` the rest), which took the whole-file
        # scans (a third of a second at 10,000 cases) off the serial start of the run. Only
        # the heads are read first. Whatever is refused (a head included) is read below as a
        # stream, whose checks come in their order, with their errors.
        try:
            shell = eval_set_shell(expected_path)
            eval_set_shell(actual_path)
        except DataError:
            pass
        else:
            document = new_document(shell.eval_set_id)
            paths = _paths(output, document)
            try:
                return await _sharded(job, plan, services, shell, expected_path, actual_path,
                                      document, paths, keep, outputs, listener, workers, table_ready)
            except ShardsRefused:
                workers = 1  # read as a stream below: its errors are the ones to report
    shell, expected = open_eval_set(expected_path)
    source = file_source(shell.eval_set_id, expected, actual_path)
    if uses_args_match(metrics):  # the tools and arguments it names must be in expected calls
        args: dict[str, set[str]] = {}
        for _, case in expected:
            add_tool_args(case, args)
        check_args_table(metrics, args, job.config_source)
    if document is None:
        document = new_document(shell.eval_set_id)
        paths = _paths(output, document)
    kept = Kept(keep)
    if workers > 1:
        try:
            return await _sharded(job, plan, services, shell, expected_path, actual_path, document,
                                  paths, keep, outputs, listener, workers, table_ready)
        except ShardsRefused:
            pass  # read as a stream below: its errors are the ones to report
    written = Written(paths, document) if paths else None
    header = await rescore_source(job, plan, services, Selection(Path(expected_path), shell),
                                  source, document, [s for s in (written, kept) if s] + [*outputs],
                                  listener)
    return StreamedRun(header, kept.document or document, paths, kept.first, kept.summaries,
                       kept.not_passed)


def _paths(output: str | Path | Targets | None, document: EvalSetResult) -> list[Path]:
    return [Path(output)] if isinstance(output, (str, Path)) else \
        list(output(document)) if output is not None else []


async def _sharded(job: ScoreJob, plan: RunPlan, services: Services, shell: EvalSet,
                   expected_path: str | Path, actual_path: str | Path, document: EvalSetResult,
                   paths: list[Path], keep: int, outputs: Sequence[Sink],
                   listener: Listener | None, workers: int,
                   table_ready: TableReady | None = None) -> StreamedRun:
    # (both files' heads are read: the expected's is `shell`; their nesting is the workers' to check)
    from agenteval.runner.shard_worker import ShardSetup
    from agenteval.runner.sharded import ReportCases, rescore_sharded

    setup = ShardSetup(str(expected_path), str(actual_path), shell.eval_set_id, list(plan.metrics),
                       plan.not_evaluated, plan.repeat_gating)
    cases = ReportCases(keep, table_ready)
    header, final = await rescore_sharded(job, plan, services, Selection(Path(expected_path), shell),
                                          setup, document, paths, cases, outputs, listener, workers)
    return StreamedRun(header, final, paths, cases.first, cases.summaries, cases.not_passed, workers)


def file_source(eval_set_id: str, expected: CaseStream[EvalCase], actual_path: str | Path) -> Source:
    """The runs at `actual_path` (a result document's, or an eval set's of actual conversations)
    read a case at a time, each paired with its expected case."""
    if is_result_document(actual_path):
        results = open_results(actual_path)
        return Source(eval_set_id, lambda: result_runs(expected, results, eval_set_id),
                      cases=expected_ids(expected), actual_file=str(actual_path))
    _, actual = open_eval_set(actual_path)
    return Source(eval_set_id, lambda: pair_streams(expected, actual, eval_set_id),
                  actual_file=str(actual_path))


class Kept(Sink):
    """What a report shows of a streamed run: the first `keep` case runs, the first `keep` that
    did not pass and the first `keep` verdicts; the document without its lists."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.first: list[EvalCaseResult] = []
        self.summaries: list[CaseSummary] = []
        self.not_passed: list[EvalCaseResult] = []
        self.document: EvalSetResult | None = None

    def on_case_run(self, result: EvalCaseResult, seconds: float) -> None:
        if len(self.first) < self.keep:
            self.first.append(result)

    def on_case(self, outcome: CaseOutcome) -> None:
        if len(self.summaries) < self.keep:
            self.summaries.append(outcome.summary)
        if outcome.status != EvalStatus.PASSED:
            self.not_passed += outcome.runs[:self.keep - len(self.not_passed)]

    def on_kept_case(self, case: KeptCase, runs: bool) -> None:
        # Rebuilt only while a list still takes it: the first cases, or one that did not pass.
        if (runs and len(self.first) < self.keep) or len(self.summaries) < self.keep \
                or (case.status != EvalStatus.PASSED and len(self.not_passed) < self.keep):
            super().on_kept_case(case, runs)

    def on_kept_block(self, cases: Sequence[KeptCase], runs: bool) -> None:
        # Once the first cases are in, a block costs a look at each case's status (a call a
        # case was 2-3% of a resume's profile), and nothing once the lists are all full.
        keep = self.keep
        if (runs and len(self.first) < keep) or len(self.summaries) < keep:
            super().on_kept_block(cases, runs)
        elif len(self.not_passed) < keep:
            passed = EvalStatus.PASSED
            for case in cases:
                if case.status != passed:
                    self.on_kept_case(case, runs)

    def on_document(self, document: EvalSetResult) -> None:
        self.document = document


__all__ = ["Kept", "RunsApart", "StreamedRun", "eval_set_shell", "file_source", "open_eval_set",
           "pair_streams", "rescore_files"]
