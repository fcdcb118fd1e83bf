"""Search, filter and sort over a run's cases (`reporting.case_query`)."""

from __future__ import annotations

import pytest

from agenteval.reporting.case_query import CaseQuery, error_type, facets, query_cases, run_facts
from agenteval.schema import MetricError
from agenteval.verdicts import outcomes
from tests.helpers import call
from tests.result_builders import case, result


def _facts():  # type: ignore[no-untyped-def]
    doc = result([
        case("a", {"m": 1.0, "t": 1.0}, response="Paris is sunny", calls=[call("lookup", q="paris")],
             duration=2.0, tokens=30),
        case("b", {"m": 0.2, "t": 0.0}, response="no idea", calls=[call("lookup", q="rome", n=2)],
             expected_calls=[call("lookup", q="paris")], duration=5.0, tokens=10),
        case("c", {"m": 0.4}, error="TimeoutError: the agent took too long"),
        case("d", {"m": 0.6, "t": 0.0}, response="sunny in Rome", duration=1.0),
    ])
    return run_facts(outcomes(doc))


def _ids(q: CaseQuery) -> list[str]:
    return [f.eval_id for f in query_cases(_facts(), q)]


def test_full_text_matches_prompts_answers_and_ids_case_insensitively() -> None:
    assert _ids(CaseQuery(text="SUNNY")) == ["a", "d"]
    assert _ids(CaseQuery(text="prompt b")) == ["b"]
    assert _ids(CaseQuery(text="nowhere")) == []


def test_filters_by_status_criterion_tool_argument_and_error() -> None:
    assert _ids(CaseQuery(status="passed")) == ["a"]
    assert _ids(CaseQuery(criterion="t")) == ["b", "d"]
    assert _ids(CaseQuery(tool="lookup")) == ["a", "b"]
    assert _ids(CaseQuery(argument="lookup.n")) == ["b"]
    assert _ids(CaseQuery(argument='lookup.q="rome"')) == ["b"]
    assert _ids(CaseQuery(argument="lookup.q=paris")) == ["a"]  # a bare value is a JSON string
    assert _ids(CaseQuery(error="TimeoutError")) == ["c"]
    assert _ids(CaseQuery(tool="lookup", status="failed")) == ["b"]


def test_score_range_is_inclusive_and_leaves_out_unscored_cases() -> None:
    assert _ids(CaseQuery(min_score=0.3, max_score=1.0)) == ["a", "d"]  # d: exactly 0.3
    assert _ids(CaseQuery(min_score=0.31)) == ["a"]
    assert _ids(CaseQuery(max_score=0.3)) == ["b", "d"]  # b: 0.1, d: 0.3; c has no score


@pytest.mark.parametrize(("sort", "descending", "expected"), [
    ("score", False, ["b", "d", "a", "c"]),
    ("score", True, ["a", "d", "b", "c"]),
    ("latency", True, ["b", "a", "d", "c"]),
    ("tokens", False, ["b", "a", "c", "d"]),
    ("position", True, ["d", "c", "b", "a"]),
])
def test_sorts_with_missing_measures_last(sort: str, descending: bool, expected: list[str]) -> None:
    assert _ids(CaseQuery(sort=sort, descending=descending)) == expected  # type: ignore[arg-type]


def test_facets_list_what_a_run_can_be_filtered_by() -> None:
    f = facets(_facts())
    assert f.criteria == ["m", "t"]
    assert f.tools == ["lookup"]
    assert f.arguments == ["lookup.n", "lookup.q"]
    assert f.errors == ["TimeoutError"]


def test_error_type_is_the_leading_exception_name() -> None:
    assert error_type("httpx.ConnectTimeout: boom") == "httpx.ConnectTimeout"
    assert error_type("ValueError") == "ValueError"
    assert error_type("the model refused") == "inference error"


def test_a_criterion_that_was_not_evaluated_is_tagged_so_not_as_an_error() -> None:
    doc = result([case("n", {"m": None, "t": 0.5}, metric_errors=[
        MetricError(metric_name="m", message="the criterion produced no score"),
        MetricError(metric_name="t", message="judge timed out", invocation_index=0)])])
    (facts,) = run_facts(outcomes(doc))
    assert facts.errors == {"m not evaluated", "t not evaluated on an invocation"}
    assert [f.eval_id for f in query_cases([facts], CaseQuery(error="m not evaluated"))] == ["n"]
