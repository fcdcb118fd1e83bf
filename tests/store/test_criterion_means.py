"""`RunStore.criterion_means`: the trend charts' per-run criterion means from one grouped query,
the same as averaging each run's case summaries."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval.schema import EvalStatus
from agenteval.store import RunStore, record_run
from tests.result_builders import case, result


def test_criterion_means_equal_the_mean_of_case_summaries(tmp_path: Path) -> None:
    docs = [result([case("a", {"m": 0.2, "t": 1.0, "token_usage_v1": 5.0}), case("b", {"m": 0.7, "t": None}),
                    case("c", {"m": 1.0}, run_index=0), case("c", {"m": 0.0}, run_index=1)], "r1"),
            result([case("a", {"m": 1.0})], "r2", created=1_700_000_100.0)]
    for d in docs:
        record_run(tmp_path, [d])
    store = RunStore(tmp_path)
    got = store.criterion_means(["r1", "r2", "missing"])
    for run_id in ("r1", "r2"):
        summary = store.summary(run_id)
        expected: dict[str, list[float]] = {}
        for c in summary.summary:
            for m in c.metrics:
                if m.mean is not None and m.eval_status != EvalStatus.INFORMATIONAL:
                    expected.setdefault(m.metric_name, []).append(m.mean)
        assert got[run_id] == pytest.approx({k: sum(v) / len(v) for k, v in expected.items()})
    assert got["r1"]["m"] == pytest.approx((0.2 + 0.7 + 0.5) / 3) and got["missing"] == {}
    assert RunStore(tmp_path / "none").criterion_means(["x"]) == {"x": {}}
