"""Calibrating a judge: the threshold chosen from judged labelled cases."""

from pathlib import Path

from agenteval.calibration import Calibration, Outcome
from agenteval.criteria.judge.labelled import load_labelled

BENCH_SET = Path(__file__).resolve().parents[2] / "bench" / "judge_set"


def test_a_threshold_is_the_lowest_confidence_that_reaches_the_target() -> None:
    c = Calibration("m", target=0.9)
    cases = load_labelled(BENCH_SET / "safety.json")[:10]
    # sure and right, unsure and wrong: a threshold between the two separates them
    c.outcomes = [Outcome(case, correct, conf) for case, (correct, conf) in zip(
        cases, [(True, 1.0)] * 6 + [(False, 0.6), (True, 0.6), (False, 0.4), (True, 0.8)], strict=True)]
    c.choose()
    assert c.accuracy == 0.8 and (c.threshold, c.agreement, c.coverage) == (0.8, 1.0, 0.7)
