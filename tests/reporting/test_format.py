"""Values, tool calls and scores as every report writes them."""

from agenteval.reporting.format import format_call, format_calls, format_score, format_value
from agenteval.schema import Content, FunctionCall, Invocation


def test_values_calls_and_scores() -> None:
    assert (format_value("Lisbon"), format_value({"a": 1}), format_value(3)) == ('"Lisbon"', '{"a": 1}', "3")
    assert format_call(FunctionCall(name="lookup", args={"order": "12", "n": 2})) == 'lookup(order="12", n=2)'
    assert format_calls(None) == "" and format_calls(Invocation(user_content=Content.from_text("hi"))) == ""
    assert (format_score(None), format_score(0.123456), format_score(1.0)) == ("-", "0.1235", "1")
