"""Message content: parts, function calls and responses (the genai `Content` wire shape).

Only the fields agenteval reads are typed; every other field of genai's model (`video_metadata`,
`executable_code`, ...) is kept as an extra so files round-trip. Any other key is refused, as
ADK (whose genai models forbid extras) refuses it: a mistyped `{"txt": "hi"}` would otherwise be
an empty message, and the case scored on nothing.
"""


from collections.abc import Iterable
from typing import Any, ClassVar

from pydantic import ConfigDict, model_validator
from pydantic.alias_generators import to_camel
from pydantic_core import InitErrorDetails, ValidationError

from agenteval.schema.base import OpenWireModel, WireModel


def both_cases(*names: str) -> frozenset[str]:
    """`names` (snake_case) and their camelCase spellings."""
    return frozenset(names) | {to_camel(n) for n in names}


class GenaiModel(OpenWireModel):
    """A genai model: keeps the extras named in `known_extras` (genai's fields that agenteval
    does not type), refuses any other key as pydantic's `extra="forbid"` does."""

    # genai's other fields, both spellings (google-genai 2.34; `tests/schema/test_content.py`
    # compares them with the installed genai's).
    known_extras: ClassVar[frozenset[str]] = frozenset()

    # (A check after validation, not `extra="forbid"` with the fields declared: a declared field
    # is written as null by every result, and pydantic's JSON validator ignores a typed key of
    # `__pydantic_extra__`. The check costs a call and a slot read a part when it has no extra.)
    @model_validator(mode="after")
    def _known_keys(self) -> Any:
        extra = self.__pydantic_extra__
        if extra and not extra.keys() <= self.known_extras:
            raise ValidationError.from_exception_data(type(self).__name__, [
                InitErrorDetails(type="extra_forbidden", loc=(key,), input=value)
                for key, value in extra.items() if key not in self.known_extras])
        return self


def learn_fields(model: type[GenaiModel], names: Iterable[str]) -> None:
    """Keeps `names` (fields of the installed genai's model, snake_case) as known extras of
    `model` from now on: the ADK adapter's, so that a newer genai's field in what a live agent
    returns is kept rather than refused."""
    model.known_extras = model.known_extras | both_cases(*names)


class FunctionCall(GenaiModel):
    """A tool call. `args` keeps the distinction between absent (None) and empty ({})."""

    known_extras: ClassVar[frozenset[str]] = both_cases("partial_args", "will_continue")
    id: str | None = None
    name: str | None = None
    args: dict[str, Any] | None = None


class FunctionResponse(GenaiModel):
    """The result of a tool call, paired with its call by `id` when ids are present."""

    known_extras: ClassVar[frozenset[str]] = both_cases("parts", "scheduling", "will_continue")
    id: str | None = None
    name: str | None = None
    response: dict[str, Any] | None = None


class Blob(GenaiModel):
    """Inline binary data (audio, images)."""

    model_config = ConfigDict(defer_build=True)

    known_extras: ClassVar[frozenset[str]] = both_cases("display_name")
    mime_type: str | None = None
    data: str | None = None


class Part(GenaiModel):
    """One part of a message: text, a thought, a function call or response, or media."""

    known_extras: ClassVar[frozenset[str]] = both_cases(
        "audio_transcription", "code_execution_result", "executable_code", "file_data",
        "media_processing", "media_resolution", "part_metadata", "speech_metadata",
        "thought_signature", "tool_call", "tool_response", "video_metadata")
    text: str | None = None
    thought: bool | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None
    inline_data: Blob | None = None


class Content(WireModel):
    """A message: a role (`user`, `model`) and its parts (genai's only fields: no extras)."""

    role: str | None = None
    parts: list[Part] | None = None

    def text(self, *, include_thoughts: bool = True) -> str:
        """The text parts joined by newlines; thoughts are included unless asked otherwise."""
        if not self.parts:
            return ""
        return "\n".join(
            p.text for p in self.parts if p.text and (include_thoughts or not p.thought)
        )

    @classmethod
    def from_text(cls, text: str, role: str = "model") -> "Content":
        """A one-part text message."""
        return cls(role=role, parts=[Part(text=text)])


def content_text(content: Content | None, *, include_thoughts: bool = True) -> str:
    """Text of optional content; "" when there is none."""
    return content.text(include_thoughts=include_thoughts) if content else ""
