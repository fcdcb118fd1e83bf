"""`runner.sharded`: `score` over worker processes writes the document one process writes, and
reads the run as a stream (same errors, nothing written) whatever a worker cannot take."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agenteval.errors import DataError
from agenteval.runner import ScoreJob, Services
from agenteval.runner.sharded import worker_count
from agenteval.runner.streamed import StreamedRun, rescore_files
from agenteval.schema import EvalConfig
from tests.helpers import call, eval_set, inv

_JOB = ScoreJob(config=EvalConfig(criteria={"tool_trajectory_avg_score": 1.0,
                                            "response_match_score": 0.8}), command="score")


def _sets(tmp_path: Path, n: int = 40) -> tuple[Path, Path]:
    expected = eval_set("s", {f"c{i}": [inv(f"q{i}", f"answer {i}", [call("t", x=i)])] * (1 + i % 2)
                              for i in range(n)})
    actual = eval_set("s", {f"c{i}": [inv(f"q{i}", f"answer {i if i % 3 else i + 1}",
                                          [call("t", x=i if i % 4 else -1)])] * (1 + i % 2)
                            for i in range(n)})
    paths = tmp_path / "expected.evalset.json", tmp_path / "actual.evalset.json"
    for path, es in zip(paths, (expected, actual), strict=True):
        path.write_text(es.model_dump_json(indent=2), encoding="utf-8")
    return paths


def _score(exp: Path, act: Path, out: Path, workers: int) -> StreamedRun:
    return asyncio.run(rescore_files(_JOB, exp, act, Services.create({}), out, keep=5, workers=workers))


@contextlib.contextmanager
def _another_thread() -> Iterator[None]:
    """A second thread alive meanwhile: a pool then forks its workers from the fork server."""
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _without_ids_and_times(data: bytes, run: StreamedRun) -> bytes:
    data = data.replace(run.document.eval_set_result_id.encode(), b"ID")
    return re.sub(rb'"(creation_timestamp|started|ended|duration_seconds|run_id)": [^,\n]+', b"T", data)


def test_the_document_of_two_processes_is_the_document_of_one(tmp_path: Path) -> None:
    exp, act = _sets(tmp_path, n=600)  # more than two chunks
    one, two = _score(exp, act, tmp_path / "one.json", 1), _score(exp, act, tmp_path / "two.json", 2)
    assert (one.processes, two.processes) == (1, 2)
    assert _without_ids_and_times((tmp_path / "one.json").read_bytes(), one) == \
        _without_ids_and_times((tmp_path / "two.json").read_bytes(), two)
    assert one.spec.totals == two.spec.totals and one.spec.eval_sets == two.spec.eval_sets
    assert [r.eval_id for r in two.first] == [r.eval_id for r in one.first]
    assert [r.eval_id for r in two.not_passed] == [r.eval_id for r in one.not_passed]
    assert two.summaries == one.summaries and two.first == one.first


def _shuffle(d: dict[str, Any]) -> None:
    d["eval_cases"].reverse()


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["eval_cases"].pop(2), "eval_cases: no case with eval_id 'c2'"),
    (lambda d: d["eval_cases"].__setitem__(39, dict(d["eval_cases"][0])),
     r"eval_cases\[39\].eval_id: duplicate eval_id 'c0' \(also eval_cases\[0\]\)"),
    (lambda d: d["eval_cases"][4]["conversation"].pop(), r"eval_cases\[4\].conversation: 0 invocations"),
    (lambda d: d["eval_cases"][7].__setitem__("conversation", 5), r"eval_cases\[7\].conversation"),
])
def test_what_one_process_refuses_is_refused_alike(tmp_path: Path, change: Callable[[Any], None],
                                                   message: str) -> None:
    exp, act = _sets(tmp_path)
    data = json.loads(act.read_text())
    change(data)
    act.write_text(json.dumps(data, indent=2))
    out = tmp_path / "out.json"
    with pytest.raises(DataError, match=message):
        _score(exp, act, out, 2)
    assert not out.exists()


@pytest.mark.parametrize("layout", ["reversed", "compact"])
def test_runs_it_cannot_shard_are_streamed_in_one_process(tmp_path: Path, layout: str) -> None:
    exp, act = _sets(tmp_path)
    data = json.loads(act.read_text())
    if layout == "reversed":
        _shuffle(data)
    act.write_text(json.dumps(data, indent=2 if layout == "reversed" else None))
    one = _score(exp, act, tmp_path / "one.json", 1)
    two = _score(exp, act, tmp_path / "two.json", 2)
    assert two.processes == 1
    assert _without_ids_and_times((tmp_path / "one.json").read_bytes(), one) == \
        _without_ids_and_times((tmp_path / "two.json").read_bytes(), two)


@pytest.mark.parametrize("value", [b"12345678901234567890123", b"-1.5e400", b"NaN"])
def test_numbers_only_pydantic_reads_are_refused_as_one_process_refuses(tmp_path: Path, value: bytes) -> None:
    # ijson (the streamed reader) refuses them; pydantic's JSON parser, which workers use,
    # would read them: the workers must leave them to the stream.
    exp, act = _sets(tmp_path)
    data = act.read_bytes()
    assert b'"x": 5\n' in data
    act.write_bytes(data.replace(b'"x": 5\n', b'"x": ' + value + b"\n", 1))
    out = tmp_path / "out.json"
    with pytest.raises(DataError) as one:
        _score(exp, act, out, 1)
    with pytest.raises(DataError) as two:
        _score(exp, act, out, 2)
    said = "an integer beyond 64 bits" if value.isdigit() else "malformed JSON"
    assert str(two.value) == str(one.value) and said in str(one.value)
    assert not out.exists()


def test_a_refused_sharded_run_has_ended_its_workers_when_it_returns(tmp_path: Path) -> None:
    # Workers still waiting for the pool's stop when the run's error ends the process hang it
    # for good (the queue that would tell them is closed at exit, and exit joins them).
    import multiprocessing

    exp, act = _sets(tmp_path, n=600)  # chunks in flight when the refused one comes back
    data = act.read_bytes()
    act.write_bytes(data.replace(b'"x": 5\n', b'"x": 12345678901234567890123\n', 1))
    for _ in range(3):
        with pytest.raises(DataError, match="an integer beyond 64 bits"):
            _score(exp, act, tmp_path / "out.json", 2)
        assert multiprocessing.active_children() == []


def test_a_number_only_in_a_string_is_read_by_workers(tmp_path: Path) -> None:
    exp, act = _sets(tmp_path)
    for path in (exp, act):
        path.write_bytes(path.read_bytes().replace(b'"q5"', b'"q5: NaN, 1e400, 12345678901234567890123"'))
    one, two = _score(exp, act, tmp_path / "one.json", 1), _score(exp, act, tmp_path / "two.json", 2)
    assert (one.processes, two.processes) == (1, 2)
    assert _without_ids_and_times((tmp_path / "one.json").read_bytes(), one) == \
        _without_ids_and_times((tmp_path / "two.json").read_bytes(), two)


def test_small_files_are_scored_in_one_process(tmp_path: Path) -> None:
    exp, act = _sets(tmp_path, n=5)
    assert worker_count(8, exp, act) == 1
    assert worker_count(8, exp, tmp_path / "missing.json") == 1


@pytest.mark.parametrize(("cpus", "parallelism", "workers"), [(2, 4, 2), (8, 4, 4), (4, 1, 1), (1, 4, 1)])
def test_large_files_get_a_worker_per_cpu_however_busy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      cpus: int, parallelism: int, workers: int) -> None:
    # Up to `parallelism`, one per CPU this process may use, whatever other programs do at the
    # moment the run starts.
    from agenteval.runner import sharded

    exp, act = _sets(tmp_path, n=5)
    monkeypatch.setattr(sharded, "SHARD_MIN_BYTES", 1)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)))
    monkeypatch.setattr(os, "getloadavg", lambda: (25.0, 25.0, 25.0))
    # (what an idle-CPU sample would say on these busy cores: the count must not hang on it)
    monkeypatch.setattr(sharded, "idle_cpus", lambda cpus: 0.0, raising=False)
    assert worker_count(parallelism, exp, act) == workers


@pytest.mark.skipif("forkserver" not in __import__("multiprocessing").get_all_start_methods(),
                    reason="no fork server here")
def test_the_fork_server_ends_with_the_run(tmp_path: Path) -> None:
    # Waited for by the run, so that the workers' CPU, which the server collects, is counted in
    # this process's children (it would otherwise end after this process, unaccounted).
    import multiprocessing.forkserver as forkserver

    exp, act = _sets(tmp_path)
    with _another_thread():
        assert _score(exp, act, tmp_path / "two.json", 2).processes == 2
    assert forkserver._forkserver._forkserver_pid is None  # type: ignore[attr-defined]


@pytest.mark.skipif("forkserver" not in __import__("multiprocessing").get_all_start_methods(),
                    reason="no fork server here")
def test_the_fork_server_ends_after_the_last_pool() -> None:
    # Two runs at once (the web UI): the first to end must not stop the server the other forks from.
    import multiprocessing.forkserver as forkserver

    from agenteval.runner.shard_worker import ShardSetup
    from agenteval.runner.sharded import _Pool

    setup = ShardSetup("e.json", "a.json", "s", [], "fail", "mean")
    with _another_thread():
        first, second = _Pool(1, setup), _Pool(1, setup)
        assert first.submit(os.getpid).result() != os.getpid()
        first.shutdown()
        assert forkserver._forkserver._forkserver_pid is not None  # type: ignore[attr-defined]
        assert second.submit(os.getpid).result() != os.getpid()
        second.shutdown()
    assert forkserver._forkserver._forkserver_pid is None  # type: ignore[attr-defined]


@pytest.mark.skipif("forkserver" not in __import__("multiprocessing").get_all_start_methods(),
                    reason="no fork server here")
def test_a_fork_server_held_early_ends_with_its_last_hold() -> None:
    # A run holds the server before reading its files (its imports overlap the reading); the
    # pool holds it too, and it ends when both have let go, once.
    import multiprocessing.forkserver as forkserver

    from agenteval.runner.shard_worker import ShardSetup
    from agenteval.runner.sharded import _Pool, hold_fork_server

    release = hold_fork_server()
    assert forkserver._forkserver._forkserver_pid is not None  # type: ignore[attr-defined]
    with _another_thread():
        pool = _Pool(1, ShardSetup("e.json", "a.json", "s", [], "fail", "mean"))
        assert pool.submit(os.getpid).result() != os.getpid()
    release()
    release()  # a second release is no second hold let go
    assert forkserver._forkserver._forkserver_pid is not None  # type: ignore[attr-defined]
    pool.shutdown()
    assert forkserver._forkserver._forkserver_pid is None  # type: ignore[attr-defined]


@pytest.mark.skipif("forkserver" not in __import__("multiprocessing").get_all_start_methods(),
                    reason="no fork server here")
def test_a_run_refused_after_the_fork_server_started_stops_it(tmp_path: Path) -> None:
    import multiprocessing.forkserver as forkserver

    exp, act = _sets(tmp_path)
    act.write_text(act.read_text().replace('"eval_set_id"', '"eval_set_idx"', 1))
    with _another_thread(), pytest.raises(DataError, match="eval_set_id"):
        _score(exp, act, tmp_path / "out.json", 2)
    assert forkserver._forkserver._forkserver_pid is None  # type: ignore[attr-defined]
    assert not (tmp_path / "out.json").exists()


def test_a_worker_runs_without_the_cyclic_collector() -> None:
    import gc

    from agenteval.runner import shard_worker

    setup = shard_worker.ShardSetup("e.json", "a.json", "s", [], "fail", "all")
    was, kept = gc.isenabled(), shard_worker._setup
    try:
        gc.enable()
        shard_worker.start(setup)  # the worker's initializer
        assert shard_worker._setup is setup and not gc.isenabled()
    finally:
        shard_worker._setup = kept
        if was:
            gc.enable()


_FORKED = """
import os, sys, threading
from agenteval.runner.shard_worker import ShardSetup
from agenteval.runner.sharded import _Pool
if sys.argv[1] == "thread":
    threading.Thread(target=threading.Event().wait, daemon=True).start()
pool = _Pool(2, ShardSetup("e.json", "a.json", "s", [], "fail", "mean"))
parents = {pool.submit(os.getppid).result() for _ in range(4)}
pool.shutdown()
print(parents == {os.getpid()})
"""


@pytest.mark.skipif(sys.platform != "linux", reason="workers are forked from the run on Linux only")
@pytest.mark.parametrize(("threads", "forked"), [("one", True), ("thread", False)])
def test_workers_are_forked_from_the_run_while_it_has_one_thread(threads: str, forked: bool) -> None:
    # Forked from the run they inherit its imports (no fork server importing them again); with
    # a second thread alive, whose locks a forked child could find held forever, from the fork
    # server. (A fresh interpreter: the test process may have threads of earlier tests.)
    out = subprocess.run([sys.executable, "-c", _FORKED, threads], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == str(forked)


_SLOTS = """
import asyncio, sys
from pathlib import Path
from agenteval.runner import ScoreJob, Services, sharded
from agenteval.runner.streamed import rescore_files
from agenteval.schema import EvalConfig
job = ScoreJob(config=EvalConfig(criteria={"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}),
               command="score")
if sys.argv[4] != "0":
    sharded.SLOT = int(sys.argv[4])  # (before the pool forks: the workers inherit it)
read, placed = sharded.Slots.read, []
def counted(self, slot, chunk):
    placed.append(len(chunk.eval_ids))
    return read(self, slot, chunk)
sharded.Slots.read = counted
run = asyncio.run(rescore_files(job, sys.argv[1], sys.argv[2], Services.create({}), Path(sys.argv[3]), keep=5,
                                workers=2))
print(run.processes, sum(placed), sharded._slots is None)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="workers are forked from the run on Linux only")
@pytest.mark.parametrize(("slot", "placed"), [(0, 600), (1000, 0)])
def test_forked_workers_hand_their_results_over_in_shared_memory(tmp_path: Path, slot: int,
                                                                 placed: int) -> None:
    # Forked workers copy a chunk's case results into its slot of the run's shared memory, not
    # through the pool's pipe; a chunk too long for its slot (here: every one) goes through the
    # pipe. Either way the document is one process's. (A fresh interpreter: the test process may
    # have threads of earlier tests, and its pools then fork from the fork server.)
    exp, act = _sets(tmp_path, n=600)
    one = _score(exp, act, tmp_path / "one.json", 1)
    out = subprocess.run([sys.executable, "-c", _SLOTS, str(exp), str(act), str(tmp_path / "two.json"),
                          str(slot)], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.split() == ["2", str(placed), "True"]  # and the slots unmapped at the end
    doc = (tmp_path / "two.json").read_bytes()
    two_id = json.loads(doc)["eval_set_result_id"]
    assert _without_ids_and_times((tmp_path / "one.json").read_bytes(), one) == \
        _without_ids_and_times(doc.replace(two_id.encode(), one.document.eval_set_result_id.encode()), one)


def test_slots_are_taken_and_given_back_and_a_chunk_read_out_of_its_own() -> None:
    from agenteval.runner.shard_worker import Batch
    from agenteval.runner.sharded import SLOT, Slots

    slots = Slots(2)
    try:
        first, second = slots.take(), slots.take()
        assert (first, second) == (0, 1) and not slots.free
        slots.map[:SLOT] = b"x" * SLOT  # (another chunk's, in the slot before)
        slots.map[SLOT:SLOT + 30] = b"a" * 10 + b"bc" * 7 + b"{}" * 3
        chunk = Batch(["c0", "c1", "c2"], b"\x01\x01\x02", [None] * 3, 0, 0, [], [], [0.0] * 3,
                      [10, 10, 24], [2, 4, 6], b"", b"", placed=True)
        got = slots.read(second, chunk)
        assert (got.results, got.summaries, got.placed) == (b"a" * 10 + b"bc" * 7, b"{}" * 3, False)
        assert type(got.results) is bytes and type(got.summaries) is bytes
        slots.give(second)
        assert slots.take() == second
    finally:
        slots.close()


def test_a_chunk_is_batched_as_the_document_lists_its_cases() -> None:
    from agenteval.runner.shard_worker import Scored, batch
    from agenteval.schema import EvalStatus

    scored = [Scored("a", b"{1}", b"[1]", EvalStatus.PASSED, None, 0, 1.5, None, 0.1),
              Scored("b", b"{22}", b"[22]", EvalStatus.FAILED, "boom", 2, None, 7.0, 0.2),
              Scored("c", b"{333}", b"[333]", EvalStatus.NOT_EVALUATED, "", 1, 0.25, 3.0, 0.3)]
    got = batch(scored)
    assert got.results == b",\n    {1},\n    {22},\n    {333}"
    assert got.summaries == b",\n    [1],\n    [22],\n    [333]"
    assert (got.result_ends, got.summary_ends) == ([9, 19, 30], [9, 19, 30])
    assert (got.eval_ids, list(got.statuses), got.errors) == (["a", "b", "c"], [1, 2, 3], [None, "boom", ""])
    assert (got.agent_errors, got.metric_errors) == (1, 3)  # an empty error is none, as one process counts
    assert (got.seconds, got.tokens, got.elapsed) == ([1.5, 0.25], [7.0, 3.0], [0.1, 0.2, 0.3])


def test_chunks_cover_the_cases_in_order_and_shrink_towards_the_end() -> None:
    from agenteval.runner.sharded import chunks

    runs = chunks(10_000, 2, size=250, least=25)
    assert [i for r in runs for i in r] == list(range(10_000))
    sizes = [len(r) for r in runs]
    assert sizes[0] == 250 and max(sizes) == 250
    assert sizes == sorted(sizes, reverse=True)[:-1] + sizes[-1:]  # never growing but the remainder
    # The workers' last chunks are small: what one scores after the other ran out is at most 25.
    assert all(n <= 25 for n in sizes[-4:])
    assert [len(r) for r in chunks(3, 4, size=250, least=25)] == [3]


def _deep(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


@pytest.mark.parametrize("where", ["case", "after the cases", "lone surrogate"])
def test_nesting_and_lone_surrogates_are_refused_as_one_process_refuses(tmp_path: Path, where: str) -> None:
    # Too deep for agenteval (100 levels) but not for pydantic's parser (about 200), which the
    # workers use: a sharded run must refuse the file with the stream's error all the same.
    exp, act = _sets(tmp_path)
    data = act.read_bytes()
    if where == "case":
        data = data.replace(b'"x": 5\n', b'"x": ' + _deep(120) + b"\n", 1)
    elif where == "after the cases":
        assert data.endswith(b'"creation_timestamp": 0.0\n}')
        data = data[:-2] + b',\n  "deep": ' + _deep(120) + b"\n}"
    else:
        data = data.replace(b'"q5"', b'"q5 \\ud800"', 1)
    act.write_bytes(data)
    out = tmp_path / "out.json"
    with pytest.raises(DataError) as one:
        _score(exp, act, out, 1)
    with pytest.raises(DataError) as two:
        _score(exp, act, out, 2)
    assert str(two.value) == str(one.value)
    assert ("surrogate" if where == "lone surrogate" else "nested more than 100") in str(one.value)
    assert not out.exists()


def test_a_sharded_run_scans_no_file_before_its_workers_start(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # The workers check the cases' nesting as they score them: the whole-file scans were a
    # third of a second of the run's serial start at 10,000 cases.
    from agenteval.datasets import stream

    scanned: list[Path] = []
    scan = stream.scan_file
    monkeypatch.setattr(stream, "scan_file", lambda path, limit: scanned.append(path) or scan(path, limit))
    exp, act = _sets(tmp_path)
    assert _score(exp, act, tmp_path / "two.json", 2).processes == 2
    assert scanned == []
    assert _score(exp, act, tmp_path / "one.json", 1).processes == 1
    assert scanned == [exp, act]  # (the stream scans both)


def test_a_worker_refuses_a_chunk_nested_too_deep() -> None:
    from agenteval.datasets.split import item_spans
    from agenteval.runner import shard_worker
    from agenteval.runner.shard_worker import Refusal, ShardSetup, score_chunk

    kept = shard_worker._setup
    try:
        for deep, refused in ((60, False), (120, True)):
            with __import__("tempfile").TemporaryDirectory() as d:
                exp, act = _sets(Path(d), n=4)
                act.write_bytes(act.read_bytes().replace(b'"x": 1\n', b'"x": ' + _deep(deep) + b"\n", 1))
                shard_worker._setup = ShardSetup(str(exp), str(act), "s", _JOB.metrics(), "fail", "all")
                wanted, got = item_spans(exp, "eval_cases"), item_spans(act, "eval_cases")
                assert wanted is not None and got is not None
                done = score_chunk(0, wanted, got)
                assert isinstance(done, Refusal) == refused, done
    finally:
        shard_worker._setup = kept


def test_the_first_chunks_are_scored_while_the_files_are_split(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # The split of both files was a quarter of a second of a 10,000-case run's serial start:
    # a chunk goes to the workers once its cases are found (and enough after them that it is
    # the chunk a split made first would send), so the rest are found while they score.
    from concurrent.futures import ProcessPoolExecutor

    from agenteval.runner import sharded

    events: list[str] = []
    submit, frame_ok = ProcessPoolExecutor.submit, sharded.frame_ok

    def submitted(self: Any, *args: Any, **kwargs: Any) -> Any:
        events.append("chunk sent")
        return submit(self, *args, **kwargs)

    def split(*args: Any) -> bool:
        events.append("files split")
        return frame_ok(*args)

    monkeypatch.setattr(sharded._Pool, "submit", submitted)
    monkeypatch.setattr(sharded, "frame_ok", split)
    exp, act = _sets(tmp_path, n=1300)  # more than the first chunk and the cases after it
    two = _score(exp, act, tmp_path / "two.json", 2)
    assert two.processes == 2
    assert events[0] == "chunk sent" and "files split" in events
    one = _score(exp, act, tmp_path / "one.json", 1)
    assert _without_ids_and_times((tmp_path / "one.json").read_bytes(), one) == \
        _without_ids_and_times((tmp_path / "two.json").read_bytes(), two)


@pytest.mark.parametrize("change", ["one case fewer", "one case more"])
def test_files_of_other_lengths_are_refused_to_the_stream(tmp_path: Path, change: str) -> None:
    from agenteval.runner.sharded import ShardsRefused, paired_spans

    exp, act = _sets(tmp_path, n=6)
    data = json.loads(act.read_text())
    if change == "one case fewer":
        data["eval_cases"].pop()
    else:
        data["eval_cases"].append(dict(data["eval_cases"][0], eval_id="c6"))
    act.write_text(json.dumps(data, indent=2))
    with pytest.raises(ShardsRefused, match="different numbers of cases"):
        list(paired_spans(exp, act))
    assert len(list(paired_spans(exp, exp))) == 6


def test_the_expected_file_is_hashed_from_the_split_s_reads(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The run header's sha256 of the expected file comes from the bytes the split reads: the
    file is not read a second time for it before the first chunk is sent."""
    from agenteval.runner import header

    exp, act = _sets(tmp_path, n=600)

    def refused(path: object) -> None:
        raise AssertionError(f"{path} read again to hash it")
    monkeypatch.setattr(header, "file_sha256", refused)
    run = _score(exp, act, tmp_path / "two.json", 2)
    assert run.processes == 2
    (ref,) = run.spec.eval_sets
    assert (ref.file, ref.sha256, ref.cases) == (str(exp), hashlib.sha256(exp.read_bytes()).hexdigest(), 600)
    assert run.spec.started is not None and run.spec.ended is not None and run.spec.started <= run.spec.ended


def test_the_split_hashes_every_byte_of_the_expected_file(tmp_path: Path) -> None:
    from agenteval.runner.sharded import paired_spans

    exp, _ = _sets(tmp_path, n=6)
    data = json.loads(exp.read_text())
    data["description"] = "after the cases"  # bytes after the list, and a byte-order mark before
    exp.write_bytes(b"\xef\xbb\xbf" + json.dumps(data, indent=2).encode())
    digest = hashlib.sha256()
    assert len(list(paired_spans(exp, exp, digest))) == 6
    assert digest.hexdigest() == hashlib.sha256(exp.read_bytes()).hexdigest()
