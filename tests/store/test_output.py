"""Result documents written where the user asked: whole, or a case at a time."""

from __future__ import annotations

import io
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from agenteval.datasets.targets import TargetWriter
from agenteval.errors import AgentEvalError, DataError
from agenteval.schema import EvalSetResult
from agenteval.store import output, write_outputs
from agenteval.store.history import history_dir
from agenteval.store.output import DocumentWriter, placed_summary
from agenteval.verdicts import summarise
from tests.result_builders import case, result


def test_a_document_written_case_by_case_has_the_bytes_of_one_written_whole(tmp_path: Path) -> None:
    doc = summarise(result([case("a", {"m": 1.0}), case("b", {"m": 0.2}), case("c", {"m": None})]))
    whole = tmp_path / "whole.json"
    write_outputs([doc], whole)
    streamed = tmp_path / "streamed.json"
    writer = DocumentWriter([streamed], doc)  # its lists are left out
    for got, summary in zip(doc.eval_case_results, doc.summary, strict=True):
        writer.add(got)
        writer.add_summary(summary)
    assert not streamed.exists()  # nothing is in place before the end
    writer.commit(doc)
    assert streamed.read_bytes() == whole.read_bytes()


@pytest.mark.parametrize("runs", [[3], [1, 2], [2, 0, 1]])
def test_cases_given_as_runs_of_listed_bytes_are_the_document_of_one_written_whole(
        tmp_path: Path, runs: list[int]) -> None:
    # A sharded run's chunk: its results (and summaries) one run of bytes, each after `LISTED`.
    doc = summarise(result([case("a", {"m": 1.0}), case("b", {"m": 0.2}), case("c", {"m": None})]))
    whole = tmp_path / "whole.json"
    write_outputs([doc], whole)
    streamed = tmp_path / "streamed.json"
    writer = DocumentWriter([streamed], doc)
    at = 0
    for n in runs:
        cases, summaries = doc.eval_case_results[at:at + n], doc.summary[at:at + n]
        writer.add_listed(b"".join(output.LISTED + output.placed_json(c) for c in cases), n)
        writer.add_summaries_listed(b"".join(output.LISTED + placed_summary(s) for s in summaries), n)
        at += n
    writer.commit(doc)
    assert streamed.read_bytes() == whole.read_bytes()


class _CountedSpool(io.BufferedRandom):
    """A spool file that counts the writes it is given."""

    writes = 0

    def write(self, data: Any) -> int:
        self.writes += 1
        return super().write(data)


def test_summaries_are_spooled_by_the_block_with_the_bytes_unchanged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output, "_BLOCK", 2000)
    doc = summarise(result([case(f"c{i}", {"m": i / 40}) for i in range(40)]))
    whole = tmp_path / "whole.json"
    write_outputs([doc], whole)
    streamed = tmp_path / "streamed.json"
    writer = DocumentWriter([streamed], doc)
    writer._spool.close()
    writer._spool = spool = _CountedSpool(io.FileIO(tmp_path / "spool", "w+b"))
    for got, summary in zip(doc.eval_case_results, doc.summary, strict=True):
        writer.add(got)
        writer.add_summary(summary)
    spooled = sum(len(placed_summary(s)) + 6 for s in doc.summary)
    # A write a block of summaries (a summary a write cost 5 µs each on a resume), not one each.
    assert 2 <= spool.writes <= spooled // 2000 + 1 < len(doc.summary)
    writer.commit(doc)
    assert streamed.read_bytes() == whole.read_bytes()


class _ThreadedSpool(io.BufferedRandom):
    """A spool file that keeps the names of the threads that write and read it."""

    threads: set[str]

    def write(self, data: Any) -> int:
        self.threads.add(threading.current_thread().name)
        return super().write(data)

    def read(self, size: int | None = -1) -> bytes:
        self.threads.add(threading.current_thread().name)
        return super().read(size)


@pytest.mark.parametrize("background", [False, True])
def test_a_background_writer_spools_and_copies_the_summaries_on_its_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, background: bool) -> None:
    monkeypatch.setattr(output, "_BLOCK", 2000)
    doc = summarise(result([case(f"c{i}", {"m": i / 40}) for i in range(40)]))
    whole = tmp_path / "whole.json"
    write_outputs([doc], whole)
    writer = DocumentWriter([tmp_path / "streamed.json"], doc, background)
    writer._spool.close()
    writer._spool = spool = _ThreadedSpool(io.FileIO(tmp_path / "spool", "w+b"))
    spool.threads = set()
    for got, summary in zip(doc.eval_case_results, doc.summary, strict=True):
        writer.add(got)
        writer.add_summary(summary)
    writer.commit(doc)
    assert (tmp_path / "streamed.json").read_bytes() == whole.read_bytes()
    # (A resume's 24 MB of summaries, joined and written by the caller, kept it waiting for the GIL.)
    assert spool.threads and all(name.startswith("agenteval-document") == background
                                 for name in spool.threads)


@pytest.mark.parametrize("background", [False, True])
@pytest.mark.parametrize("block", [1, 1 << 20])  # the spool fails as a summary is added; at commit
def test_a_spool_that_cannot_be_written_is_a_data_error_and_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int, background: bool) -> None:
    monkeypatch.setattr(output, "_BLOCK", block)
    doc = summarise(result([case("a", {"m": 1.0})]))
    target = tmp_path / "out" / "out.json"
    target.parent.mkdir()
    writer = DocumentWriter([target], doc, background)
    writer._spool.close()
    (tmp_path / "spool").write_bytes(b"")
    writer._spool = open(tmp_path / "spool", "rb")  # noqa: SIM115 (writes fail, as on a full disk)
    writer.add(doc.eval_case_results[0])
    with pytest.raises(DataError, match=r"out\.json: cannot be written"):
        writer.add_summary(doc.summary[0])
        writer.commit(doc)
    assert list(target.parent.iterdir()) == [] and writer._thread is None


def _reading(items: list[bytes], threads: set[str]) -> output.Read:
    """A `Read` of `items` two at a time, each pair views of one buffer the next pair overwrites
    (as `RowsReader.views` gives them), noting the threads it is read on."""
    def read() -> Any:
        threads.add(threading.current_thread().name)
        buffer = bytearray(max(map(len, items)) * 2)
        for i in range(0, len(items), 2):
            views, at = [], 0
            for item in items[i:i + 2]:
                buffer[at:at + len(item)] = item
                views.append(memoryview(buffer)[at:at + len(item)])
                at += len(item)
            yield views
            buffer[:] = b"x" * len(buffer)  # (what a view not written by now would show)
    return read


@pytest.mark.parametrize("background", [False, True])
@pytest.mark.parametrize("first", [0, 3])  # items handed over unread first, or after three cases
def test_items_handed_over_unread_are_read_and_written_by_the_writer_as_given_placed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, background: bool, first: int) -> None:
    monkeypatch.setattr(output, "_BLOCK", 3000)
    doc = summarise(result([case(f"c{i}", {"m": i / 30}) for i in range(30)]))
    whole = tmp_path / "whole.json"
    write_outputs([doc], whole)
    paths = [tmp_path / "out.json", history_dir(tmp_path) / "doc.json"]
    writer = DocumentWriter(paths, doc, background)
    threads: set[str] = set()
    results, summaries = doc.eval_case_results, doc.summary
    for i in range(first):
        writer.add(results[i])
        writer.add_summary(summaries[i])
    for lo, hi in ((first, first + 11), (first + 11, 25)):  # two hand-overs, a block apart
        rows = [output.placed_json(r, keep=False) for r in results[lo:hi]]
        writer.add_read(_reading(rows, threads), len(rows), sum(map(len, rows)))
        sums = [placed_summary(s) for s in summaries[lo:hi]]
        writer.add_summaries_read(_reading(sums, threads), len(sums), sum(map(len, sums)))
    for i in range(25, 30):
        writer.add(results[i])
        writer.add_summary(summaries[i])
    writer.commit(doc)
    assert all(path.read_bytes() == whole.read_bytes() for path in paths)
    assert threads and all(name.startswith("agenteval-document") == background for name in threads)


def test_blocks_of_items_handed_over_unread_do_not_hold_up_the_caller(tmp_path: Path) -> None:
    # A resume's kept blocks hold only where their rows lie: its thread waited for the writer's
    # four blocks ahead (of 39 at 10,000 cases) instead of running its remaining cases meanwhile.
    doc = result([])
    writer = DocumentWriter([tmp_path / "out.json"], doc, background=True)
    gate = threading.Event()

    def read() -> Any:
        gate.wait(30)
        yield [b"{}"]

    def hand_over() -> None:
        for _ in range(20):
            writer.add_read(read, 1, output._BLOCK)

    caller = threading.Thread(target=hand_over)
    caller.start()
    caller.join(10)
    assert not caller.is_alive()  # (before: waiting at the fifth block for the first)
    gate.set()
    writer.abort()


def test_an_item_that_cannot_be_read_is_raised_as_a_failed_write_and_leaves_nothing(tmp_path: Path) -> None:
    doc = summarise(result([case("a", {"m": 1.0}), case("b", {"m": 0.5})]))
    target = tmp_path / "out" / "out.json"
    target.parent.mkdir()
    writer = DocumentWriter([target], doc, background=True)

    def damaged() -> Any:
        yield [output.placed_json(doc.eval_case_results[0], keep=False)]
        raise DataError(tmp_path / "r.rows", "", "the run journal's row of case 'b' is damaged")

    writer.add_read(damaged, 2, 100)
    with pytest.raises(DataError, match="row of case 'b' is damaged"):
        writer.commit(doc)
    assert list(target.parent.iterdir()) == [] and writer._thread is None


def test_an_aborted_document_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")
    doc = result([case("a", {"m": 1.0})])
    writer = DocumentWriter([target], doc)
    writer.add(doc.eval_case_results[0])
    writer.abort()
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_document_whose_id_changed_is_not_put_in_place(tmp_path: Path) -> None:
    doc = result([])
    writer = DocumentWriter([tmp_path / "out.json"], doc)
    with pytest.raises(AgentEvalError, match="id changed"):
        writer.commit(doc.model_copy(update={"eval_set_result_id": "other"}))
    assert list(tmp_path.iterdir()) == []


def test_a_target_that_cannot_be_replaced_is_a_data_error_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    writer = DocumentWriter([tmp_path / "dir"], result([]))  # `check_targets` refuses it up front
    with pytest.raises(DataError, match="cannot be written"):
        writer.commit(result([]))
    assert [p.name for p in tmp_path.iterdir()] == ["dir"] and not list((tmp_path / "dir").iterdir())


def test_a_name_made_from_a_long_id_fits_a_file_system_and_stays_apart() -> None:
    from agenteval.store.output import MAX_NAME, safe_name

    a, b = "y" * 300 + "_1795634587.58", "y" * 299 + "z_1795634587.58"
    assert len(safe_name(a)) <= MAX_NAME
    assert safe_name(a) != safe_name(b)  # the hash tells apart ids that share their ends
    assert safe_name(a).endswith("_1795634587.58")  # the time stays readable
    assert safe_name("short_id") == "short_id"


def test_a_run_of_a_set_with_a_300_character_id_is_recorded(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from click.testing import CliRunner

    from agenteval.cli.main import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.py").write_text("root_agent = lambda text: 'hello'\n")
    case = {"eval_id": "a", "conversation": [
        {"user_content": {"role": "user", "parts": [{"text": "hi"}]},
         "final_response": {"role": "model", "parts": [{"text": "hello"}]}}]}
    (tmp_path / "s.json").write_text(json.dumps({"eval_set_id": "y" * 300, "eval_cases": [case]}))
    r = CliRunner().invoke(cli, ["eval", "agent.py", "s.json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "Recorded run" in r.output
    assert len(list((tmp_path / ".agenteval" / "eval_history").glob("*.evalset_result.json"))) == 1


def test_a_result_is_serialised_once_for_journal_and_document_and_copied_as_is(tmp_path: Path) -> None:
    from agenteval.datasets.files import list_item
    from agenteval.store.output import place, placed_json, result_json, unplace

    doc = summarise(result([case("a", {"m": 1.0}), case("b", {"m": None})]))
    first = doc.eval_case_results[0]
    assert placed_json(first) is placed_json(first)  # remembered, not serialised again
    for i, got in enumerate(doc.eval_case_results):
        separator = b",\n    " if i else b"\n    "
        assert separator + placed_json(got) == list_item(got, i, exclude_none=False)
        assert place(result_json(got)) == placed_json(got) and unplace(placed_json(got)) == result_json(got)
    # A string's newline is escaped in JSON: placing and unplacing it leaves it as it was.
    odd = first.model_copy(update={"eval_id": "a\n    b\n"})
    assert unplace(place(result_json(odd, keep=False))) == result_json(odd, keep=False)
    whole = tmp_path / "whole.json"
    write_outputs([doc], whole)
    copied = tmp_path / "copied.json"  # as a resumed run writes its kept case runs: placed rows
    writer = DocumentWriter([copied], doc)
    writer.add_placed(place(result_json(doc.eval_case_results[0])))
    writer.add(doc.eval_case_results[1])
    for summary in doc.summary:
        writer.add_summary(summary)
    writer.commit(doc)
    assert copied.read_bytes() == whole.read_bytes()


def test_results_placed_elsewhere_are_written_as_they_come(tmp_path: Path) -> None:
    # A worker process indents a result and a summary for their place in the document's lists
    # (`runner.shard_worker`); the writer adds only the separators.
    from agenteval.store.placing import placed_model_json

    doc = summarise(result([case("a", {"m": 1.0}), case("b", {"m": 0.2}), case("c", {"m": None})]))
    whole = tmp_path / "whole.json"
    write_outputs([doc], whole)
    placed = tmp_path / "placed.json"
    writer = DocumentWriter([placed], doc)
    for got, summary in zip(doc.eval_case_results, doc.summary, strict=True):
        writer.add_placed(placed_model_json(got))
        writer.add_summary_placed(placed_model_json(summary))
    writer.commit(doc)
    assert placed.read_bytes() == whole.read_bytes()
    assert (writer.cases, writer.summaries) == (3, 3)


@pytest.mark.parametrize(("stream_first", "background"), [(False, False), (True, False), (False, True)])
def test_the_history_copy_of_a_large_document_has_the_bytes_of_its_output(tmp_path: Path, stream_first: bool,
                                                                          background: bool) -> None:
    # Several MiB, so that blocks are written before the end and the copy is made at `commit`.
    cases = [case(f"c{i:04d}", {"m": i / 3000}) for i in range(3000)]
    doc = summarise(result(cases))
    whole = tmp_path / "whole.json"
    write_outputs([doc], whole)
    assert whole.stat().st_size > 3 << 20
    paths = [tmp_path / "out.json", tmp_path / "history" / "copy.json", Path("/dev/null")]
    writer = DocumentWriter(paths[::-1] if stream_first else paths, doc, background)
    for got, summary in zip(doc.eval_case_results, doc.summary, strict=True):
        writer.add(got)
        writer.add_summary(summary)
    assert not paths[1].exists()
    writer.commit(doc)
    assert paths[0].read_bytes() == paths[1].read_bytes() == whole.read_bytes()


class _HeldWrites:
    """`TargetWriter.write` held until `go` is set, counting the calls that returned; the write
    of block `fail` (counted from 1) fails as a full disk does."""

    def __init__(self, fail: int = 0) -> None:
        self.go, self.written, self.threads, self.fail = threading.Event(), 0, set[str](), fail
        self._write = TargetWriter.write

    def __call__(self, target: TargetWriter, chunk: bytes) -> None:
        self.threads.add(threading.current_thread().name)
        if len(chunk) >= 1 << 20:  # (a block, not the prelude `__init__` writes)
            assert self.go.wait(10)
            if self.written + 1 == self.fail:
                target.abort()
                raise DataError(target.path, "", "cannot be written: No space left on device")
        self._write(target, chunk)
        self.written += 1


def _large() -> EvalSetResult:
    return summarise(result([case(f"c{i:04d}", {"m": i / 3000}) for i in range(3000)]))


def test_a_background_writer_hands_its_blocks_to_its_thread_and_commit_waits_for_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _large()
    whole = tmp_path / "whole.json"
    write_outputs([doc], whole)
    held = _HeldWrites()
    monkeypatch.setattr(TargetWriter, "write", lambda target, chunk: held(target, chunk))
    writer = DocumentWriter([tmp_path / "out.json"], doc, background=True)
    for got in doc.eval_case_results[:500]:  # more than a block: handed over, not written yet
        writer.add(got)
    assert held.written == 1 and not held.go.is_set()  # the prelude only: the caller did not wait
    held.go.set()
    for got in doc.eval_case_results[500:]:
        writer.add(got)
    for summary in doc.summary:
        writer.add_summary(summary)
    writer.commit(doc)
    assert (tmp_path / "out.json").read_bytes() == whole.read_bytes()
    assert any(name.startswith("agenteval-document") for name in held.threads)
    assert writer._thread is None  # (ended by commit)


def test_a_background_write_that_fails_is_raised_and_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    held = _HeldWrites(fail=2)
    held.go.set()
    monkeypatch.setattr(TargetWriter, "write", lambda target, chunk: held(target, chunk))
    doc = _large()
    target = tmp_path / "out" / "out.json"
    target.parent.mkdir()
    writer = DocumentWriter([target], doc, background=True)
    with pytest.raises(DataError, match=r"out\.json: cannot be written: No space left"):
        try:
            for got in doc.eval_case_results:
                writer.add(got)
            writer.commit(doc)
        except DataError:
            writer.abort()  # (what the run's sink does)
            raise
    assert list(target.parent.iterdir()) == [] and writer._thread is None


def _killed_writer(target: Path) -> Path:
    """The temporary file a writer of `target` killed mid-write (SIGKILL) leaves."""
    code = ("import os, sys\nfrom agenteval.datasets.targets import TargetWriter\n"
            "TargetWriter(sys.argv[1]).write(b'{')\nos.kill(os.getpid(), 9)\n")
    done = subprocess.run([sys.executable, "-c", code, str(target)], check=False)
    assert done.returncode == -signal.SIGKILL
    (left,) = target.parent.glob(f".{target.name}.*.tmp")
    return left


@pytest.mark.parametrize("background", [False, True])
def test_a_run_writing_into_the_history_removes_the_copies_killed_writers_left_there(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, background: bool) -> None:
    removed_by: list[str] = []
    remove = output.remove_stale_temporaries

    def removing(folder: Path) -> list[Path]:
        removed_by.append(threading.current_thread().name)
        return remove(folder)

    monkeypatch.setattr(output, "remove_stale_temporaries", removing)
    history = history_dir(tmp_path / "agent")
    history.mkdir(parents=True)
    killed = _killed_writer(history / "killed_1.evalset_result.json")
    beside_output = _killed_writer(tmp_path / "out.json")  # not the history: left to its owner
    live = TargetWriter(history / "running_1.evalset_result.json")  # a run still writing
    live.write(b"{")
    (live_copy,) = history.glob(".running_1.*.tmp")
    doc = result([])
    new = history / f"{doc.eval_set_result_id}.evalset_result.json"
    writer = DocumentWriter([tmp_path / "out.json", new], doc, background)
    # In the background, by a thread of its own, which `commit` waits for: unlinking a killed
    # 10,000-case run's 114 MB copy held the run's thread up to 0.26 s before its first case,
    # then the writer's thread before its first block (and the run's, waiting for its blocks).
    assert background or not killed.exists()
    writer.commit(doc)
    assert not killed.exists()
    assert removed_by == ["agenteval-stale-copies" if background else threading.current_thread().name]
    assert live_copy.exists() and beside_output.exists()
    live.abort()
    assert list(history.iterdir()) == [new]
