"""`score` sharded over worker processes: where one core is not enough for a large recorded run,
chunks of cases are parsed, scored and serialised in worker processes
(`runner.shard_worker`), and this process writes what they send back in case order, so the
result document has the bytes one process writes (but for its ids and times).

When: every criterion is deterministic (a judge's calls are bounded by the run's endpoint
limits in this process), the actual file is an eval set listing its cases in the expected
set's order, both files are indented JSON (`datasets.split`) and together at least
`SHARD_MIN_BYTES`, and nothing listening to the run needs every case result but the document,
the totals, the progress and the report's first cases. Processes: `--parallelism`, at most one
per CPU this process may use (`worker_count`). Anything else, or anything a worker cannot
take (bad input included), and the run is read as a stream in one process instead, from the
start, with nothing written in between: its errors name the file and the field as always.
"""

from __future__ import annotations

import codecs
import dataclasses
import hashlib
import io
import mmap
import multiprocessing
import operator
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import reduce
from pathlib import Path
from typing import Protocol

import anyio

from agenteval.datasets.nesting import MAX_DEPTH
from agenteval.datasets.scan import CHUNK as SCAN_CHUNK
from agenteval.datasets.scan import DepthScan
from agenteval.datasets.split import ItemWalk, Span
from agenteval.runner.driver import Sink, Sinks, Totals, completed, end_run, progress
from agenteval.runner.header import TotalsCounter, start_header
from agenteval.runner.job import ScoreJob, judge_models
from agenteval.runner.judges import canonical, judge_service
from agenteval.runner.plan import RunPlan
from agenteval.runner.selection import Selection
from agenteval.runner.services import Services
from agenteval.runner.shard_worker import Batch, Refusal, ShardSetup, batch, score_chunk, start
from agenteval.schema import CaseSummary, EvalCaseResult, EvalSetResult, EvalStatus, ModelRoles, RunSpec
from agenteval.schema.progress import CaseFinished, CaseStarted, Listener
from agenteval.store.output import LISTED, DocumentWriter

SHARD_MIN_BYTES = 8 << 20
"""Both files together at least this large before workers are started (each costs about a
third of a second to start: below this, one process is done sooner)."""

CHUNK = 250  # cases per message to a worker: large enough that messages cost little
LAST_CHUNK = 25  # the smallest, at the end of a run (see `chunks`)


def chunks(cases: int, workers: int, size: int = CHUNK, least: int = LAST_CHUNK) -> list[range]:
    """The runs of cases sent to `workers` processes, in order: `size` each, shrinking towards
    the end (each at most the cases left over twice the workers, and at least `least`), so
    that the workers run out of cases nearly together: with equal chunks to the end, one
    worker scored a whole last chunk (a third of a second at 10,000 cases) while the other
    had nothing left."""
    out: list[range] = []
    first = 0
    while first < cases:
        n = max(least, min(size, (cases - first) // (2 * workers)))
        out.append(range(first, min(first + n, cases)))
        first += n
    return out


SLOT = 32 << 20
"""Bytes of shared memory for one chunk's case results in flight (`Slots`); a chunk whose results
are longer goes back through the pool's pipe (250 results of 27 KB, the bench corpus's, are 7 MB)."""


_slots: mmap.mmap | None = None  # this run's shared slots, inherited by the workers it forks


def score_batch(slot: int, first: int, expected: Sequence[Span], actual: Sequence[Span]) -> Batch | Refusal:
    """`shard_worker.score_chunk` in a worker, as a `Batch`; in a forked worker, its case results
    and summaries copied into `slot` of the run's shared memory instead of being pickled back
    through the pool's pipe (they are nearly all of a chunk's bytes), where they fit."""
    out = score_chunk(first, expected, actual)
    if isinstance(out, Refusal):
        return out
    done = batch(out)
    if _slots is None or slot < 0 or len(done.results) + len(done.summaries) > SLOT:
        return done
    at = slot * SLOT
    _slots[at:at + len(done.results)] = done.results
    at += len(done.results)
    _slots[at:at + len(done.summaries)] = done.summaries
    done.results = done.summaries = b""
    done.placed = True
    return done


class Slots:
    """Shared memory for the case results of a forked pool's chunks in flight, one slot each: a
    worker copies a chunk's results into its slot (`score_batch`) and this process copies them
    out. Through the pool's pipe, 270 MB at 10,000 cases were pickled, carried in 64 KB reads
    and unpickled: 0.78 of that CPU this way (bench/bench_chunk_shm.py). A slot is taken when
    its chunk is sent and given back once its results were copied out, so a worker never writes
    over results not read yet. Only for workers forked from this process after it is made (a
    fork server's or `spawn`ed workers do not share it)."""

    def __init__(self, count: int) -> None:
        global _slots
        self.map = mmap.mmap(-1, count * SLOT)  # anonymous and shared: pages only where written
        self.view = memoryview(self.map)
        self.free = list(range(count - 1, -1, -1))
        _slots = self.map

    def take(self) -> int:
        return self.free.pop()

    def read(self, slot: int, placed: Batch) -> Batch:
        """The chunk with its results and summaries, copied out of `slot` (the document's writer
        keeps what it is given until it writes it: the slot may be written over before)."""
        at = slot * SLOT
        results = placed.result_ends[-1] if placed.result_ends else 0
        summaries = placed.summary_ends[-1] if placed.summary_ends else 0
        placed.results = bytes(self.view[at:at + results])
        placed.summaries = bytes(self.view[at + results:at + results + summaries])
        placed.placed = False
        return placed

    def give(self, slot: int) -> None:
        """`slot` is free again: its chunk's results are copied out."""
        self.free.append(slot)

    def close(self) -> None:
        global _slots
        if _slots is self.map:
            _slots = None
        self.view.release()
        self.map.close()


class ShardsRefused(Exception):
    """The run cannot be sharded (or a worker refused a chunk): read it as a stream."""


def worker_count(parallelism: int, expected: str | Path, actual: str | Path) -> int:
    """Processes to score a run in: one below `SHARD_MIN_BYTES`, else `parallelism`, at most
    one per CPU this process may use, however busy other processes keep them: a choice that
    does not depend on a moment. A short sample of the CPUs' idle share, taken just after a
    busy moment, chose one process on a nearly idle machine and made the run 1.5 times as long;
    on 2 cores shared with other programs, 2 workers were no slower than one process (wall
    median 0.86 at load 5-7, 0.99 at load 3.4-3.8; bench/README.md, "`score`'s process count,
    one per CPU and never shrunk")."""
    try:
        size = os.path.getsize(expected) + os.path.getsize(actual)
    except OSError:
        return 1
    if size < SHARD_MIN_BYTES:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        cpus = os.cpu_count() or 1
    return max(1, min(parallelism, cpus))


PRELOAD = ["agenteval.runner.shard_worker"]  # what the fork server imports once for every worker
_held = 0  # holds on this process's fork server (runs that may fork from it, their pools)
_held_lock = threading.Lock()


def hold_fork_server() -> Callable[[], None]:
    """Starts the fork server the workers are forked from (where there is one), if it is not
    running, and holds it until the returned function is called; the server is stopped (and
    waited for) when its last hold is released. Starting it does not wait for it: it imports
    the worker's modules (about half a second) while this process goes on, so a run that
    knows it will fork holds it before reading its files. Stopped with the run, not left to
    end with this process: it would not be this process's child any more when it ended, and
    the workers' CPU, which the server collects, would go uncounted in this process's children
    (`time agenteval score`)."""
    global _held
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return _nothing
    import multiprocessing.forkserver as forkserver

    with _held_lock:
        _held += 1
        multiprocessing.get_context("forkserver").set_forkserver_preload(PRELOAD)
        forkserver.ensure_running()
    released = False

    def release() -> None:
        global _held
        nonlocal released
        with _held_lock:
            if released:
                return
            released = True
            _held -= 1
            if _held == 0:  # (another run's pool may still fork)
                stop = getattr(getattr(forkserver, "_forkserver", None), "_stop", None)  # CPython's
                if stop is not None:
                    stop()

    return release


def _nothing() -> None:
    pass


def forks_here() -> bool:
    """Whether a pool made now forks its workers from this process (`_Pool`): on Linux, while
    this process runs a single thread. A forked child holds only the thread that forked it, so
    a lock another thread held at that moment (an output stream's, an allocator's) would stay
    held in the child forever; with one thread there is none."""
    return sys.platform == "linux" and threading.active_count() == 1


class _Pool(ProcessPoolExecutor):
    """The run's worker processes. Forked from this process where `forks_here` (their modules
    are already imported: the whole pool starts in milliseconds, where a fork server first
    imports them again, about 0.9 s of CPU and of waiting on this machine); the pool forks its
    workers when it first submits, before it starts its own thread. Otherwise forked from the
    fork server (`hold_fork_server`), which imports the worker's modules once (each `spawn`ed
    worker imports them itself: about 0.5 s of CPU each), or `spawn`ed where there is no fork
    server (Windows). The pool holds the server until it is shut down and waited for."""

    def __init__(self, workers: int, setup: ShardSetup) -> None:
        context: multiprocessing.context.BaseContext
        self.forks = forks_here()  # its workers are forked from this process
        if self.forks:
            self._release = _nothing
            context = multiprocessing.get_context("fork")
        else:
            forkserver = "forkserver" in multiprocessing.get_all_start_methods()
            self._release = hold_fork_server()
            context = multiprocessing.get_context("forkserver" if forkserver else "spawn")
        try:
            super().__init__(workers, mp_context=context, initializer=start, initargs=(setup,))
        except BaseException:
            self._release()
            raise

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        super().shutdown(wait, cancel_futures=cancel_futures)
        if wait:
            self._release()


def listens_to_cases(sink: Sink) -> bool:
    """Whether `sink` needs each case result (an output may say it does not, with a false
    `hears_cases`)."""
    return bool(getattr(sink, "hears_cases", True))


class _Committed(Sink):
    """The document put in place when the eval set ends, left as it was when the run fails."""

    def __init__(self, writer: DocumentWriter | None) -> None:
        self.writer = writer

    def on_document(self, document: EvalSetResult) -> None:
        if self.writer is not None:
            self.writer.commit(document)

    def on_abort(self) -> None:
        if self.writer is not None:
            self.writer.abort()


TableReady = Callable[[int, list[EvalCaseResult]], None]
"""Told a run's number of case runs and its first `keep` case runs that did not pass, once both
are final: the report's table of them can then be made while the rest is scored."""


class ReportCases:
    """What the report shows, rebuilt from the JSON of the few cases it keeps; `table_ready`
    is told (once) when the table of cases that did not pass is final (`offer_table`)."""

    def __init__(self, keep: int, table_ready: TableReady | None = None) -> None:
        self.keep = keep
        self.first: list[EvalCaseResult] = []
        self.summaries: list[CaseSummary] = []
        self.not_passed: list[EvalCaseResult] = []
        self.table_ready = table_ready

    def offer_table(self, case_runs: int) -> None:
        """Tells `table_ready`, if it was not told yet, where the run's `case_runs` (each case
        runs once in a sharded run, and all were found) are more than `keep` and `keep` did not
        pass: what the report's table shows is then final (`reporting.console.streamed_report`)."""
        if self.table_ready is not None and len(self.not_passed) >= self.keep and case_runs > self.keep:
            told, self.table_ready = self.table_ready, None
            told(case_runs, list(self.not_passed))

    def add(self, chunk: Batch) -> None:
        """The chunk's cases that the report shows, read back from their JSON (only those)."""
        keep, first, summaries, not_passed = self.keep, self.first, self.summaries, self.not_passed
        if len(first) >= keep and len(summaries) >= keep and \
                (len(not_passed) >= keep or chunk.statuses.count(EvalStatus.PASSED) == len(chunk.statuses)):
            return  # (nearly every chunk of a large run: nothing it holds is shown)
        skip = len(LISTED)
        for i, status in enumerate(chunk.statuses):
            failed = status != EvalStatus.PASSED and len(not_passed) < keep
            if not failed and len(first) >= keep and len(summaries) >= keep:
                continue
            at = chunk.result_ends[i - 1] if i else 0
            result = EvalCaseResult.model_validate_json(chunk.results[at + skip:chunk.result_ends[i]])
            if len(first) < keep:
                first.append(result)
            if len(summaries) < keep:
                at = (chunk.summary_ends[i - 1] if i else 0) + skip
                summaries.append(CaseSummary.model_validate_json(chunk.summaries[at:chunk.summary_ends[i]]))
            if failed:
                not_passed.append(result)


class Digest(Protocol):
    """A hash being fed (`hashlib`'s)."""

    def update(self, data: bytes, /) -> None: ...


class _Digested(io.FileIO):
    """A file read for the bytes it holds, which also go to `digest` as they are read."""

    def __init__(self, path: str | Path, digest: Digest) -> None:
        super().__init__(path, "rb")
        self.digest = digest

    def read(self, size: int | None = -1, /) -> bytes:
        block = super().read(size)
        if block:
            self.digest.update(block)
        return block


def paired_spans(expected: str | Path, actual: str | Path,
                 digest: Digest | None = None) -> Iterator[tuple[Span, Span]]:
    """The cases of both files paired by position, as they are found (`split.ItemWalk`: a
    run's first chunks are sent while the rest are found); ShardsRefused, at the end, when they
    cannot be found so or their counts differ. With `digest` (a `hashlib` hash), every byte
    of the expected file goes to it, in order, by the end."""
    with _Digested(expected, digest) if digest is not None else open(expected, "rb") as e, \
            open(actual, "rb") as a:
        in_expected, in_actual = ItemWalk(e, "eval_cases"), ItemWalk(a, "eval_cases")
        got = iter(in_actual)
        for span in in_expected:
            other = next(got, None)
            if other is None:
                raise ShardsRefused("the files hold different numbers of cases")
            yield span, other
        if next(got, None) is not None:
            raise ShardsRefused("the files hold different numbers of cases")
        if in_expected.closed_at is None or in_actual.closed_at is None:
            raise ShardsRefused("a file is not laid out one indented case after another")
        while e.read(SCAN_CHUNK):  # (the few bytes after the list: to the digest)
            pass


def frame_ok(path: str | Path, items: Sequence[Span]) -> bool:
    """Whether the eval set at `path` less its `items` (the bytes before the first and after
    the last) nests at most `MAX_DEPTH` deep and holds no lone surrogate escape. With the
    workers' check of the items' bytes (`shard_worker`), this is the stream's scan of the whole
    file (`datasets.scan`), which a sharded run does not make: the items, nearly all of the
    bytes, are checked by the workers as they score them, not before the first is scored."""
    scan = DepthScan()
    with open(path, "rb") as f:
        head = f.read(items[0][0])
        if head.startswith(codecs.BOM_UTF8):
            head = head[len(codecs.BOM_UTF8):]
        f.seek(items[-1][1])
        scan.feed(head + f.read(SCAN_CHUNK), MAX_DEPTH)  # a tail is a few bytes: one piece
        while block := f.read(SCAN_CHUNK):
            scan.feed(block, MAX_DEPTH)
    return scan.deepest <= MAX_DEPTH and not scan.surrogates


async def rescore_sharded(job: ScoreJob, plan: RunPlan, services: Services, selection: Selection,
                          setup: ShardSetup, document: EvalSetResult, paths: Sequence[Path],
                          kept: ReportCases, outputs: Sequence[Sink], listener: Listener | None,
                          workers: int) -> tuple[RunSpec, EvalSetResult]:
    """`driver.rescore_source` over the cases of `setup`'s files, scored by `workers` worker
    processes; the completed run header and document (without its lists). ShardsRefused,
    with nothing written, when the run must be read as a stream instead."""
    if any(listens_to_cases(o) for o in outputs):
        raise ShardsRefused("an output needs every case result")
    judge = judge_service(services, listener)
    totals = Totals()
    counter = totals.counter
    writer = DocumentWriter(paths, document) if paths else None
    sink = Sinks([progress(listener), totals, _Committed(writer), *outputs])
    gating = plan.repeat_gating
    started, began = False, time.time()
    # The expected file's sha256 (the run header's) is taken from the split's reads: hashing
    # it first was a second read of the file, all before the first chunk was sent (33 ms of
    # CPU at 10,000 cases, 150 ms at 50,000).
    digest = hashlib.sha256()
    try:
        roles = ModelRoles(judge=[canonical(n) for n in judge_models(plan.metrics)])
        seen: set[str] = set()
        wanted: list[Span] = []
        got: list[Span] = []
        in_flight = 2 * workers + 1  # chunks sent before anything is told
        with _Pool(workers, setup) as pool:
            # (Made before the first chunk is sent: the pool forks its workers then.)
            slots = Slots(in_flight) if pool.forks else None
            try:
                pending: deque[tuple[int, Future[Batch | Refusal]]] = deque()

                def send(r: range) -> None:
                    slot = -1 if slots is None else slots.take()
                    pending.append((slot, pool.submit(score_batch, slot, r.start, wanted[r.start:r.stop],
                                                      got[r.start:r.stop])))

                # The first chunks go as soon as their cases are found, while the rest are found
                # (the files' split was a quarter of a second of the run's serial start): a chunk
                # whose start has `lead` cases or more from it on is one `chunks` makes `CHUNK`
                # long whatever the total, so the chunks are those of the split made first.
                lead, sent = 2 * workers * CHUNK, 0
                for span, other in paired_spans(setup.expected_path, setup.actual_path, digest):
                    wanted.append(span)
                    got.append(other)
                    if len(wanted) - sent >= lead and len(pending) < in_flight:
                        send(range(sent, sent + CHUNK))
                        sent += CHUNK
                if not (frame_ok(setup.expected_path, wanted) and frame_ok(setup.actual_path, got)):
                    raise ShardsRefused("a file nests too deep outside its cases, or holds a lone surrogate")
                header = start_header(job, [dataclasses.replace(selection, path=None)], roles,
                                      endpoints=plan.endpoint_settings())
                header.started = began
                header.eval_sets[0].file = str(selection.path)
                header.eval_sets[0].sha256 = digest.hexdigest()
                header.actual_file = setup.actual_path
                runs = iter([range(sent + r.start, sent + r.stop)
                             for r in chunks(len(wanted) - sent, workers)])
                while len(pending) < in_flight and (r := next(runs, None)) is not None:
                    send(r)
                while pending:
                    slot, future = pending.popleft()
                    try:
                        done = await anyio.to_thread.run_sync(future.result)
                    except BrokenProcessPool as e:  # a worker died (memory, a signal)
                        raise ShardsRefused(f"a worker process ended: {e}") from None
                    if isinstance(done, Refusal):
                        raise ShardsRefused(done.why)
                    if done.placed:
                        assert slots is not None
                        done = slots.read(slot, done)
                    if slots is not None:
                        slots.give(slot)
                    if not started:
                        sink.on_start(header, len(wanted))
                        started = True
                    had = len(seen)
                    seen.update(done.eval_ids)
                    if len(seen) - had != len(done.eval_ids):  # the streamed reader names both places
                        raise ShardsRefused("an eval_id repeated")
                    _tell(done, setup.eval_set_id, writer, kept, counter, listener)
                    kept.offer_table(len(wanted))
                    if (more := next(runs, None)) is not None:
                        send(more)
            except BaseException:
                # Waited for (the chunks running finish; those not begun are cancelled): a first
                # shutdown that does not wait leaves the `with`'s own waiting one nothing to wait
                # for, and a worker not yet told to stop when the run's error ends the process
                # hangs it for good (the queue that would tell it is closed at exit, and exit
                # joins it).
                pool.shutdown(wait=True, cancel_futures=True)
                raise
            finally:
                if slots is not None:
                    slots.close()
        header.eval_sets[0].cases = counter.cases
        header.num_runs = max(counter.max_runs, 1)
        end_run(header, totals, judge, services)
        final = completed(document, gating, header)
        sink.on_document(final)
    except ShardsRefused:
        # The streamed run starts afresh, telling the outputs (which hear no case) its start again.
        if writer is not None:
            writer.abort()
        raise
    except BaseException:
        if started:
            sink.on_abort()
        elif writer is not None:
            writer.abort()
        raise
    sink.on_end(header)
    return header, final


_STATUSES = {int(v): v for v in EvalStatus}  # a `Batch`'s status bytes


def _tell(chunk: Batch, eval_set_id: str, writer: DocumentWriter | None, kept: ReportCases,
          counter: TotalsCounter, listener: Listener | None) -> None:
    """A chunk's scored cases to the document, the report's cases, the totals and the progress."""
    cases = len(chunk.eval_ids)
    if writer is not None:
        writer.add_listed(chunk.results, cases)
        writer.add_summaries_listed(chunk.summaries, cases)
    kept.add(chunk)
    c = counter  # as `TotalsCounter.add` counts each case of one run, case by case
    c.cases += cases
    c.case_runs += cases
    c.max_runs = max(c.max_runs, 1)
    for value in set(chunk.statuses):
        c.statuses[_STATUSES[value]] += chunk.statuses.count(value)
    # Summed in case order, each onto the sum so far, as one at a time: a float sum's bits
    # depend on its order.
    if chunk.seconds:
        c.seconds = reduce(operator.add, chunk.seconds, c.seconds or 0.0)
    if chunk.tokens:
        c.tokens = reduce(operator.add, chunk.tokens, c.tokens or 0.0)
    c.agent_errors += chunk.agent_errors
    c.metric_errors += chunk.metric_errors
    if listener is not None:
        for eval_id, status, elapsed, error in zip(chunk.eval_ids, chunk.statuses, chunk.elapsed,
                                                   chunk.errors, strict=True):
            listener(CaseStarted(eval_set_id, eval_id, 0))
            listener(CaseFinished(eval_set_id, eval_id, 0, _STATUSES[status], elapsed, error))


__all__ = ["CHUNK", "LAST_CHUNK", "PRELOAD", "SHARD_MIN_BYTES", "SLOT", "Digest", "ReportCases",
           "ShardsRefused", "Slots", "TableReady", "chunks", "forks_here", "frame_ok", "hold_fork_server",
           "listens_to_cases", "paired_spans", "rescore_sharded", "score_batch", "worker_count"]
