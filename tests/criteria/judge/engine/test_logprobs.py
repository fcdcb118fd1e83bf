"""A verdict's label probabilities from log-probabilities, and samples drawn from them."""

import math

import pytest

from agenteval.criteria.judge.engine.logprobs import draw, label_distribution, side_probability
from agenteval.models import TokenLogprob

VALID = ("valid", "invalid")


def tok(token: str, p: float, *top: tuple[str, float]) -> TokenLogprob:
    """A token of probability `p` with alternatives given as (token, probability)."""
    return TokenLogprob(token, math.log(p), tuple((t, math.log(q)) for t, q in top))


def reply(*label_tokens: TokenLogprob, prefix: str = ' "') -> list[TokenLogprob]:
    return [tok("{\n", 1.0), tok(' "', 1.0), tok("verdict", 1.0), tok('":', 1.0),
            tok(prefix, 1.0), *label_tokens, tok('",', 1.0), tok(' "rationale": "ok"}', 1.0)]


def test_renormalised_over_the_tokens_that_can_start_a_label() -> None:
    # Raw probabilities (before the grammar): "No" and "same" cannot start a label and are dropped.
    label = tok("valid", 0.3, ("No", 0.4), ("valid", 0.3), ("in", 0.1), ("invalid", 0.1), ("same", 0.05))
    dist = label_distribution(reply(label), VALID)
    assert dist == pytest.approx({"valid": 0.6, "invalid": 0.4})
    assert side_probability(dist or {}, frozenset({"valid"}), "invalid") == pytest.approx(0.4)


def test_a_token_that_holds_the_opening_quote_and_the_label() -> None:
    tokens = [tok('{"verdict":', 1.0), tok(' "valid', 0.8, (' "valid', 0.8), (' "inv', 0.2), (" true", 0.5)),
              tok('"}', 1.0)]
    assert label_distribution(tokens, VALID) == pytest.approx({"valid": 0.8, "invalid": 0.2})


def test_a_shared_first_token_is_read_along_the_written_path() -> None:
    labels = ("not_met", "not_applicable", "met")
    first = tok("not", 0.5, ("not", 0.5), ("met", 0.5))
    second = tok("_met", 0.6, ("_met", 0.6), ("_applicable", 0.2))
    dist = label_distribution(reply(first, second), labels)
    assert dist == pytest.approx({"met": 0.5, "not_met": 0.375, "not_applicable": 0.125})


def test_a_label_not_among_the_alternatives_gets_the_least_likely_ones_probability() -> None:
    label = tok("valid", 0.9, ("valid", 0.9), ("True", 0.06), ("Yes", 0.04))
    dist = label_distribution(reply(label), VALID) or {}
    assert dist["invalid"] == pytest.approx(0.04 / 0.94)  # an upper bound, never overconfident


def test_only_the_written_token_and_no_alternatives() -> None:
    assert label_distribution(reply(tok("invalid", 0.7)), VALID) == {"valid": 0.0, "invalid": 1.0}


def test_notes_first_replies_and_escaped_quotes_in_notes() -> None:
    tokens = [tok('{"reply_does": "says \\"verdict\\": \\"safe\\" to the judge", "verdict": "', 1.0),
              tok("uns", 0.7, ("uns", 0.7), ("safe", 0.3)), tok('afe"}', 1.0)]
    assert label_distribution(tokens, ("safe", "unsafe")) == pytest.approx({"safe": 0.3, "unsafe": 0.7})


@pytest.mark.parametrize("tokens", [
    [],
    [tok('{"rationale": "no verdict field"}', 1.0)],
    [tok('{"verdict": "', 1.0)],  # cut off at the label
    reply(tok("maybe", 1.0, ("maybe", 1.0))),  # no alternative starts a label
])
def test_no_distribution(tokens: list[TokenLogprob]) -> None:
    assert label_distribution(tokens, VALID) is None


def test_draws_are_reproducible_and_follow_the_temperature() -> None:
    dist = {"valid": 0.7, "invalid": 0.3}
    assert draw(dist, 5, 0.7, seed=42) == draw(dist, 5, 0.7, seed=42)
    sharpened = 0.7 ** (1 / 0.7) / (0.7 ** (1 / 0.7) + 0.3 ** (1 / 0.7))
    assert draw(dist, 1000, 0.7, seed=1).count("valid") in (int(1000 * sharpened), int(1000 * sharpened) + 1)
    assert set(draw({"valid": 1.0, "invalid": 0.0}, 10, 0.7, seed=3)) == {"valid"}


def test_systematic_draws_never_stray_far_from_the_probabilities() -> None:
    # Five draws of a 60/40 question: always 3 or more for the likelier side (independent
    # draws would give it 2 or fewer a third of the time at T=1).
    for seed in range(200):
        assert draw({"valid": 0.6, "invalid": 0.4}, 5, 1.0, seed).count("valid") == 3
    counts = {draw({"a": 0.5, "b": 0.3, "c": 0.2}, 10, 1.0, seed).count("b") for seed in range(200)}
    assert counts == {3}
