"""Two stored runs compared case by case in SQLite, and their cases' summaries read by eval id."""

from pathlib import Path

import pytest

from agenteval.store import RunStore, record_run
from agenteval.store.case_pairs import coded_cases, pairs_of
from agenteval.verdicts.outcome import outcomes
from tests.result_builders import case, result

# A code per criterion: which sides have it, whether its status changed (the rule is the caller's).
_CODE = ("CASE WHEN was = 0 THEN 'a' WHEN now = 0 THEN 'r' WHEN was_status = now_status THEN 's' "
         "ELSE 'd' END")


def _runs(tmp_path: Path) -> tuple[RunStore, RunStore, RunStore]:
    a = result([case("gone", {"m": 1.0}), case("x", {"m": 0.5, "n": 1.0}), case("y", {"m": 0.0}),
                case("old", {"m": 0.2})], result_id="ra")
    b = result([case("y", {"m": 1.0}), case("new", {"m": 0.9}), case("x", {"m": 0.4}, error="boom")],
               result_id="rb", created=a.creation_timestamp + 1)
    record_run(tmp_path / "one", [a, b])
    record_run(tmp_path / "a", [a])
    record_run(tmp_path / "b", [b])
    return RunStore(tmp_path / "one"), RunStore(tmp_path / "a"), RunStore(tmp_path / "b")


def test_cases_come_in_the_comparisons_order_with_a_code_a_gating_criterion(tmp_path: Path) -> None:
    one, store_a, store_b = _runs(tmp_path)
    coded = coded_cases(one, "ra", one, "rb", _CODE, {})
    # (x errored in the candidate: no criteria there; its baseline's two are removed)
    assert [(i, was, now, "".join(sorted(c))) for i, was, now, c in coded] == [
        ("y", 2, 1, "d"), ("new", None, 1, "a"), ("x", 1, 2, "rr"), ("gone", 1, None, "r"),
        ("old", 2, None, "r")]
    assert coded_cases(store_a, "ra", store_b, "rb", _CODE, {}) == coded  # (two databases, attached)
    assert coded_cases(one, "rb", one, "rb", _CODE, {})[0] == ("y", 1, 1, "s")  # (a run with itself)
    assert coded_cases(RunStore(tmp_path / "none"), "ra", one, "rb", _CODE, {}) == []
    assert coded_cases(one, "ra", RunStore(tmp_path / "none"), "rb", _CODE, {}) == []


def test_cases_are_read_by_eval_id_from_one_or_two_stores(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import agenteval.store.case_pairs as case_pairs

    one, store_a, store_b = _runs(tmp_path)
    before = {c.eval_id: c.summary for c in outcomes(one.summary("ra"))}
    after = {c.eval_id: c.summary for c in outcomes(one.summary("rb"))}
    ids = ["x", "gone", "nope", "new", "y"]
    want = [(i, before.get(i), after.get(i)) for i in ids]
    assert pairs_of(one, "ra", one, "rb", ids) == want
    monkeypatch.setattr(case_pairs, "MAX_LOOKUP", 2)  # (read in chunks)
    assert pairs_of(store_a, "ra", store_b, "rb", ids) == want
    assert pairs_of(one, "ra", one, "rb", []) == []
