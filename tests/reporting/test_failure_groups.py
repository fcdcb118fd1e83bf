"""Failure groups (`reporting.failure_groups`) and the run matrix (`reporting.matrix`)."""

from __future__ import annotations

from agenteval.reporting.case_query import run_facts
from agenteval.reporting.failure_groups import call_reasons, facts_and_groups, failure_groups
from agenteval.reporting.matrix import matrix_columns, run_matrix
from agenteval.schema import EvalStatus, MetricError
from agenteval.verdicts import outcomes
from tests.helpers import call
from tests.result_builders import case, result

T = "tool_trajectory_avg_score"


def test_call_reasons_pair_calls_by_name_in_order() -> None:
    expected = [call("lookup", q="paris", n=1), call("book", day="mon")]
    actual = [call("lookup", q="rome", extra=True), call("weather")]
    assert call_reasons(expected, actual) == [
        "`lookup.q` differs", "`lookup.n` missing", "`lookup.extra` unexpected", "`book` not called",
        "`weather` called, not expected"]
    assert call_reasons(expected, expected) == []


def test_failing_cases_are_grouped_by_reason_largest_first() -> None:
    want = [call("lookup", q="paris")]
    doc = result([
        case("a", {T: 0.0}, calls=[call("lookup", q="rome")], expected_calls=want),
        case("b", {T: 0.0, "safety_v1": 0.0}, calls=[call("lookup", q="oslo")], expected_calls=want),
        case("c", {T: 1.0}, calls=want, expected_calls=want),  # passed: in no group
        case("d", {"safety_v1": 0.0}),
        case("e", {T: 1.0}, error="TimeoutError: slow"),
        case("f", {"response_match_score": None},
             metric_errors=[MetricError(metric_name="response_match_score", message="no reference")]),
    ])
    groups = {g.reason: g.eval_ids for g in failure_groups(outcomes(doc))}
    assert groups == {
        "`lookup.q` differs": ["a", "b"],  # the trajectory criterion is explained by the call
        "`safety_v1` failed": ["b", "d"],
        "TimeoutError": ["e"],
        "`response_match_score` not evaluated": ["f"],  # one group, never also "failed"
    }
    reasons = [g.reason for g in failure_groups(outcomes(doc))]
    assert reasons[:2] == ["`lookup.q` differs", "`safety_v1` failed"]
    # The explorer's one pass gives the same groups and the search's facts.
    assert facts_and_groups(outcomes(doc)) == (run_facts(outcomes(doc)), failure_groups(outcomes(doc)))


def test_a_criterion_not_evaluated_without_an_error_is_grouped_as_not_evaluated() -> None:
    doc = result([case("a", {"response_match_score": None})])
    assert [(g.reason, g.eval_ids) for g in failure_groups(outcomes(doc))] == [
        ("`response_match_score` not evaluated", ["a"])]


def test_a_trajectory_failure_without_a_call_difference_is_its_own_group() -> None:
    doc = result([case("a", {T: 0.0})])
    assert [(g.reason, g.eval_ids) for g in failure_groups(outcomes(doc))] == [(f"`{T}` failed", ["a"])]


def test_the_matrix_diffs_each_cell_against_its_left_neighbour() -> None:
    run1 = result([case("a", {"m": 1.0}, response="Paris"), case("b", {"m": 1.0}, response="same")], "r1")
    run2 = result([case("a", {"m": 0.0}, response="Rome", calls=[call("lookup", q="x")]),
                   case("b", {"m": 1.0}, response="same")], "r2")
    run3 = result([case("a", {"m": 0.0}, response="Rome", calls=[call("lookup", q="x")]),
                   case("c", {"m": 1.0})], "r3")
    rows = run_matrix([run1, run2, run3])
    assert [r.eval_id for r in rows] == ["a", "b", "c"]
    a = rows[0].cells
    assert [c is not None and c.changed for c in a] == [False, True, False]
    assert a[1] is not None and a[1].status == EvalStatus.FAILED and a[1].score == 0.0
    assert a[1].diff == ["- Paris", "+ Rome", '+ call lookup(q="x")']
    assert rows[1].cells[2] is None and rows[2].cells[:2] == [None, None]
    assert [r.eval_id for r in run_matrix([run1, run2, run3], changed_only=True)] == ["a"]


def test_the_matrix_has_a_column_per_run_index_of_a_repeated_run() -> None:
    """Repeats are columns of their own ("run · #k"), each cell its own run's verdict and output;
    a change between two repeats of one run counts for "only changed"; a run index can be picked."""
    once = result([case("a", {"m": 1.0}, response="Paris"), case("b", {"m": 1.0}, response="same")], "r1")
    twice = result([case("a", {"m": 1.0}, response="Paris", run_index=0),
                    case("a", {"m": 0.0}, response="Rome", run_index=1),
                    case("b", {"m": 1.0}, response="same", run_index=0),
                    case("b", {"m": 1.0}, response="same", run_index=1)], "r2")
    assert [(c.document, c.run_index, c.run_indices) for c in matrix_columns([once, twice])] == [
        (0, 0, 1), (1, 0, 2), (1, 1, 2)]
    rows = run_matrix([once, twice])
    a = rows[0].cells
    assert [c is not None and c.changed for c in a] == [False, False, True]
    assert a[2] is not None and a[2].status == EvalStatus.FAILED and a[2].score == 0.0
    assert a[1] is not None and a[1].status == EvalStatus.PASSED  # its own run, not the case's verdict
    assert a[2].diff == ["- Paris", "+ Rome"]
    assert [r.eval_id for r in run_matrix([once, twice], changed_only=True)] == ["a"]
    assert [r.eval_id for r in run_matrix([once, twice], changed_only=True, run_index=0)] == []
    picked = run_matrix([once, twice], run_index=1)
    assert [(c.document, c.run_index) for c in matrix_columns([once, twice], 1)] == [(0, 0), (1, 1)]
    assert picked[0].changed and picked[0].cells[1] is not None and picked[0].cells[1].answer == ["Rome"]
