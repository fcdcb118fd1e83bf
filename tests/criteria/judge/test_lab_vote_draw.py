"""bench/lab_vote_draw.py's probability that a verdict's vote comes out right is the engine's
draw averaged over its seed: a gate built on it compares prompts without the draw's coin flips."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from lab_vote_draw import TEMPERATURE, expected, vote_share

from agenteval.criteria.judge.engine.logprobs import draw


def _engine_share(distribution: dict[str, float], label: str, seeds: int = 4000) -> float:
    wins = 0
    for seed in range(seeds):
        votes = draw(distribution, 5, TEMPERATURE, seed)
        wins += votes.count(label) > len(votes) / 2
    return wins / seeds


def test_the_share_is_the_engine_draws_over_seeds() -> None:
    for p in (0.45, 0.5, 0.52, 0.56, 0.62):
        distribution = {"valid": p, "invalid": 1 - p}
        for label in distribution:
            assert abs(vote_share(distribution, label) - _engine_share(distribution, label)) < 0.03


def test_two_labels_follow_the_systematic_sampling_rule() -> None:
    # q is p sharpened to the temperature; the label wins with probability 5q - 2 in [0, 1].
    for p in (0.3, 0.48, 0.53, 0.58, 0.7):
        a, b = p ** (1 / TEMPERATURE), (1 - p) ** (1 / TEMPERATURE)
        q = a / (a + b)
        assert abs(vote_share({"valid": p, "invalid": 1 - p}, "valid") - min(1, max(0, 5 * q - 2))) < 1e-3


def test_the_expected_count_adds_the_cases_shares() -> None:
    rows = {
        "sure": {"label": "valid", "label_probs": [{"valid": 0.9, "invalid": 0.1}], "num_samples": 5,
                 "correct": True},
        "coin": {"label": "invalid", "label_probs": [{"valid": 0.5, "invalid": 0.5}], "num_samples": 5,
                 "correct": False},
        "none": {"label": "valid", "label_probs": [None], "num_samples": 5, "correct": True},
    }
    mean, sd = expected(rows, sorted(rows))
    assert abs(mean - 2.5) < 1e-3 and abs(sd - 0.5) < 1e-3
