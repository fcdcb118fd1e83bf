"""Multi-agent turns: who handled each turn, and handoffs that go nowhere.

A handoff is ADK's `transfer_to_agent(agent_name=TO)` call, made by the agent handing off (its
event's `author`); its call id is volatile and never compared. Every framework's traces are read
into the same form (see `tracing.agents`), so these criteria work on any of them.

The agent that *handled* a turn is the target of the turn's last handoff; without one, the
author of the turn's last event; without any event, the agent that handled the turn before (a
conversation continues with the agent it was left with, as ADK's runner does). The first turn
of a conversation without handoffs or events has no known handler.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agenteval.criteria.base import AgentUse, Criterion, CriterionResult, EvalContext, InvocationScore, mean
from agenteval.criteria.reasons import mean_reason
from agenteval.schema import Invocation, InvocationEvents

TRANSFER = "transfer_to_agent"


@dataclass(frozen=True)
class Handoff:
    """Control passed from one agent to another within a turn."""

    from_agent: str
    to_agent: str


@dataclass(frozen=True)
class Step:
    """One event of a turn: who did it, and which handoff it is (None: something else)."""

    author: str
    handoff: Handoff | None


def steps(inv: Invocation) -> list[Step]:
    """The turn's events with an author, in order (none for the legacy `tool_uses` form, which
    records no authors)."""
    data = inv.intermediate_data
    if not isinstance(data, InvocationEvents):
        return []
    out = []
    for e in data.invocation_events:
        parts = e.content.parts if e.content and e.content.parts else []
        calls = [p.function_call for p in parts if p.function_call is not None]
        transfer = next((c for c in calls if c.name == TRANSFER), None)
        target = (transfer.args or {}).get("agent_name") if transfer is not None else None
        handoff = Handoff(e.author, str(target)) if target is not None else None
        out.append(Step(e.author, handoff))
    return out


def handoffs(inv: Invocation) -> list[Handoff]:
    """The turn's handoffs, in order."""
    return [s.handoff for s in steps(inv) if s.handoff is not None]


def handlers(invocations: Sequence[Invocation]) -> list[str | None]:
    """The agent that handled each turn (see the module docstring)."""
    out: list[str | None] = []
    current: str | None = None
    for inv in invocations:
        done = steps(inv)
        moves = [s.handoff for s in done if s.handoff is not None]
        if moves:
            current = moves[-1].to_agent
        elif done:
            current = done[-1].author
        out.append(current)
    return out


class TurnAgentMatch(Criterion):
    """Each turn handled by the agent the expected turn was handled by, however control got there."""

    reusable = True  # nothing of a case is kept

    requires_expected = True

    def agent_use(self) -> AgentUse:
        return "always"

    def score(self, ctx: EvalContext) -> CriterionResult:
        expected = list(ctx.expected or [])
        want, got = handlers(expected), handlers(ctx.actual)
        if not any(want):
            return CriterionResult(None, [], error="the expected turns name no agent (their events "
                                   "carry no author): there is no handler to match")
        per: list[InvocationScore] = []
        for i, (w, g) in enumerate(zip(want, got, strict=False)):
            if w is None:
                per.append(InvocationScore(None, reason=f"turn {i}: no expected handler"))
            elif w == g:
                per.append(InvocationScore(1.0, reason=f"turn {i}: handled by {w}, as expected"))
            else:
                who = g if g is not None else "no agent that can be named"
                per.append(InvocationScore(0.0, reason=f"turn {i}: handled by {who}, expected {w}"))
        overall = mean([p.score for p in per])
        return CriterionResult(overall, per, reason=mean_reason(
            overall, self.criterion.threshold, [p.score for p in per], [p.reason for p in per]))


def idle_or_looping(inv: Invocation) -> str | None:
    """Why a turn's handoffs went nowhere, or None: a ping-pong (control handed back to an
    agent that handed it off earlier in the turn, with nothing done in between by the agents
    in the loop), or an agent handed control that handed it on without doing anything."""
    done = steps(inv)
    for i, s in enumerate(done):
        if s.handoff is None:
            continue
        nxt = next((t for t in done[i + 1:] if t.author == s.handoff.to_agent), None)
        if nxt is not None and nxt.handoff is not None:
            target = s.handoff.to_agent
            onward = nxt.handoff.to_agent
            if onward == s.author:
                return (f"ping-pong: {s.author} handed off to {target}, which handed straight back "
                        f"to {onward}")
            return f"{target} was handed control by {s.author} and handed it on to {onward} doing nothing"
    return None


class HandoffLoops(Criterion):
    """No handoff loops (ping-pong) and no agent handed control that did nothing with it."""

    reusable = True  # nothing of a case is kept

    def score(self, ctx: EvalContext) -> CriterionResult:
        per = []
        for i, inv in enumerate(ctx.actual):
            problem = idle_or_looping(inv)
            moves = len(handoffs(inv))
            per.append(InvocationScore(0.0, reason=f"turn {i}: {problem}") if problem else
                       InvocationScore(1.0, reason=f"turn {i}: {moves} handoff{'' if moves == 1 else 's'}, "
                                       "none idle or looping"))
        overall = mean([p.score for p in per])
        return CriterionResult(overall, per, reason=mean_reason(
            overall, self.criterion.threshold, [p.score for p in per], [p.reason for p in per]))


__all__ = ["TRANSFER", "Handoff", "HandoffLoops", "Step", "TurnAgentMatch", "handlers", "handoffs",
           "idle_or_looping", "steps"]
