"""The text tool-call parser: tags, fences, plain JSON, lists, junk."""

from __future__ import annotations

from agenteval.models import ToolCallRequest, parse_tool_calls

ROLL = ToolCallRequest("roll_die", {"sides": 20})
TOOLS = {"roll_die", "check_prime"}


def test_json_fence_as_the_embedded_model_writes_it() -> None:
    text = '```json\n{\n  "name": "roll_die",\n  "arguments": {\n    "sides": 20\n  }\n}\n```'
    assert parse_tool_calls(text, TOOLS) == (ROLL,)


def test_plain_json_and_string_arguments() -> None:
    assert parse_tool_calls('{"name": "roll_die", "arguments": {"sides": 20}}') == (ROLL,)
    assert parse_tool_calls('{"name": "roll_die", "arguments": "{\\"sides\\": 20}"}') == (ROLL,)
    assert parse_tool_calls('{"name": "roll_die", "args": {"sides": 20}}') == (ROLL,)


def test_list_of_calls_and_openai_shapes() -> None:
    text = ('[{"name": "roll_die", "arguments": {"sides": 20}},'
            ' {"name": "check_prime", "arguments": {"nums": [3, 4]}}]')
    assert parse_tool_calls(text, TOOLS) == (ROLL, ToolCallRequest("check_prime", {"nums": [3, 4]}))
    wrapped = ('{"tool_calls": [{"id": "c1", "function":'
               ' {"name": "roll_die", "arguments": "{\\"sides\\": 20}"}}]}')
    assert parse_tool_calls(wrapped) == (ToolCallRequest("roll_die", {"sides": 20}, "c1"),)


def test_qwen_tags_win_and_calls_are_not_counted_twice() -> None:
    text = '<tool_call>\n{"name": "roll_die", "arguments": {"sides": 20}}\n</tool_call>'
    assert parse_tool_calls(text, TOOLS) == (ROLL,)
    fenced_twice = 'I will call it.\n```json\n{"name": "roll_die", "arguments": {"sides": 20}}\n```'
    assert parse_tool_calls(fenced_twice, TOOLS) == (ROLL,)


def test_embedded_in_prose_and_stray_braces() -> None:
    text = 'Sure! {"name": "roll_die", "arguments": {"sides": 20}} is what I need.'
    assert parse_tool_calls(text, TOOLS) == (ROLL,)
    # Seen from the embedded model: doubled braces around the call.
    assert parse_tool_calls('{{"name": "roll_die", "arguments": {"sides": 20}}}', TOOLS) == (ROLL,)
    several = ('```\n{"name": "roll_die", "arguments": {"sides": 6}}\n'
               '{"name": "roll_die", "arguments": {"sides": 8}}\n```')
    assert [c.args["sides"] for c in parse_tool_calls(several, TOOLS)] == [6, 8]


def test_junk_and_non_calls() -> None:
    assert parse_tool_calls("") == ()
    assert parse_tool_calls("The answer is 42.") == ()
    assert parse_tool_calls("```json\n{not json at all\n```") == ()
    assert parse_tool_calls('{"name": "Ann", "age": 31}') == ()  # an answer, not a call
    assert parse_tool_calls('{"name": "roll_die", "arguments": [20]}') == ()  # args not an object
    assert parse_tool_calls('{"name": "launch", "arguments": {}}', TOOLS) == ()  # undeclared tool


def test_declared_tool_without_arguments() -> None:
    assert parse_tool_calls('{"name": "roll_die"}', TOOLS) == (ToolCallRequest("roll_die", {}),)
    assert parse_tool_calls('{"name": "roll_die"}') == ()
