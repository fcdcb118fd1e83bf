"""A verdict's label probabilities, read from the log-probabilities of one judge reply.

The reply is JSON with its label in a `verdict` field (see `verdict.verdict_schema`); the labels
of every built-in question differ in their first letter (valid / invalid, meets / fails, safe /
unsafe, supported / unsupported / contradictory / not_applicable, same / different /
not_stated), so the label is decided at the first token of the verdict's value, and every
alternative token there that can start a label names one label. `label_distribution` sums, per
label, the probabilities of the alternatives the backend reported at that position and
renormalises over the labels.

Renormalising is what makes raw probabilities usable: llama.cpp's server (the embedded judge)
reports the model's probabilities before its JSON-schema grammar is applied (measured with the
xllamacpp build shipped here: alternatives such as `No` or `"same"` that the grammar forbids
carry most of the mass at some positions), and so do OpenAI-compatible servers that constrain
output. Dropping the tokens that cannot start a label and dividing by the rest is what the
grammar does before sampling, so the result is the constrained distribution of the label at
temperature 1.

Where labels share a first token (e.g. `not_met` / `not_applicable` after `not`), the position
after it is read along the generated path. A label with no token among the reported
alternatives is given the probability of the least likely alternative shown, an upper bound
for one token: with a short list of alternatives, a confidence is then never overstated.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence

from agenteval.models.base import TokenLogprob

__all__ = ["draw", "label_distribution", "side_probability"]

_VALUE_START = re.compile(r'(?<!\\)"verdict"\s*:\s*"')


def _offsets(tokens: Sequence[TokenLogprob]) -> list[int]:
    starts, at = [], 0
    for t in tokens:
        starts.append(at)
        at += len(t.token)
    return starts


def _labels_for(text: str, labels: tuple[str, ...]) -> list[str]:
    """Labels that a verdict value beginning with `text` can still become (the value's closing
    quote, and whatever follows it, may be part of the text)."""
    return [label for label in labels
            if (label + '"').startswith(text) or text.startswith(label + '"')]


def _exp(logprob: float) -> float:
    return math.exp(max(logprob, -745.0))


def label_distribution(tokens: Sequence[TokenLogprob], labels: tuple[str, ...],
                       field: str = "verdict") -> dict[str, float] | None:
    """Each label's probability at the reply's verdict (summing to 1), or None when the
    reply's tokens hold no `"verdict": "` value or no alternative there starts a label."""
    text = "".join(t.token for t in tokens)
    pattern = _VALUE_START if field == "verdict" else re.compile(rf'(?<!\\)"{re.escape(field)}"\s*:\s*"')
    starts = _offsets(tokens)
    for match in pattern.finditer(text):
        value_start = match.end()
        index = next((i for i, s in enumerate(starts)
                      if s <= value_start < s + len(tokens[i].token)), None)
        if index is None:
            continue
        mass = _mass(tokens, labels, index, text[starts[index]:value_start], "")
        if mass is not None:
            return mass
    return None


def _mass(tokens: Sequence[TokenLogprob], labels: tuple[str, ...], index: int, before: str,
          typed: str) -> dict[str, float] | None:
    """Label probabilities from the alternatives at token `index`. `before` is the part of that
    token that precedes the value (the opening quote, when one token holds both); `typed` is the
    value's text written by the tokens before `index`."""
    if index >= len(tokens):
        return None
    token = tokens[index]
    alternatives = dict(token.top)
    alternatives.setdefault(token.token, token.logprob)
    mass = dict.fromkeys(labels, 0.0)
    for candidate, logprob in alternatives.items():
        if not candidate.startswith(before) or len(candidate) == len(before):
            continue  # not this position's value text (a token ending before the value)
        value = typed + candidate[len(before):]
        matching = _labels_for(value, labels)
        if len(matching) == 1:
            mass[matching[0]] += _exp(logprob)
        elif len(matching) > 1 and candidate == token.token:
            # A prefix shared by several labels: how it ends is read at the next position.
            further = _mass(tokens, labels, index + 1, "", value)
            if further is not None:
                for label, p in further.items():
                    mass[label] += _exp(logprob) * p
    seen = [p for p in mass.values() if p > 0]
    if not seen:
        return None
    floor = min(_exp(lp) for lp in alternatives.values())
    if token.top:  # unseen labels: at most as likely as the least likely alternative shown
        candidates = set(_labels_for(typed, labels)) if typed else set(labels)
        for label in candidates:
            if mass[label] == 0.0:
                mass[label] = floor
    total = sum(mass.values())
    return {label: p / total for label, p in mass.items()}


def side_probability(distribution: dict[str, float], positive: frozenset[str], label: str) -> float:
    """The probability of the verdict's side (positive or negative labels) of `label`."""
    side = label in positive
    return sum(p for lab, p in distribution.items() if (lab in positive) == side)


def draw(distribution: dict[str, float], n: int, temperature: float, seed: int) -> list[str]:
    """`n` labels drawn from `distribution` sharpened to `temperature` (p ** (1 / T), as a
    sampler at that temperature would), by systematic sampling: the points (i + u) / n of the
    cumulative distribution, with one offset u from the seed. Each label then comes up
    floor(n p) or ceil(n p) times, never by luck far from its probability: drawn one by one, five
    samples of a 60/40 question give the 40% side the majority a third of the time, which made
    the vote noisier than the one greedy reply (measured: 31/39 against 34/39 right on
    final_response_match). Reproducible for a given seed; in order of the labels' first draw."""
    labels = sorted(label for label, p in distribution.items() if p > 0)
    top = max(distribution[label] for label in labels)
    weights = [math.exp((math.log(distribution[label]) - math.log(top)) / max(temperature, 1e-3))
               for label in labels]
    total = sum(weights)
    rng = random.Random(seed)
    offset = rng.random()
    out, cumulative, k = [], 0.0, 0
    for i in range(n):
        point = (i + offset) / n * total
        while k < len(labels) - 1 and cumulative + weights[k] <= point:
            cumulative += weights[k]
            k += 1
        out.append(labels[k])
    rng.shuffle(out)
    return out
