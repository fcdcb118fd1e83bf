"""Rubrics: properties an LLM judge checks, and the scores it gives them."""

from __future__ import annotations

from pydantic import ConfigDict

from agenteval.schema.base import WireModel


class RubricContent(WireModel):
    """What a rubric asks for, as a property statement."""

    model_config = ConfigDict(defer_build=True)

    text_property: str | None = None


class Rubric(WireModel):
    """One property to check.

    `type` decides which rubric criterion reads a case- or invocation-level rubric
    (`FINAL_RESPONSE_QUALITY`, `TOOL_USE_QUALITY`, `TRAJECTORY_QUALITY`); rubrics inside
    a criterion apply whatever their type.
    """

    model_config = ConfigDict(defer_build=True)

    rubric_id: str
    rubric_content: RubricContent
    description: str | None = None
    type: str | None = None


class RubricScore(WireModel):
    """A judge's score for one rubric (1.0 met, 0.0 not met, None undecided)."""

    model_config = ConfigDict(defer_build=True)

    rubric_id: str
    rationale: str | None = None
    score: float | None = None
