"""One turn becomes one invocation, the same way for eval runs and the web's chat."""

import math

from agenteval.agents.base import TurnResult
from agenteval.runner.turns import record_turn
from agenteval.schema import Content, FunctionCall, InvocationEvent, Part
from agenteval.tracing.figures import Figures


def _figures(duration: float | None, model: float | None, tool: float | None) -> Figures:
    return Figures(duration=duration, model_seconds=model, tool_seconds=tool, model_calls=1, tool_calls=1,
                   input_tokens=None, output_tokens=None, cached_tokens=None)


def _turn() -> TurnResult:
    call = Part(function_call=FunctionCall(name="lookup", args={"order": "12", "weight": math.nan}))
    return TurnResult(final_response=Content.from_text("shipped"),
                      events=[InvocationEvent(author="agent", content=Content(parts=[call], role="model"))],
                      model_seconds=0.51234, tool_seconds=0.2)


def test_a_turn_without_spans_keeps_what_was_measured_around_it_and_is_made_json_safe() -> None:
    warnings: list[str] = []
    user = Content.from_text("where is 12?", role="user")
    inv = record_turn("s", 2, user, _turn(), 1.23456, None, warnings)
    assert inv.invocation_id == "s-2" and inv.final_response is not None
    assert (inv.duration, inv.model_duration, inv.tool_duration) == (1.235, 0.512, 0.2)
    assert inv.tool_calls()[0].args == {"order": "12", "weight": "NaN"}
    assert warnings and warnings[0].startswith("invocation 2")


def test_the_spans_are_the_one_source_of_the_figures_where_they_timed_anything() -> None:
    user = Content.from_text("hi", role="user")
    inv = record_turn("s", 0, user, _turn(), 9.0, _figures(2.0, 1.5, None), [])
    assert (inv.duration, inv.model_duration, inv.tool_duration) == (2.0, 1.5, None)
    untimed = record_turn("s", 0, user, _turn(), 9.0, _figures(None, None, None), [])
    assert (untimed.duration, untimed.model_duration, untimed.tool_duration) == (9.0, 0.512, 0.2)


def test_a_turn_that_failed_before_answering_holds_no_answer() -> None:
    inv = record_turn("s", 0, Content.from_text("hi", role="user"), None, 0.5, None, [])
    assert inv.final_response is None and inv.intermediate_data is not None
    assert (inv.duration, inv.model_duration, inv.tool_duration, inv.app_details) == (0.5, None, None, None)
