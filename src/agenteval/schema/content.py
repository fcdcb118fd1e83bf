"""Message content: parts, function calls and responses (the genai `Content` wire shape).

Only the fields agenteval reads are typed; every other genai field (`video_metadata`,
`executable_code`, ...) is kept as an extra so files round-trip.
"""

from __future__ import annotations

from typing import Any

from agenteval.schema.base import OpenWireModel


class FunctionCall(OpenWireModel):
    """A tool call. `args` keeps the distinction between absent (None) and empty ({})."""

    id: str | None = None
    name: str | None = None
    args: dict[str, Any] | None = None


class FunctionResponse(OpenWireModel):
    """The result of a tool call, paired with its call by `id` when ids are present."""

    id: str | None = None
    name: str | None = None
    response: dict[str, Any] | None = None


class Blob(OpenWireModel):
    """Inline binary data (audio, images)."""

    mime_type: str | None = None
    data: str | None = None


class Part(OpenWireModel):
    """One part of a message: text, a thought, a function call or response, or media."""

    text: str | None = None
    thought: bool | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None
    inline_data: Blob | None = None


class Content(OpenWireModel):
    """A message: a role (`user`, `model`) and its parts."""

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
    def from_text(cls, text: str, role: str = "model") -> Content:
        """A one-part text message."""
        return cls(role=role, parts=[Part(text=text)])


def content_text(content: Content | None, *, include_thoughts: bool = True) -> str:
    """Text of optional content; "" when there is none."""
    return content.text(include_thoughts=include_thoughts) if content else ""
