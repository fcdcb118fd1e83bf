"""One user turn recorded as an eval-set invocation: the one place a turn becomes an `Invocation`,
for inference in eval runs (and so for `authoring.record_case`) and for the web's chat."""

from __future__ import annotations

import time

from agenteval.agents.base import TurnResult
from agenteval.runner.values import make_model_safe
from agenteval.schema import Content, Invocation, InvocationEvents
from agenteval.tracing.figures import Figures


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 3)


def record_turn(session_id: str, index: int, user_content: Content, turn: TurnResult | None,
                seconds: float, figures: Figures | None, warnings: list[str]) -> Invocation:
    """The `index`-th turn of the session `session_id` as an invocation (`{session_id}-{index}`):
    the user's message, and what the agent answered and did (`turn`; None: it failed before
    answering, and the invocation holds no answer and no events).

    Its times come from its spans, the one source of the figures (`figures`, those of its
    invocation span): the span's length, else the `seconds` measured around the turn; the
    model and tool seconds of the spans where they timed any, else those the adapter measured
    itself. What the agent produced is made JSON-safe here, where it enters, so that writing
    it can never fail on one value (`runner.values`); what was lost is said in `warnings`.
    """
    elapsed = figures.duration if figures is not None and figures.duration is not None else seconds
    model_s = turn.model_seconds if turn else None
    tool_s = turn.tool_seconds if turn else None
    if figures is not None and (figures.model_seconds is not None or figures.tool_seconds is not None):
        model_s, tool_s = figures.model_seconds, figures.tool_seconds
    invocation = Invocation(
        invocation_id=f"{session_id}-{index}",
        user_content=user_content,
        final_response=turn.final_response if turn else None,
        intermediate_data=InvocationEvents(invocation_events=turn.events if turn else []),
        creation_timestamp=time.time(),
        duration=round(elapsed, 3),
        model_duration=_rounded(model_s),
        tool_duration=_rounded(tool_s),
        app_details=turn.app_details if turn else None,
    )
    make_model_safe(invocation, f"invocation {index}", warnings)
    return invocation


__all__ = ["record_turn"]
