"""Base model shared by every wire-format model: camelCase or snake_case keys in, snake_case out."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """Accepts both `user_content` and `userContent`; rejects unknown keys.

    Serialisation uses field names (snake_case), as ADK's file writers do.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        loc_by_alias=False,  # errors name fields by their snake_case names
    )


class OpenWireModel(WireModel):
    """A wire model that keeps unknown keys so that they round-trip unchanged."""

    model_config = ConfigDict(extra="allow")
