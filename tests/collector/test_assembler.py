"""Assembling live spans into conversations: when one is done, and the memory caps."""

from __future__ import annotations

import pytest

from agenteval.collector import Assembler, Limits
from agenteval.collector.scoring import JudgeBudget, sampled
from agenteval.tracing.otlp_json import OtlpSpan


def span(trace: int, n: int, parent: int | None = None, session: str | None = None,
         ended: bool = True) -> OtlpSpan:
    return OtlpSpan(trace_id=f"{trace:032x}", span_id=f"{n:016x}",
                    parent_id=None if parent is None else f"{parent:016x}", name=f"s{n}", start=float(n),
                    end=float(n) + 1 if ended else None,
                    attributes={"session.id": session} if session else {},
                    status="unset", error=None)


def test_a_session_is_done_after_its_quiet_period_with_every_trace_of_it() -> None:
    a = Assembler(Limits(quiet_seconds=5))
    a.add([span(1, 2, parent=1, session="s"), span(1, 1, session="s")], now=0.0)
    a.add([span(2, 3, session="s")], now=3.0)  # a second turn of the same session
    assert a.done(now=7.9) == []  # 4.9 s after its last span
    (conv,) = a.done(now=8.0)
    assert conv.key == "s" and sorted(s.span_id[-1] for s in conv.spans) == ["1", "2", "3"]
    assert conv.last_span_at == 3.0 and a.held == 0 and a.open_traces == 0


def test_a_trace_without_a_session_is_done_when_its_root_ends() -> None:
    a = Assembler(Limits(quiet_seconds=60))
    a.add([span(1, 2, parent=1)], now=0.0)
    assert a.done(now=1.0) == []  # the root has not arrived
    a.add([span(1, 1, ended=False)], now=1.0)
    assert a.done(now=2.0) == []  # arrived, not ended
    a.add([span(1, 1)], now=2.0)
    (conv,) = a.done(now=2.0)
    assert conv.key == f"trace {1:032x}"


def test_a_late_span_of_a_conversation_already_scored_is_dropped_and_counted() -> None:
    a = Assembler(Limits(quiet_seconds=5, max_traces=2))
    a.add([span(1, 1, session="s"), span(2, 2)], now=0.0)
    assert {c.key for c in a.done(now=5.0)} == {"s", f"trace {2:032x}"}
    # the exporter's last batch, after the quiet period: no second conversation of a fragment
    a.add([span(1, 3, parent=1, session="s"), span(2, 4, parent=2)], now=9.0)
    assert a.done(now=0, everything=True) == [] and (a.late_spans, a.held, a.open_traces) == (2, 0, 0)
    a.add([span(3, 5, session="s")], now=10.0)  # a new trace of the session: the user came back
    (conv,) = a.done(now=15.0)
    assert conv.key == "s" and a.late_spans == 2
    a.add([span(4, 6), span(5, 7)], now=16.0)
    a.done(now=16.0)  # the traces taken are remembered up to max_traces: trace 1's is forgotten
    a.add([span(1, 8, session="s")], now=17.0)
    assert a.open_traces == 1 and a.late_spans == 2


def test_caps_evict_the_least_recently_fed_trace_whole() -> None:
    a = Assembler(Limits(quiet_seconds=60, max_spans=10, max_traces=3, max_spans_per_trace=4))
    for t in range(1, 5):
        a.add([span(t, k + 1, session=f"s{t}") for k in range(3)], now=float(t))
    assert a.open_traces == 3 and a.held == 9 and (a.evicted_traces, a.evicted_spans) == (1, 3)
    a.add([span(2, 10 + k, session="s2") for k in range(3)], now=9.0)  # over its own cap of 4
    assert a.dropped_spans == 2 and a.held == 10
    a.add([span(5, 20, session="s5")], now=10.0)  # 11 spans: the oldest fed (trace 3) goes
    assert {c.key for c in a.done(now=0, everything=True)} == {"s2", "s4", "s5"}


def test_a_flood_of_100000_spans_never_holds_more_than_the_cap() -> None:
    a = Assembler(Limits(quiet_seconds=3600, max_spans=1000, max_traces=200))
    peak = 0
    for batch in range(1000):
        a.add([span(batch * 10 + t + 1, k + 1, parent=k or None, session=f"s{batch}-{t}")
               for t in range(10) for k in range(10)], now=float(batch))
        peak = max(peak, a.held)
        assert a.open_traces <= 200
    assert peak <= 1000 and a.evicted_spans + a.held == 100_000


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="max_spans"):
        Limits(max_spans=0)
    with pytest.raises(ValueError, match="quiet_seconds"):
        Limits(quiet_seconds=-1)


def test_sampling_is_a_stable_share_by_key() -> None:
    keys = [f"session-{i}" for i in range(2000)]
    kept = [k for k in keys if sampled(k, 0.25)]
    assert 400 < len(kept) < 600
    assert kept == [k for k in keys if sampled(k, 0.25)]
    assert all(sampled(k, 1.0) for k in keys) and not any(sampled(k, 0.0) for k in keys)


def test_the_judge_budget_refills_over_a_minute() -> None:
    now = [0.0]
    budget = JudgeBudget(6, clock=lambda: now[0])
    assert budget.take(4) and not budget.take(3) and budget.take(2)
    now[0] = 30.0  # half a minute: 3 calls back
    assert not budget.take(4) and budget.take(3)


def test_a_batch_sent_again_is_held_once_and_a_different_span_under_a_held_id_is_kept() -> None:
    # an exporter retries a batch it got no answer for: the conversation must still read
    a = Assembler(Limits(quiet_seconds=5))
    batch = [span(1, 2, parent=1, session="s"), span(1, 1, session="s")]
    a.add(batch, now=0.0)
    a.add([span(1, 2, parent=1, session="s"), span(1, 1, session="s")], now=1.0)
    assert a.held == 2 and a.duplicate_spans == 2
    changed = span(1, 2, parent=1, session="s")
    changed.name = "other"
    a.add([changed], now=2.0)  # not a retry: kept, for the reading to name
    (conv,) = a.done(now=0, everything=True)
    assert sorted(s.name for s in conv.spans) == ["other", "s1", "s2"] and a.duplicate_spans == 2
