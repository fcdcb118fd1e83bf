import random
from typing import Any

import pytest

from agenteval.schema import (
    Content,
    EvalSet,
    FunctionCall,
    IntermediateData,
    Invocation,
    InvocationEvent,
    InvocationEvents,
    Part,
    UsageMetadata,
)
from agenteval.schema.invocation import USAGE_COUNTS, call_count, model_calls, usage_counts

CAMEL = {
    "evalSetId": "s",
    "evalCases": [{
        "evalId": "c1",
        "conversation": [{
            "invocationId": "i1",
            "userContent": {"role": "user", "parts": [{"text": "roll"}]},
            "finalResponse": {"role": "model", "parts": [{"text": "4", "thought": False}]},
            "intermediateData": {"invocationEvents": [
                {"author": "a", "invocationIndex": 0,
                 "content": {"parts": [{"functionCall": {"id": "x", "name": "roll_die",
                                                         "args": {"sides": 6}}}]}},
                {"author": "a", "content": {"parts": [{"functionResponse": {
                    "id": "x", "name": "roll_die", "response": {"result": 4}}}]}},
            ]},
        }],
        "sessionInput": {"appName": "app", "userId": "u", "state": {"k": 1}},
    }],
}


def test_camel_case_keys_load_and_dump_snake_case() -> None:
    s = EvalSet.model_validate(CAMEL)
    inv = s.eval_cases[0].conversation[0]  # type: ignore[index]
    assert isinstance(inv.intermediate_data, InvocationEvents)
    assert [c.name for c in inv.tool_calls()] == ["roll_die"]
    dumped = s.model_dump(exclude_none=True)
    assert dumped["eval_cases"][0]["session_input"]["app_name"] == "app"
    assert EvalSet.model_validate(dumped) == s


def test_union_resolution_matches_adk() -> None:
    legacy = Invocation.model_validate({"user_content": {"parts": [{"text": "q"}]},
                                        "intermediate_data": {"tool_uses": [{"name": "f"}]}})
    empty = Invocation.model_validate({"user_content": {"parts": [{"text": "q"}]},
                                       "intermediate_data": {}})
    assert isinstance(legacy.intermediate_data, IntermediateData)
    assert isinstance(empty.intermediate_data, IntermediateData)


def test_unknown_genai_part_fields_round_trip() -> None:
    raw = {"user_content": {"parts": [{"text": "q", "video_metadata": None,
                                       "executable_code": {"code": "1"}}]}}
    inv = Invocation.model_validate(raw)
    assert inv.model_dump(exclude_none=True)["user_content"]["parts"][0]["executable_code"] == {
        "code": "1"}


def test_tool_calls_pair_with_responses_by_id_or_position() -> None:
    inv = Invocation.model_validate({
        "user_content": {"parts": [{"text": "q"}]},
        "intermediate_data": {
            "tool_uses": [{"name": "f"}, {"name": "g"}, {"id": "3", "name": "h"}],
            "tool_responses": [{"id": "3", "name": "h", "response": {"v": 3}},
                               {"name": "f", "response": {"v": 1}},
                               {"name": "g", "response": {"v": 2}}],
        },
    })
    pairs = [(c.name, r.response if r else None) for c, r in inv.tool_calls_with_responses()]
    assert pairs == [("f", {"v": 1}), ("g", {"v": 2}), ("h", {"v": 3})]


def test_thought_parts_are_text_unless_excluded() -> None:
    inv = Invocation.model_validate({"user_content": {"parts": [{"text": "q"}]},
                                     "final_response": {"parts": [{"text": "plan", "thought": True},
                                                                  {"text": "answer"}]}})
    assert inv.final_response is not None
    assert inv.final_response.text() == "plan\nanswer"
    assert inv.final_response.text(include_thoughts=False) == "answer"


def test_calls_collected_on_validation_follow_the_lists_they_come_from() -> None:
    inv = EvalSet.model_validate(CAMEL).eval_cases[0].conversation[0]  # type: ignore[index]
    data = inv.intermediate_data
    assert isinstance(data, InvocationEvents)
    kept = data._calls_memo  # type: ignore[attr-defined]  # collected while validating
    assert kept[2][0].name == "roll_die" and set(data.__dict__) == set(InvocationEvents.model_fields)
    assert "calls" not in data.model_dump_json() and "calls" not in str(data.model_dump())
    assert inv.call_keys(False) == (("roll_die", {"sides": 6}),) and inv.call_keys(True) == ("roll_die",)
    assert inv.tool_calls() is inv.tool_calls() and inv.call_keys(False) is inv.call_keys(False)
    data.invocation_events.append(data.invocation_events[0])  # the list grows: collected again
    assert inv.call_keys(True) == ("roll_die", "roll_die") and len(inv.tool_calls()) == 2
    response_event = data.invocation_events[1]
    data.invocation_events = data.invocation_events[:1]  # another list: collected again
    assert inv.call_keys(True) == ("roll_die",) and len(inv.tool_calls()) == 1
    # Another list of the same length: seen by the assignment (a read checks only the length).
    kept_events = data.invocation_events
    data.invocation_events = [response_event]
    assert inv.call_keys(False) == () and inv.tool_calls() == []
    data.invocation_events = kept_events
    assert inv.call_keys(True) == ("roll_die",)
    part = data.invocation_events[0].content.parts[0]  # type: ignore[union-attr,index]
    assert part.function_call is not None
    part.function_call.args["sides"] = 8  # type: ignore[index]  # the keys hold the args dicts: seen
    assert inv.call_keys(False) == (("roll_die", {"sides": 8}),)
    part.function_call = FunctionCall(name="toss")  # a call replaced in place: not seen ...
    assert [c.name for c in inv.tool_calls()] == ["roll_die"] and inv.call_keys(True) == ("roll_die",)
    inv.forget_tool_calls()  # ... until forgotten
    assert [c.name for c in inv.tool_calls()] == ["toss"] and inv.call_keys(False) == (("toss", None),)
    copied = inv.model_copy(deep=True)  # a deep copy's calls are its own
    assert copied.call_keys(False) == (("toss", None),) and copied.tool_calls()[0] is not inv.tool_calls()[0]
    assert copied == inv
    legacy = Invocation.model_validate({"user_content": {"parts": [{"text": "q"}]},
                                        "intermediate_data": {"tool_uses": [{"name": "a", "args": {}}]}})
    assert legacy.call_keys(False) == (("a", {}),)
    assert isinstance(legacy.intermediate_data, IntermediateData)
    legacy.intermediate_data.tool_uses = []
    assert legacy.call_keys(False) == ()
    assert Invocation(user_content=legacy.user_content).call_keys(True) == ()


def _random_turn(rng: random.Random) -> Invocation:
    """An invocation in either form (or none), with events that may carry calls, usage counts
    and model versions."""
    form = rng.choice(["events", "events", "legacy", "none"])
    data: dict[str, Any] | None = None
    if form == "legacy":
        data = {"tool_uses": [{"name": rng.choice("fg"), "args": {}} for _ in range(rng.randint(0, 2))]}
    elif form == "events":
        events = []
        for _ in range(rng.randint(0, 4)):
            usage = (None if rng.random() < 0.5 else {
                k: rng.randint(0, 9) for k in (*USAGE_COUNTS, "total_token_count") if rng.random() < 0.6})
            parts = [{"function_call": {"name": rng.choice("fg"), "args": {"x": rng.randint(0, 1)}}}
                     if rng.random() < 0.5 else {"text": "t"} for _ in range(rng.randint(0, 2))]
            events.append({"author": rng.choice("ab"), "usage_metadata": usage,
                           "model_version": rng.choice([None, "", "m"]),
                           "content": rng.choice([None, {"role": "model", "parts": parts}])})
        data = {"invocation_events": events}
    return Invocation.model_validate({"user_content": {"parts": [{"text": "q"}]}, "intermediate_data": data})


def _read(u: UsageMetadata) -> tuple[Any, ...]:
    return tuple(getattr(u, name) for name in USAGE_COUNTS)


def test_the_readers_give_what_the_methods_give() -> None:
    rng = random.Random(27)
    for _ in range(500):
        turn = _random_turn(rng)
        assert usage_counts(turn) == [_read(u) for u in turn.usage()]
        assert model_calls(turn) == turn.model_call_count()
        assert call_count(turn) == len(turn.tool_calls())
        if isinstance(turn.intermediate_data, InvocationEvents):  # collected again: the same keys
            keys = turn.call_keys(False)
            turn.forget_tool_calls()
            assert turn.call_keys(False) == keys == tuple((c.name, c.args) for c in turn.tool_calls())


def test_the_readers_raise_where_the_attribute_reads_raise() -> None:
    """A field missing from a model's `__dict__` is read as an attribute, which raises."""
    usage = UsageMetadata(prompt_token_count=3)
    del usage.__dict__["thoughts_token_count"]
    event = InvocationEvent.model_construct(author="a", usage_metadata=None)
    del event.__dict__["model_version"]
    for events, read in (([InvocationEvent(author="a", usage_metadata=usage)], usage_counts),
                         ([event], model_calls)):
        turn = Invocation(user_content=Content.from_text("q", role="user"),
                          intermediate_data=InvocationEvents(invocation_events=events))
        with pytest.raises(AttributeError):
            read(turn)
    with pytest.raises(AttributeError):
        event.model_version  # noqa: B018  # (what the method met)
    call = FunctionCall(name="f")
    del call.__dict__["args"]
    with pytest.raises(AttributeError):
        InvocationEvents(invocation_events=[InvocationEvent(author="a", content=Content(
            parts=[Part(function_call=call)]))])


class _Usage(UsageMetadata):
    """A subclass whose counts are not its `__dict__`'s values."""

    def __getattribute__(self, name: str) -> Any:
        value = super().__getattribute__(name)
        return value * 10 if name.endswith("_count") and isinstance(value, int) else value


class _Event(InvocationEvent):
    def __getattribute__(self, name: str) -> Any:
        return "m" if name == "model_version" else super().__getattribute__(name)


class _Call(FunctionCall):
    def __getattribute__(self, name: str) -> Any:
        return "renamed" if name == "name" else super().__getattribute__(name)


class _Turn(Invocation):
    def usage(self) -> list[UsageMetadata]:
        return [UsageMetadata(prompt_token_count=7)]

    def model_call_count(self) -> int | None:
        return 5

    def tool_calls(self) -> list[FunctionCall]:
        return [FunctionCall(name="g")] * 3


def test_the_readers_read_subclasses_through_their_attributes_and_methods() -> None:
    turn = Invocation(user_content=Content.from_text("q", role="user"),
                      intermediate_data=InvocationEvents(invocation_events=[
                          _Event(author="a", usage_metadata=_Usage(prompt_token_count=2)),
                          _Event(author="a", content=Content(parts=[Part(function_call=_Call(name="f"))])),
                      ]))
    assert usage_counts(turn) == [(20, None, None, None, None)] == [_read(u) for u in turn.usage()]
    assert model_calls(turn) == 2 == turn.model_call_count()
    assert turn.call_keys(False) == (("renamed", None),)
    mine = _Turn(user_content=Content.from_text("q", role="user"))
    assert (usage_counts(mine), model_calls(mine), call_count(mine)) == ([(7, None, None, None, None)], 5, 3)
