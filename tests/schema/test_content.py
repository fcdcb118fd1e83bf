"""Message content keeps genai's fields it does not type and refuses any other key, as ADK does."""

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from agenteval.errors import from_validation_error
from agenteval.schema import (
    Blob,
    Content,
    EvalCase,
    FunctionCall,
    FunctionResponse,
    Invocation,
    InvocationEvent,
    Part,
    UsageMetadata,
)


def _case(part: dict[str, Any]) -> dict[str, Any]:
    return {"eval_id": "a", "conversation": [
        {"user_content": {"role": "user", "parts": [{"text": "ok"}, part]}}]}


@pytest.mark.parametrize("raw", [
    pytest.param(lambda c: c.model_validate(_case({"txt": "hi"})), id="python values"),
    pytest.param(lambda c: c.model_validate_json(
        '{"eval_id": "a", "conversation": [{"user_content": {"parts": [{"text": "ok"}, {"txt": "hi"}]}}]}'),
        id="JSON bytes"),
])
def test_a_mistyped_key_in_a_part_is_refused_with_its_path(raw: Any) -> None:
    with pytest.raises(ValidationError) as e:
        raw(EvalCase)
    error = from_validation_error("s.evalset.json", e.value, "eval_cases[3]")
    assert str(error) == ("s.evalset.json: eval_cases[3].conversation[0].user_content.parts[1].txt: "
                          "unknown key")


@pytest.mark.parametrize("content", [
    {"role": "user", "parts": [{"text": "hi"}], "part": []},
    {"parts": [{"function_call": {"name": "f", "arg": {}}}]},
    {"parts": [{"function_response": {"name": "f", "result": {}}}]},
    {"parts": [{"inline_data": {"mime_type": "image/png", "bytes": ""}}]},
], ids=["content", "function call", "function response", "blob"])
def test_a_mistyped_key_anywhere_in_a_message_is_refused(content: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="Extra inputs"):
        Invocation.model_validate({"user_content": content})


def test_genai_fields_agenteval_does_not_type_are_kept_in_both_spellings() -> None:
    part = Part.model_validate_json(
        '{"text": "t", "thoughtSignature": "c2ln", "video_metadata": {"fps": 2},'
        ' "function_call": {"name": "f", "will_continue": true},'
        ' "inline_data": {"displayName": "d"}}')
    assert part.model_extra == {"thoughtSignature": "c2ln", "video_metadata": {"fps": 2}}
    assert part.function_call is not None and part.function_call.model_extra == {"will_continue": True}
    assert part.inline_data is not None and part.inline_data.model_extra == {"displayName": "d"}


def test_the_known_extras_are_the_installed_genais_other_fields() -> None:
    types = pytest.importorskip("google.genai.types")
    pairs: list[tuple[type[BaseModel], type[BaseModel]]] = [
        (Part, types.Part), (FunctionCall, types.FunctionCall),
        (FunctionResponse, types.FunctionResponse), (Blob, types.Blob),
        (UsageMetadata, types.GenerateContentResponseUsageMetadata)]
    for ours, theirs in pairs:
        other = set(theirs.model_fields) - set(ours.model_fields)
        assert ours.known_extras >= other | {to_camel(n) for n in other}, ours.__name__  # type: ignore[attr-defined]
    assert set(types.Content.model_fields) == set(Content.model_fields)


def test_a_mistyped_token_count_is_refused_and_genais_details_kept() -> None:
    """A mistyped count would read as no tokens at all (token_usage_v1 on nothing): refused, as
    genai's usage model refuses it; its per-modality details are kept in both spellings."""
    with pytest.raises(ValidationError) as e:
        InvocationEvent.model_validate_json('{"author": "m", "usage_metadata": {"prompt_tokens": 12}}')
    error = from_validation_error("s.evalset.json", e.value, "eval_cases[0]")
    assert str(error) == "s.evalset.json: eval_cases[0].usage_metadata.prompt_tokens: unknown key"
    usage = UsageMetadata.model_validate_json(
        '{"promptTokenCount": 3, "promptTokensDetails": [{"modality": "TEXT"}], "traffic_type": "ON_DEMAND"}')
    assert usage.prompt_token_count == 3
    assert usage.model_extra == {"promptTokensDetails": [{"modality": "TEXT"}], "traffic_type": "ON_DEMAND"}
