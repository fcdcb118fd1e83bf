"""bench/lab_prefix_tokens.py --compare reads the hallucination cross-checks' probabilities too:
a change to the checks' examples leaves the first question's figures as they were."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from lab_prefix_tokens import _check_side


def _row(gold_positive: bool, *same: float) -> dict:
    items = ["sentence 1"] + [f"sentence {n}, cross-check" for n in range(1, len(same) + 1)]
    probs = [{"supported": 0.9}] + [{"same": p, "different": 1 - p} for p in same]
    return {"gold_positive": gold_positive, "items": items, "label_probs": probs}


def test_the_weakest_check_stands_for_the_case_on_the_gold_side() -> None:
    assert _check_side(_row(True, 0.9, 0.6)) == 0.6
    assert abs(_check_side(_row(False, 0.9, 0.6)) - 0.4) < 1e-9


def test_a_case_without_a_cross_check_has_no_figure() -> None:
    assert _check_side(_row(True)) is None
    assert _check_side({"gold_positive": True, "items": [None], "label_probs": [{"valid": 0.7}]}) is None
