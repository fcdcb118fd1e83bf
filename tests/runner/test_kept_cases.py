"""A resumed run's kept cases: a case whose runs were all kept goes to the sinks as the journal's
verdict of it (`Sink.on_kept_case`), and the streamed document, the totals, the history's rows
and the case summaries are those the run that decided it gave."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agenteval.agents import CallableAdapter
from agenteval.criteria import resolve_metrics
from agenteval.runner import EvalSetRequest, run_evaluation
from agenteval.runner.driver import Journaled, Sink, Sinks, Totals, Written
from agenteval.runner.durable import Finished
from agenteval.schema import EvalConfig, EvalSet, RunSpec
from agenteval.store.case_rows import RowSpool
from agenteval.store.journal import Journal
from agenteval.store.kept import KeptCase
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
    document = json.loads(path.read_bytes())
    for key in ("eval_set_result_id", "eval_set_result_name", "creation_timestamp"):
        document.pop(key)
    return document, totals, heard, rebuilt


@pytest.mark.parametrize("num_runs", [1, 3])
def test_kept_cases_give_the_document_totals_and_rows_of_the_run_that_decided_them(
        tmp_path: Path, num_runs: int) -> None:
    journal = Journal(tmp_path)
    eval_set = _set(8)
    first, totals, heard, rebuilt = _run(tmp_path, "first", eval_set, num_runs, journal)
    keys = journal.finished_keys(RUN)
    assert len(keys) == 8 * num_runs
    rows = list(heard.rows)
    journaled = journal.case_rows(RUN, "s", 8)  # what the history records, from the verdicts
    assert journaled is not None and list(journaled) == rows
    assert journal.case_rows(RUN, "s", 9) is None  # a place without a verdict: not from the journal
    # Every case kept, then all but two (c2 runs again; c5 loses one run when num_runs > 1):
    # what runs again has times of its own, the rest is the first run's to the byte.
    for dropped in (set(), {("s", "c2", r) for r in range(num_runs)} | {("s", "c5", num_runs - 1)}):
        again, totals2, heard2, rebuilt2 = _run(tmp_path, "again", eval_set, num_runs, journal,
                                                Finished(journal, RUN, keys - dropped))
        ran = {e for _, e, _ in dropped}
        again_rows = journal.case_rows(RUN, "s", 8)
        assert again_rows is not None
        assert [r for r in again_rows if r.eval_id not in ran] == [r for r in rows if r.eval_id not in ran]
        assert _without(again, ran) == _without(first, ran)  # every byte but the document's id and time
        assert [_timeless(o) for o in rebuilt2.outcomes] == [_timeless(o) for o in rebuilt.outcomes]
        assert heard2.kept == 8 - len(ran)
        if not dropped:
            assert again == first
            assert vars(totals2.counter) == vars(totals.counter)
            assert heard2.summaries == heard.summaries
            assert list(heard2.rows) == rows
    journal.close()


def test_a_case_without_a_verdict_is_read_run_by_run(tmp_path: Path) -> None:
    """Rows journaled by an agenteval before verdicts (or a case not yet told at a kill) are read
    as their digests and summarised again: the same document."""
    journal = Journal(tmp_path)
    eval_set = _set(5)
    first, totals, _, _ = _run(tmp_path, "first", eval_set, 1, journal)
    import sqlite3

    with sqlite3.connect(journal.path) as conn:
        conn.execute("DELETE FROM journal_verdicts WHERE eval_id IN ('c1', 'c3')")
    again, totals2, heard2, _ = _run(tmp_path, "again", eval_set, 1, journal,
                                     Finished(journal, RUN, journal.finished_keys(RUN)))
    assert again == first and vars(totals2.counter) == vars(totals.counter)
    assert heard2.kept == 3
    journal.close()
