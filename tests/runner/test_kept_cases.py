"""A resumed run's kept cases: a case whose runs were all kept goes to the sinks as the journal's
verdict of it (`Sink.on_kept_case`), and the streamed document, the totals, the history's rows
and the case summaries are those the run that decided it gave."""

from __future__ import annotations

import asyncio
import gc
import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agenteval.agents import CallableAdapter
from agenteval.criteria import resolve_metrics
from agenteval.errors import unwrap
from agenteval.runner import EvalSetRequest, run_evaluation
from agenteval.runner.driver import Journaled, Sink, Sinks, Totals, Written
from agenteval.runner.durable import Finished
from agenteval.schema import EvalConfig, EvalSet, EvalSetResult, RunSpec
from agenteval.store.case_rows import CaseRows, RowSpool
from agenteval.store.db import RunStore
from agenteval.store.journal import Journal
from agenteval.store.kept import KeptCase
from agenteval.store.output import unplace, write_outputs
from agenteval.verdicts.outcome import CaseOutcome

METRICS = resolve_metrics(EvalConfig(criteria={"tool_trajectory_avg_score": 1.0,
                                               "response_match_score": 0.5}))
RUN = "20260101-000000-aaaaaa"


def _set(n: int) -> EvalSet:
    return EvalSet.model_validate({"eval_set_id": "s", "eval_cases": [
        {"eval_id": f"c{i}", "conversation": [
            {"invocation_id": f"i{i}", "user_content": {"role": "user", "parts": [{"text": f"q{i}"}]},
             "final_response": {"role": "model", "parts": [{"text": f"a{i}" if i % 3 else "wrong"}]},
             "intermediate_data": {"tool_uses": [{"name": "look", "args": {"k": i}}]}}]}
        for i in range(n)]})


def _agent(text: str) -> dict[str, Any]:
    i = int(text[1:])
    if i == 4:
        raise RuntimeError("the agent raised")
    return {"response": f"a{i}", "tool_calls": [{"name": "look", "args": {"k": i}}]}


def _without(document: dict[str, Any], eval_ids: set[str]) -> dict[str, Any]:
    return {**document, **{key: [x for x in document[key] if x["eval_id"] not in eval_ids]
                           for key in ("eval_case_results", "summary")}}


def _timeless(o: CaseOutcome) -> Any:
    return (o.eval_id, o.status, [(r.eval_id, r.run_index, r.final_eval_status, r.error_message)
                                  for r in o.runs])


class Heard(Sink):
    """Every case's summary and rows as a sink hears them, and how many came as kept cases."""

    def __init__(self) -> None:
        self.summaries: list[Any] = []
        self.rows = RowSpool()
        self.kept = 0

    def on_case(self, outcome: CaseOutcome) -> None:
        self.summaries.append(outcome.summary)
        self.rows.add(outcome)

    def on_kept_case(self, case: KeptCase, runs: bool) -> None:
        self.kept += 1
        self.summaries.append(case.outcome().summary)  # the rebuilt case, as reports get it
        self.rows.add_rows(case.case_rows)


class Rebuilt(Sink):
    """A sink that does not know kept cases: it hears them as cases rebuilt (the default)."""

    def __init__(self) -> None:
        self.outcomes: list[CaseOutcome] = []

    def on_case(self, outcome: CaseOutcome) -> None:
        self.outcomes.append(outcome)


def _run(tmp_path: Path, name: str, eval_set: EvalSet, num_runs: int, journal: Journal,
         finished: Finished | None = None) -> tuple[dict[str, Any], Totals, Heard, Rebuilt]:
    path = tmp_path / f"{name}.json"
    totals, heard, rebuilt = Totals(), Heard(), Rebuilt()
    sinks: list[Sink | None] = [None if finished else Journaled(journal, "{}", len(eval_set.eval_cases)),
                                totals, heard, rebuilt]
    sink = Sinks(sinks)
    sink.on_start(RunSpec(run_id=RUN, command="eval"), 0)
    asyncio.run(run_evaluation(CallableAdapter(_agent), [EvalSetRequest(eval_set, METRICS)],
                               num_runs=num_runs, parallelism=3, sink=sink, finished=finished,
                               documents=lambda shell: Written([path], shell)))
    journal.flush()
    raw = path.read_bytes()
    # The bytes a document of these results has (a copied row placed twice would still parse).
    canonical = tmp_path / f"{name}.canonical.json"
    write_outputs([EvalSetResult.model_validate_json(raw)], canonical)
    assert raw == canonical.read_bytes()
    document = json.loads(raw)
    for key in ("eval_set_result_id", "eval_set_result_name", "creation_timestamp"):
        document.pop(key)
    return document, totals, heard, rebuilt


def _history(root: Path, rows: list[CaseRows] | None = None, journal: Journal | None = None) -> list[Any]:
    """The history's rows of the run (but its document's id), recorded from `rows`, else copied
    from the journal's verdicts, and the run row's sums."""
    store = RunStore(root)
    shell = EvalSetResult(eval_set_result_id="doc", eval_set_id="s")
    if journal is None:
        store.record_outcomes(shell, rows or [], root / "doc.json")
    else:
        assert journal.copyable(RUN, "s", 8)
        store.record_copied(shell, journal.path, RUN, root / "doc.json")
    with sqlite3.connect(store.path) as conn:
        return [sorted(r[1:] for r in conn.execute(f"SELECT * FROM {t}"))
                for t in ("cases", "case_metrics", "metric_summaries", "case_summaries")] + [conn.execute(
            "SELECT judge_model, num_runs, cases_total, cases_passed, cases_failed, cases_not_evaluated, "
            "agent_seconds, total_tokens, judge_prompt_tokens FROM runs").fetchall()]


def _kept_rows(history: list[Any], ran: set[str]) -> list[Any]:
    return [[r for r in table if r[0] not in ran] for table in history[:4]]


@pytest.mark.parametrize("num_runs", [1, 3])
def test_kept_cases_give_the_document_totals_and_rows_of_the_run_that_decided_them(
        tmp_path: Path, num_runs: int) -> None:
    journal = Journal(tmp_path)
    eval_set = _set(8)
    first, totals, heard, rebuilt = _run(tmp_path, "first", eval_set, num_runs, journal)
    keys = journal.finished_keys(RUN)
    assert len(keys) == 8 * num_runs
    rows = list(heard.rows)
    # What the history records, copied from the verdicts' rows by SQLite, is what it records
    # from the rows made of the cases themselves.
    recorded = _history(tmp_path / "from rows", rows)
    assert _history(tmp_path / "copied", journal=journal) == recorded
    assert not journal.copyable(RUN, "s", 9)  # a place without a verdict: not from the journal
    # Every case kept, then all but two (c2 runs again; c5 loses one run when num_runs > 1):
    # what runs again has times of its own, the rest is the first run's to the byte.
    for dropped in (set(), {("s", "c2", r) for r in range(num_runs)} | {("s", "c5", num_runs - 1)}):
        again, totals2, heard2, rebuilt2 = _run(tmp_path, "again", eval_set, num_runs, journal,
                                                Finished(journal, RUN, keys - dropped))
        ran = {e for _, e, _ in dropped}
        copied = _history(tmp_path / f"copied again {len(ran)}", journal=journal)
        assert _kept_rows(copied, ran) == _kept_rows(recorded, ran)
        assert _without(again, ran) == _without(first, ran)  # every byte but the document's id and time
        assert [_timeless(o) for o in rebuilt2.outcomes] == [_timeless(o) for o in rebuilt.outcomes]
        assert heard2.kept == 8 - len(ran)
        if not dropped:
            assert again == first
            assert vars(totals2.counter) == vars(totals.counter)
            assert heard2.summaries == heard.summaries
            assert list(heard2.rows) == rows
    journal.close()


class Blocks(Sink):
    """The kept cases as they come, block by block."""

    def __init__(self) -> None:
        self.blocks: list[list[str]] = []

    def on_kept_block(self, cases: Sequence[KeptCase], runs: bool) -> None:
        self.blocks.append([c.eval_id for c in cases])


def test_consecutive_kept_cases_are_told_as_one_block(tmp_path: Path) -> None:
    """Kept cases one after another reach a sink in one `on_kept_block`, in their order; a case
    run again, or one without a verdict, comes between blocks as its runs."""
    journal = Journal(tmp_path)
    eval_set = _set(8)
    first, _, _, _ = _run(tmp_path, "first", eval_set, 1, journal)
    with sqlite3.connect(journal.path) as conn:
        conn.execute("DELETE FROM journal_verdicts WHERE eval_id = 'c5'")
    blocks = Blocks()
    path = tmp_path / "again.json"
    keys = journal.finished_keys(RUN) - {("s", "c2", 0)}
    asyncio.run(run_evaluation(CallableAdapter(_agent), [EvalSetRequest(eval_set, METRICS)], parallelism=3,
                               sink=blocks, finished=Finished(journal, RUN, keys),
                               documents=lambda shell: Written([path], shell)))
    assert blocks.blocks == [["c0", "c1"], ["c3", "c4"], ["c6", "c7"]]
    assert _without(json.loads(path.read_bytes()), {"c2"})["eval_case_results"] == \
        _without(first, {"c2"})["eval_case_results"]
    journal.close()


class Unread(Sink):
    """Whether each kept case came with its rows not read yet."""

    def __init__(self) -> None:
        self.unread: list[bool] = []

    def on_kept_block(self, cases: Sequence[KeptCase], runs: bool) -> None:
        self.unread += [c.rows_from is not None for c in cases]


def test_kept_rows_are_read_by_the_documents_thread_not_the_runs(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A resumed run's kept cases reach the sinks with their rows unread (`store.kept.KeptRows`):
    the document's writer reads the frames on its own thread and writes the rows from where it
    read them, and the run's thread reads none (its reads, checks and copies were a third of
    its work on a resume of 10,000 cases); the document is the first run's."""
    from agenteval.store.journal_rows import RowsReader

    journal = Journal(tmp_path)
    eval_set = _set(8)
    first, _, _, _ = _run(tmp_path, "first", eval_set, 1, journal)
    readers: list[str] = []
    for name in ("_pread", "_pread_into"):
        real = getattr(RowsReader, name)
        monkeypatch.setattr(RowsReader, name, lambda self, at, size, real=real: (
            readers.append(threading.current_thread().name), real(self, at, size))[1])
    unread = Unread()
    path = tmp_path / "again.json"
    keys = journal.finished_keys(RUN) - {("s", "c2", 0)}
    asyncio.run(run_evaluation(CallableAdapter(_agent), [EvalSetRequest(eval_set, METRICS)], parallelism=3,
                               sink=unread, finished=Finished(journal, RUN, keys),
                               documents=lambda shell: Written([path], shell)))
    assert unread.unread == [True] * 7
    assert readers and all(name.startswith("agenteval-document") for name in readers)
    again = json.loads(path.read_bytes())
    assert _without(again, {"c2"})["eval_case_results"] == _without(first, {"c2"})["eval_case_results"]
    assert _without(again, {"c2"})["summary"] == _without(first, {"c2"})["summary"]
    journal.close()


class GcSeen(Sink):
    """Whether the cyclic GC was on as each block of kept cases came; fails at `fail_at`."""

    def __init__(self, fail_at: int = -1) -> None:
        self.seen: list[bool] = []
        self.fail_at = fail_at

    def on_kept_block(self, cases: Sequence[KeptCase], runs: bool) -> None:
        self.seen.append(gc.isenabled())
        if len(self.seen) == self.fail_at:
            raise RuntimeError("a sink failed")


@pytest.mark.parametrize("fail", [False, True])
def test_kept_blocks_are_told_with_the_gc_paused_and_it_is_back_after(tmp_path: Path, fail: bool) -> None:
    """A block of kept cases is read and told with the cyclic GC paused (its objects hold no
    cycles; the passes over them were a tenth of a kept case), and the GC is on again after
    it, whether the block was told or a sink failed."""
    journal = Journal(tmp_path)
    eval_set = _set(8)
    _run(tmp_path, "first", eval_set, 1, journal)
    keys = journal.finished_keys(RUN) - {("s", "c2", 0)}
    seen = GcSeen(fail_at=1 if fail else -1)
    assert gc.isenabled()
    run = run_evaluation(CallableAdapter(_agent), [EvalSetRequest(eval_set, METRICS)], parallelism=3,
                         sink=seen, finished=Finished(journal, RUN, keys),
                         documents=lambda shell: Written([tmp_path / "again.json"], shell))
    if fail:
        with pytest.raises(BaseException) as e:  # (raised in the executor's task group)
            asyncio.run(run)
        assert str(unwrap(e.value)) == "a sink failed"
    else:
        asyncio.run(run)
    assert seen.seen == ([False] if fail else [False, False]) and gc.isenabled()
    journal.close()


def test_a_case_without_a_verdict_is_read_run_by_run(tmp_path: Path) -> None:
    """Rows journaled by an agenteval before verdicts (or a case not yet told at a kill) are read
    as their digests and summarised again: the same document."""
    journal = Journal(tmp_path)
    eval_set = _set(5)
    first, totals, _, _ = _run(tmp_path, "first", eval_set, 1, journal)
    with sqlite3.connect(journal.path) as conn:
        conn.execute("DELETE FROM journal_verdicts WHERE eval_id IN ('c1', 'c3')")
    again, totals2, heard2, _ = _run(tmp_path, "again", eval_set, 1, journal,
                                     Finished(journal, RUN, journal.finished_keys(RUN)))
    assert again == first and vars(totals2.counter) == vars(totals.counter)
    assert heard2.kept == 3
    journal.close()


def _frames(journal: Journal) -> list[tuple[str, int, int, int]]:
    """Each case run's (eval id, run index, frame offset, frame size), in file order."""
    import sqlite3

    with sqlite3.connect(journal.path) as conn:
        return conn.execute("SELECT eval_id, run_index, row_at, row_size FROM journal_cases "
                            "ORDER BY row_at").fetchall()


def test_a_rows_file_cut_short_runs_the_cut_case_again(tmp_path: Path) -> None:
    """A torn tail (the rows file cut mid-row, as a machine that lost power may leave it): the
    case run whose frame is cut is not kept, runs again, and the document is the first run's."""
    from agenteval.store.journal_rows import rows_path

    journal = Journal(tmp_path)
    eval_set = _set(6)
    first, _, _, _ = _run(tmp_path, "first", eval_set, 1, journal)
    eval_id, _, at, size = _frames(journal)[-1]
    rows = rows_path(tmp_path, RUN)
    with rows.open("r+b") as f:
        f.truncate(at + size // 2)
    keys = journal.finished_keys(RUN)
    assert ("s", eval_id, 0) not in keys and len(keys) == 5
    import sqlite3

    with sqlite3.connect(journal.path) as conn:  # the summaries written after it are cut off too
        (whole,) = conn.execute("SELECT count(*) FROM journal_verdicts WHERE summary_at + summary_size <= ?",
                                (at,)).fetchone()
    assert whole < 5
    again, _, heard2, _ = _run(tmp_path, "again", eval_set, 1, journal, Finished(journal, RUN, keys))
    assert heard2.kept == whole  # the others are read run by run (their digests), summarised again
    assert _without(again, {eval_id}) == _without(first, {eval_id})
    ran = next(r for r in again["eval_case_results"] if r["eval_id"] == eval_id)
    assert ran["final_eval_status"] == next(r for r in first["eval_case_results"]
                                            if r["eval_id"] == eval_id)["final_eval_status"]
    journal.close()


def test_a_damaged_row_is_an_error_naming_the_rows_file(tmp_path: Path) -> None:
    from agenteval.errors import DataError
    from agenteval.store.journal_rows import rows_path

    journal = Journal(tmp_path)
    eval_set = _set(4)
    _run(tmp_path, "first", eval_set, 1, journal)
    eval_id, _, at, size = _frames(journal)[1]
    rows = rows_path(tmp_path, RUN)
    with rows.open("r+b") as f:  # one byte of its row changed: the checksum no longer matches
        f.seek(at + size // 2)
        byte = f.read(1)
        f.seek(at + size // 2)
        f.write(bytes([byte[0] ^ 1]))
    with pytest.raises(DataError, match=f"{rows.name}.*row of case '{eval_id}' .* is damaged"):
        _run(tmp_path, "again", eval_set, 1, journal, Finished(journal, RUN, journal.finished_keys(RUN)))
    journal.close()


def test_a_journal_made_before_rows_files_resumes_to_the_same_document(tmp_path: Path) -> None:
    """Rows held in SQLite (`result_json`, `digest`), as agenteval wrote them before rows files,
    are read from there: the resumed document is the first run's."""
    import sqlite3

    from agenteval.store.journal_rows import RowsReader, rows_path

    journal = Journal(tmp_path)
    eval_set = _set(5)
    first, totals, _, _ = _run(tmp_path, "first", eval_set, 2, journal)
    rows = rows_path(tmp_path, RUN)
    reader = RowsReader(rows)
    with sqlite3.connect(journal.path) as conn:
        for set_id, eval_id, run_index, at, size in conn.execute(
                "SELECT eval_set_id, eval_id, run_index, row_at, row_size FROM journal_cases").fetchall():
            found = reader.read(at, size, (set_id, eval_id, run_index))
            assert found is not None
            conn.execute("UPDATE journal_cases SET result_json = ?, digest = ?, row_at = NULL, "
                         "row_size = NULL WHERE eval_id = ? AND run_index = ?",
                         (unplace(found[0]).decode(), found[1], eval_id, run_index))
        for set_id, eval_id, at, size in conn.execute(
                "SELECT eval_set_id, eval_id, summary_at, summary_size FROM journal_verdicts").fetchall():
            found = reader.read(at, size, (set_id, eval_id, -1))
            assert found is not None
            conn.execute("UPDATE journal_verdicts SET summary = ?, summary_at = NULL WHERE eval_id = ?",
                         (unplace(found[0]), eval_id))
    reader.close()
    rows.unlink()
    again, totals2, heard2, _ = _run(tmp_path, "again", eval_set, 2, journal,
                                     Finished(journal, RUN, journal.finished_keys(RUN)))
    assert again == first and vars(totals2.counter) == vars(totals.counter) and heard2.kept == 5
    journal.close()


def test_a_rows_file_of_unplaced_rows_resumes_to_the_same_document(tmp_path: Path) -> None:
    """Frames written before rows were placed (`MAGIC_UNPLACED`: session 12's rows files, rows as
    `result_json` gives them) are placed when read: the resumed document is the first run's."""
    import sqlite3
    import struct
    import zlib

    from agenteval.store.journal_rows import MAGIC_UNPLACED, RowsReader, rows_path

    journal = Journal(tmp_path)
    eval_set = _set(5)
    first, totals, _, _ = _run(tmp_path, "first", eval_set, 2, journal)
    rows = rows_path(tmp_path, RUN)
    reader = RowsReader(rows)
    older = bytearray()
    with sqlite3.connect(journal.path) as conn:
        frames = [("journal_cases", "row", *f) for f in conn.execute(
            "SELECT eval_set_id, eval_id, run_index, row_at, row_size FROM journal_cases")] + \
            [("journal_verdicts", "summary", *f) for f in conn.execute(
                "SELECT eval_set_id, eval_id, -1, summary_at, summary_size FROM journal_verdicts")]
        for table, column, set_id, eval_id, run_index, at, size in frames:
            found = reader.read(at, size, (set_id, eval_id, run_index))
            assert found is not None
            key = json.dumps([set_id, eval_id, run_index], separators=(",", ":")).encode()
            row, digest = unplace(found[0]), (found[1] or "").encode()
            head = struct.pack("<4sIIII", MAGIC_UNPLACED, len(key), len(row), len(digest),
                               zlib.crc32(digest, zlib.crc32(row, zlib.crc32(key))))
            where = "eval_id = ?" + (" AND run_index = ?" if run_index >= 0 else "")
            conn.execute(f"UPDATE {table} SET {column}_at = ?, {column}_size = ? WHERE {where}",
                         (len(older), len(head + key + row + digest), eval_id,
                          *([run_index] if run_index >= 0 else [])))
            older += head + key + row + digest
    reader.close()
    rows.write_bytes(bytes(older))
    again, totals2, heard2, _ = _run(tmp_path, "again", eval_set, 2, journal,
                                     Finished(journal, RUN, journal.finished_keys(RUN)))
    assert again == first and vars(totals2.counter) == vars(totals.counter) and heard2.kept == 5
    journal.close()
