"""The argument-level diff of expected and actual tool calls (the one thing the web computes
itself), and the path rule for names from URLs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agenteval.web.paths import child, inside, plain_name
from agenteval.web.views import argument_diff
from tests.helpers import call


def test_calls_are_paired_by_tool_in_order_and_arguments_compared_as_values() -> None:
    expected = [call("find", area="centre"), call("book", people=2, time="19:00"), call("book", people=4)]
    actual = [call("book", people=2.0, time="20:00"), call("find", area="centre"), call("pay", amount=3)]
    out = [pair.model_dump() for pair in argument_diff(expected, actual)]
    assert out[0] == {"tool": "find", "expected_index": 0, "actual_index": 1, "status": "same",
                      "arguments": []}
    time = {"name": "time", "expected": "19:00", "actual": "20:00", "missing": None}
    assert out[1] == {"tool": "book", "expected_index": 1, "actual_index": 0, "status": "different",
                      "arguments": [time]}
    assert out[2]["status"] == "missing" and out[2]["expected_index"] == 2 and out[2]["actual_index"] is None
    assert out[3] == {"tool": "pay", "expected_index": None, "actual_index": 2, "status": "unexpected",
                      "arguments": []}


def test_an_argument_on_one_side_only_says_which_side_lacks_it() -> None:
    (diff,) = [pair.model_dump() for pair in argument_diff([call("f", a=1, b="1")], [call("f", b=1, c=None)])]
    assert diff["status"] == "different"
    assert diff["arguments"] == [
        {"name": "a", "expected": 1, "actual": None, "missing": "actual"},
        {"name": "b", "expected": "1", "actual": 1, "missing": None},  # "1" != 1, as the criterion says
        {"name": "c", "expected": None, "actual": None, "missing": "expected"}]


@pytest.mark.parametrize(("name", "ok"), [("smoke", True), ("my-set_1.v2", True), ("..", False), (".", False),
                                          ("a/b", False), ("a\\b", False), ("", False), ("/etc", False),
                                          ("a..b", False), (".hidden", False), ("x" * 129, False)])
def test_plain_names(name: str, ok: bool) -> None:
    assert plain_name(name) is ok


def test_a_child_must_stay_inside_its_root_with_links_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "out.evalset.json").write_text("{}")
    os.symlink(tmp_path / "out.evalset.json", root / "leak.evalset.json")
    os.symlink(root, tmp_path / "alias")
    assert child(root, "smoke", ".evalset.json") == root / "smoke.evalset.json"
    assert child(root, "leak", ".evalset.json") is None
    assert child(root, "..") is None
    assert inside(tmp_path / "alias" / "x", root) and not inside(tmp_path / "rootx", root)


def test_case_rows_and_views_carry_the_stored_reasons_not_recomputed_ones() -> None:
    from agenteval.schema import MetricReason
    from agenteval.verdicts import outcomes, summarise
    from agenteval.web.views import case_rows, case_view
    from tests.result_builders import case, result

    failed = case("a", {"response_match_score": 0.2})
    failed.reasons = [MetricReason(metric_name="response_match_score", invocation_index=None,
                                   reason="a distinctive overall reason"),
                      MetricReason(metric_name="response_match_score", invocation_index=0,
                                   reason="a distinctive reason of invocation 0")]
    old = case("b", {"response_match_score": 0.3})  # written without reasons
    doc = summarise(result([failed, old]))
    rows = case_rows(doc.eval_case_results[:10])
    assert rows[0].metrics[0].reason == "a distinctive overall reason"
    assert rows[1].metrics[0].reason == "score 0.3 < threshold 0.5"  # the one fallback, for old documents
    by_id = {c.eval_id: c for c in outcomes(doc)}
    view = case_view(doc, by_id["a"], failed, None)
    assert view.invocations[0].scores[0].reason == "a distinctive reason of invocation 0"
    assert view.summary[0].reason == "a distinctive overall reason"
