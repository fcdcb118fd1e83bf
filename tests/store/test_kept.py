"""The journal's verdicts and its streamed reading: a told case's record gives the history's rows
and the totals of the case itself; kept rows come back right in any order, in bounded memory;
a case run appended again drops its case's verdict; journals made before verdicts still resume."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from agenteval.runner.header import TotalsCounter
from agenteval.schema import EvalCaseResult, EvalStatus, MetricSummary, RunSpec
from agenteval.store import journal_reader
from agenteval.store.case_rows import case_rows, metric_rows, summary_rows
from agenteval.store.journal import Journal
from agenteval.store.kept import (
    DERIVED,
    KeptCase,
    Tally,
    derivable,
    derived_summaries,
    figures,
    read_record,
    tally,
    verdict_row,
)
from agenteval.store.output import placed_json, placed_summary
from agenteval.verdicts.aggregate import summarise_case
from agenteval.verdicts.outcome import CaseOutcome
from tests.store.test_digest import CASES

RUN = "20250101-000000-aaaaaa"


def _outcome(runs: list[EvalCaseResult]) -> CaseOutcome:
    return CaseOutcome("s", "mean", summarise_case(runs[0].eval_id, runs, "mean", False), runs)


@pytest.mark.parametrize("name", CASES)
def test_a_verdict_holds_the_rows_and_counts_of_its_case(name: str) -> None:
    outcome = _outcome(CASES[name])
    row = verdict_row(RUN, outcome, 7)
    _, _, eval_id, position, runs, status, seconds, tokens, *counts, summary, record, metrics, summaries = row
    assert (eval_id, position, runs, summary) == (outcome.eval_id, 7, len(CASES[name]),
                                                  placed_summary(outcome.summary))
    expected = case_rows(outcome)
    # The history's rows go beside the record (copied by SQLite), not into it; a case of one run
    # whose summary rows its metric rows give has no summary rows beside it (`DERIVED`).
    assert metrics == [m[1:] for m in expected.metrics]
    whole_summaries = [m[1:] for m in expected.summaries]
    derived = record.startswith(f"[{DERIVED},")
    assert derived == (len(CASES[name]) == 1 and derived_summaries(metrics) == whole_summaries)
    assert summaries == ([] if derived else whole_summaries)
    assert read_record(eval_id, status, runs, seconds, tokens, record) is None
    assert record == json.dumps([DERIVED if derived else 2, expected.error, list(expected.judges),
                                 expected.judge_tokens], separators=(",", ":"))
    beside = summaries
    kept = KeptCase("s", eval_id, "mean", [], [], summary, EvalStatus(status), runs, seconds, tokens,
                    Tally(*counts), record, beside=lambda: (metrics, beside))
    assert kept.case_rows == expected and kept.tally == tally(outcome.runs)
    whole, again = TotalsCounter(), TotalsCounter()
    whole.add(outcome)
    again.add_kept(kept)
    assert vars(again) == vars(whole)
    # A version-1 record (an agenteval before session 14) holds the rows in it.
    old = json.dumps([1, expected.error, metrics, [s[:-1] for s in whole_summaries], list(expected.judges),
                      expected.judge_tokens])
    assert read_record(eval_id, status, runs, seconds, tokens, old) == expected
    assert KeptCase("s", eval_id, "mean", [], [], summary, EvalStatus(status), runs, seconds, tokens,
                    Tally(*counts), old).case_rows == expected
    assert read_record(eval_id, status, runs, seconds, tokens, old.replace("[1,", "[4,", 1)) is None


@pytest.mark.parametrize("name", CASES)
def test_rows_read_from_the_fields_at_once_are_those_read_one_by_one(name: str) -> None:
    outcome = _outcome(CASES[name])
    assert metric_rows(outcome.runs) == [
        (r.run_index, m.metric_name, m.score, m.threshold, int(m.eval_status))
        for r in outcome.runs for m in r.overall_eval_metric_results]
    assert summary_rows(outcome.summary.metrics, outcome.runs) == [
        (m.metric_name, m.threshold, m.runs, m.scored_runs, m.passed_runs, m.mean, m.std, m.ci_low, m.ci_high,
         m.pass_at_k, m.pass_pow_k, int(m.eval_status), None) for m in outcome.summary.metrics]
    rows = metric_rows(outcome.runs) + [s[:-1] for s in summary_rows(outcome.summary.metrics, outcome.runs)]
    assert all(type(row[-1]) is int for row in rows)
    assert figures(outcome) == (outcome.duration(), outcome.tokens(), tally(outcome.runs))
    assert figures(outcome) is figures(outcome)  # (made once for the case told last)


_CHANGED: dict[str, object] = {"metric_name": "other", "threshold": 0.123, "runs": 2, "scored_runs": 7,
                               "passed_runs": 7, "mean": 0.5, "std": 0.25, "ci_low": -1.0, "ci_high": 2.0,
                               "pass_at_k": 0.5, "pass_pow_k": 0.5, "eval_status": EvalStatus.NOT_EVALUATED}


@pytest.mark.parametrize("name", [n for n in CASES if len(CASES[n]) == 1])
def test_a_summary_is_derivable_exactly_when_its_rows_are_the_derived_ones(name: str) -> None:
    """`derivable` (two reads of each summary's fields) says what comparing the two lists of
    rows says (but never of a criterion not evaluated, whose row keeps its reason): for the
    summaries as made, and with any one field of any one of them changed, one dropped, or two
    swapped."""
    outcome = _outcome(CASES[name])
    metrics, summaries = metric_rows(outcome.runs), outcome.summary.metrics

    def same(changed: list[object]) -> None:
        given: list[MetricSummary] = changed  # type: ignore[assignment]
        unevaluated = any(m.eval_status == EvalStatus.NOT_EVALUATED for m in given)
        assert derivable(metrics, given) == (
            derived_summaries(metrics) == summary_rows(given, outcome.runs) and not unevaluated)

    same(list(summaries))

    for i, summary in enumerate(summaries):
        for field, value in _CHANGED.items():
            other = summary.model_copy(update={field: value})
            if getattr(summary, field) != value:
                changed: list[object] = [*summaries[:i], other, *summaries[i + 1:]]
                same(changed)
                assert not derivable(metrics, changed)  # type: ignore[arg-type]
        same([*summaries[:i], *summaries[i + 1:]])
    if len(summaries) > 1 and summaries[0].metric_name != summaries[1].metric_name:
        same([summaries[1], summaries[0], *summaries[2:]])


def _result(i: int, run_index: int = 0, error: str | None = None) -> EvalCaseResult:
    return EvalCaseResult(eval_id=f"c{i}", eval_set_id="s", run_index=run_index, final_eval_status=1,
                          overall_eval_metric_results=[], eval_metric_result_per_invocation=[],
                          session_id=f"session {i}", error_message=error)


def _journal(tmp_path: Path) -> Journal:
    journal = Journal(tmp_path)
    journal.begin(RunSpec(run_id=RUN, command="eval", started=1.0), "{}", 100)
    return journal


def test_kept_rows_come_back_in_any_order_reading_ahead_a_bounded_number(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    journal = _journal(tmp_path)
    results = [_result(i) for i in range(40)]
    # Written far out of order: the last ten first, then the rest in order.
    journal.append_all(RUN, results[30:] + results[:30])
    for r in results:
        journal.append_verdict(RUN, _outcome([r]), int(r.eval_id[1:]))
    journal.flush()
    monkeypatch.setattr(journal_reader, "AHEAD", 4)
    reader = journal.reader()
    for r in results:  # asked in eval-set order
        got = reader.kept_case(RUN, "s", r.eval_id, 1, "mean")
        assert got is not None and got.rows == [placed_json(r, keep=False)]
        assert got.outcome().runs[0].session_id == r.session_id
        assert len(reader._streams[(RUN, "verdicts")]._buffer) <= 4
    # Each first run came with its verdict (one query): no stream of the case runs was stepped.
    assert (RUN, "cases") not in reader._streams
    assert reader.kept_case(RUN, "s", "c0", 2, "mean") is None  # verdict of another number of runs
    assert reader.kept_case(RUN, "s", "nope", 1, "mean") is None
    reader.close()
    journal.close()


@pytest.mark.parametrize("runs", [1, 3])
def test_kept_cases_read_together_are_those_read_one_by_one(tmp_path: Path, runs: int) -> None:
    """`kept_cases` of consecutive cases gives what `kept_case` gives each: a case without a
    verdict (c3), or unknown, None in its place, the others' rows and summaries the same."""
    journal = _journal(tmp_path)
    cases = [[_result(i, run) for run in range(runs)] for i in range(9)]
    journal.append_all(RUN, [r for case in cases for r in case])
    for i, case in enumerate(cases):
        if i != 3:
            journal.append_verdict(RUN, _outcome(case), i)
    journal.flush()
    ids = [case[0].eval_id for case in cases] + ["nope"]
    together = journal.reader().kept_cases(RUN, "s", ids, runs, "mean")
    one = journal.reader()
    alone = [one.kept_case(RUN, "s", i, runs, "mean") for i in ids]
    assert [k is None for k in together] == [i in (3, 9) for i in range(10)]
    assert [(k.rows, k.summary, k.status, k.tally, k.record) for k in together if k is not None] == \
        [(k.rows, k.summary, k.status, k.tally, k.record) for k in alone if k is not None]
    assert [k.rows for k in together if k is not None] == \
        [[placed_json(r, keep=False) for r in case] for i, case in enumerate(cases) if i != 3]
    journal.close()


def test_kept_cases_of_several_runs_read_their_later_runs_from_one_stream(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    journal = _journal(tmp_path)
    runs = [[_result(i, run) for run in range(3)] for i in range(20)]
    journal.append_all(RUN, [r for case in runs for r in case])
    for i, case in enumerate(runs):
        journal.append_verdict(RUN, _outcome(case), i)
    journal.flush()
    monkeypatch.setattr(journal_reader, "AHEAD", 4)
    reader = journal.reader()
    for case in runs:
        got = reader.kept_case(RUN, "s", case[0].eval_id, 3, "mean")
        assert got is not None and got.rows == [placed_json(r, keep=False) for r in case]
        # The later runs are taken from the stream, none looked up on its own: the first runs,
        # read with their verdicts, are not in it to fill its read-ahead.
        stream = reader._streams[(RUN, "cases")]
        assert not stream.firsts and not stream._elsewhere and len(stream._buffer) <= 4
    reader.close()
    journal.close()


def test_first_runs_read_before_any_kept_case_keep_coming_from_the_stream(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A case of several runs, some run again, reads its kept runs one by one (`kept`) before any
    # kept case is asked for: the stream made then has the first runs, and keeps giving them.
    journal = _journal(tmp_path)
    runs = [[_result(i, run) for run in range(2)] for i in range(20)]
    journal.append_all(RUN, [r for case in runs for r in case])
    for i, case in enumerate(runs):
        journal.append_verdict(RUN, _outcome(case), i)
    journal.flush()
    monkeypatch.setattr(journal_reader, "AHEAD", 4)
    reader = journal.reader()
    assert reader.kept(RUN, ("s", "c0", 0)) is not None
    for case in runs[1:]:
        got = reader.kept_case(RUN, "s", case[0].eval_id, 2, "mean")
        assert got is not None and got.rows == [placed_json(r, keep=False) for r in case]
        stream = reader._streams[(RUN, "cases")]
        assert stream.firsts and not stream._elsewhere and len(stream._buffer) <= 4
    reader.close()
    journal.close()


def test_a_case_run_appended_again_drops_its_cases_verdict(tmp_path: Path) -> None:
    journal = _journal(tmp_path)
    journal.append_all(RUN, [_result(0, error="flaky"), _result(1)])
    for i in range(2):
        journal.append_verdict(RUN, _outcome([_result(i)]), i)
    journal.close()
    resumed = Journal(tmp_path)  # another process retries c0's error, and is killed before telling it
    resumed.claim(RUN)
    resumed.append_all(RUN, [_result(0)])
    reader = resumed.reader()
    assert reader.kept_case(RUN, "s", "c0", 1, "mean") is None  # its runs are read one by one
    assert reader.kept_case(RUN, "s", "c1", 1, "mean") is not None
    reader.close()
    resumed.close()


def test_a_journal_made_before_verdicts_resumes_and_gains_the_table(tmp_path: Path) -> None:
    journal = _journal(tmp_path)
    journal.append_all(RUN, [_result(0)])
    journal.close()
    with sqlite3.connect(journal.path) as conn:
        conn.execute("DROP TABLE journal_verdicts")
    reader = Journal(tmp_path).reader()  # read-only: the table is not added
    assert reader.kept_case(RUN, "s", "c0", 1, "mean") is None
    kept = reader.kept(RUN, ("s", "c0", 0))
    assert kept is not None and kept.session_id == "session 0"
    reader.close()
    again = Journal(tmp_path)
    again.claim(RUN)
    again.append_verdict(RUN, _outcome([_result(0)]), 0)  # this agenteval adds it when it writes
    again.flush(RUN)
    reader = again.reader()
    assert reader.kept_case(RUN, "s", "c0", 1, "mean") is not None
    reader.close()
    again.forget(RUN)
    with sqlite3.connect(journal.path) as conn:
        assert conn.execute("SELECT count(*) FROM journal_verdicts").fetchone() == (0,)


@pytest.mark.parametrize("name", CASES)
def test_runs_told_behind_them_are_not_digested_and_rebuild_from_their_rows(
        tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A case run is digested only when its case's verdict does not come while it waits in the
    writer's window (`UNSETTLED`): a case told as its runs are queued, or a few runs later (told
    out of the order its runs finished), is resumed from its verdict and rebuilt
    (`KeptCase.outcome`) from its rows parsed, the same case; a run pushed out of the window, or
    still waiting when the writer takes its batch, keeps its digest."""
    from agenteval.store import journal_writer
    from agenteval.store.digest import digest_json
    from agenteval.store.journal import _rows
    from agenteval.store.journal_writer import UNSETTLED

    # The writer takes a batch only when flushed here: its own times (the begun run's row taken
    # at once, a batch taken `FLUSH_SECONDS` after its first row) fell, on a loaded machine,
    # between a run's append and its verdict, which then had its run digested.
    monkeypatch.setattr(journal_writer, "FLUSH_SECONDS", 3600.0)
    journal = _journal(tmp_path)
    journal.flush()
    runs, outcome = CASES[name], _outcome(CASES[name])
    journal._writer(RUN).put(_rows(RUN, runs, "s"), [verdict_row(RUN, outcome, 0)])  # (one `put`)
    late, early = _result(99), _result(98)  # finished in this order, told in the other
    journal.append(RUN, "s", late)
    journal.append(RUN, "s", early)
    journal.append_verdict(RUN, _outcome([early]), 1)
    journal.append_verdict(RUN, _outcome([late]), 2)
    pushed = [_result(60 + i) for i in range(UNSETTLED + 1)]  # the first is pushed out
    for r in pushed:
        journal.append(RUN, "s", r)
    journal.flush()  # the rest are taken unsettled
    for i, r in enumerate(pushed):
        journal.append_verdict(RUN, _outcome([r]), 3 + i)
    journal.flush()
    reader = journal.reader()
    kept = reader.kept_case(RUN, "s", outcome.eval_id, len(runs), "mean")
    assert kept is not None and kept.digests == [None] * len(runs)
    assert kept.rows == [placed_json(r, keep=False) for r in runs]
    rebuilt = kept.outcome()
    assert rebuilt.runs == runs and rebuilt.summary == outcome.summary
    for r, digested in ((late, False), (early, False), *((r, True) for r in pushed)):
        case = reader.kept_case(RUN, "s", r.eval_id, 1, "mean")
        assert case is not None and case.digests == [digest_json(r) if digested else None], r.eval_id
        assert case.outcome().runs == [r]
    reader.close()
    journal.close()
