from agenteval.schema import EvalSet, FunctionCall, IntermediateData, Invocation, InvocationEvents

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
