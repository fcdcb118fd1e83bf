"""The words of criteria's reasons: numbers, tool calls, thresholds, and the overall reason of a
case from its invocations' reasons.

A reason is made where the criterion decides (see `CriterionResult.reason`), so these helpers
only format; they decide nothing. Numbers are written as reports write scores (`:.4g`); calls as
`name(arg=value, ...)` with JSON values; invocations are numbered from 0, as every report numbers
them; calls within an invocation from 1 ("call 2 of 3").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from agenteval.schema import FunctionCall


def num(value: float | None) -> str:
    """A score or count as reports write it: 4 significant digits; `-` for None."""
    return "-" if value is None else f"{value:.4g}"


# `json.dumps(value, ensure_ascii=False)` builds an encoder per call; these are what it uses.
_JSON = json.JSONEncoder(ensure_ascii=False)
_json_string = json.encoder.encode_basestring
# `_JSON.encode`'s C encoder, made once (`encode` makes one per call, with a function and a dict
# of markers: half its time for a call's small arguments). Without markers it keeps no state
# between calls, so threads may share it; it then cannot tell a cycle, which it meets as deep
# recursion: whatever it raises, `_JSON.encode` is asked instead (`value_text`).
_c_make_encoder: Any = getattr(json.encoder, "c_make_encoder", None)  # None without `_json`
_encode = (_c_make_encoder(None, _JSON.default, _json_string, None, _JSON.key_separator,
                           _JSON.item_separator, False, False, True)
           if _c_make_encoder is not None else None)


def value_text(value: Any) -> str:
    """An argument value: JSON for containers and strings, repr otherwise."""
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, (dict, list)):
        if _encode is not None:
            try:
                return "".join(_encode(value, 0))
            except Exception:  # a cycle, or a value JSON has not: `encode` says which
                pass
        return _JSON.encode(value)
    return repr(value)


def call_text(call: FunctionCall) -> str:
    """`name(arg=value, ...)`."""
    args = call.args
    if not args:
        return f"{call.name}()"
    # A list, not a generator, for `join`; a plain string's JSON without `value_text`'s call.
    text = ", ".join([f"{k}={_json_string(v) if v.__class__ is str else value_text(v)}"
                      for k, v in args.items()])
    return f"{call.name}({text})"


def held_to(score: float, threshold: float, what: str = "score") -> str:
    """`score 0.5 < threshold 1` or `score 1 ≥ threshold 1`: the comparison that decides the
    status (a score passes when it is at least the threshold)."""
    sign = "≥" if score >= threshold else "<"
    return f"{what} {score:.4g} {sign} threshold {threshold:.4g}"  # as `num` writes them


def deciding(scores: Sequence[float | None]) -> int | None:
    """The invocation that decided a mean: the first with the lowest score; None when none was
    scored."""
    best: int | None = None
    for i, s in enumerate(scores):
        if s is not None and (best is None or s < (scores[best] or 0.0)):
            best = i
    return best


def mean_reason(score: float | None, threshold: float, scores: Sequence[float | None],
                reasons: Sequence[str | None], what: str = "mean") -> str | None:
    """The overall reason of a criterion averaged over invocations: the mean against the
    threshold and, when it failed or there are several invocations, the lowest-scoring
    invocation with its own reason. None without a score."""
    return mean_reason_of(score, threshold, scores,
                          lambda i: reasons[i] if i < len(reasons) else None, what)


def mean_reason_of(score: float | None, threshold: float, scores: Sequence[float | None],
                   reason_of: Callable[[int], str | None], what: str = "mean") -> str | None:
    """`mean_reason`, with invocation `i`'s reason given by `reason_of(i)`, asked only for the
    invocation the reason names (a reason may be made when asked)."""
    if score is None:
        return None
    head = held_to(score, threshold, what)
    if len(scores) == 1:
        why = reason_of(0)
        return f"{head}: {why}" if why else head
    low = deciding(scores)
    if low is None:
        return head
    n = len(scores) - scores.count(None)
    if score >= threshold and scores[low] == score:  # every invocation scored the same
        return f"{head} over {n} invocations"
    why = reason_of(low)
    return (f"{head} over {n} invocations; lowest: invocation {low} ({num(scores[low])})"
            + (f": {why}" if why else ""))


__all__ = ["call_text", "deciding", "held_to", "mean_reason", "mean_reason_of", "num", "value_text"]
