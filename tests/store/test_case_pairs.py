"""Two stored runs' case summaries read side by side a case at a time."""

from pathlib import Path

from agenteval.store import RunStore, record_run
from agenteval.store.case_pairs import case_pairs, summary_pairs
from agenteval.verdicts.outcome import outcomes
from tests.result_builders import case, result


def test_the_pairs_come_in_the_comparisons_order_as_the_summaries_read_whole(tmp_path: Path) -> None:
    a = result([case("gone", {"m": 1.0}), case("x", {"m": 0.5, "n": 1.0}), case("y", {"m": 0.0}),
                case("old", {"m": 0.2})], result_id="ra")
    b = result([case("y", {"m": 1.0}), case("new", {"m": 0.9}), case("x", {"m": 0.4, "n": 1.0},
                                                                        error="boom")], result_id="rb")
    b.creation_timestamp = a.creation_timestamp + 1
    record_run(tmp_path, [a])
    record_run(tmp_path, [b])
    store = RunStore(tmp_path)
    before = {c.eval_id: c.summary for c in outcomes(store.summary("ra"))}
    after = {c.eval_id: c.summary for c in outcomes(store.summary("rb"))}
    assert list(case_pairs(store, "ra", "rb")) == [
        ("y", before["y"], after["y"]), ("new", None, after["new"]), ("x", before["x"], after["x"]),
        ("gone", before["gone"], None), ("old", before["old"], None)]
    assert summary_pairs("ra", str(tmp_path / "x.json"), tmp_path) is None  # (a file: read with its runs)
    assert next(case_pairs(store, "rb", "rb")) == ("y", after["y"], after["y"])


def test_two_stores_runs_pair_in_the_same_order_and_cases_are_read_by_eval_id(tmp_path: Path) -> None:
    from agenteval.store.case_pairs import pairs_of, stored_pairs

    a = result([case("gone", {"m": 1.0}), case("x", {"m": 0.5, "n": 1.0}), case("y", {"m": 0.0})],
               result_id="ra")
    b = result([case("y", {"m": 1.0}), case("new", {"m": 0.9}), case("x", {"m": 0.4})], result_id="rb")
    b.creation_timestamp = a.creation_timestamp + 1
    record_run(tmp_path / "one", [a, b])
    record_run(tmp_path / "a", [a])
    record_run(tmp_path / "b", [b])
    one, store_a, store_b = RunStore(tmp_path / "one"), RunStore(tmp_path / "a"), RunStore(tmp_path / "b")
    joined = list(case_pairs(one, "ra", "rb"))
    assert [p[0] for p in joined] == ["y", "new", "x", "gone"]
    assert list(stored_pairs(store_a, "ra", store_b, "rb")) == joined
    assert list(stored_pairs(one, "ra", one, "rb")) == joined
    by_id = {p[0]: p for p in joined}
    assert pairs_of(store_a, "ra", store_b, "rb", ["x", "gone", "nope", "new"]) == [
        by_id["x"], by_id["gone"], ("nope", None, None), by_id["new"]]
    assert pairs_of(one, "ra", one, "rb", []) == []
