"""Rubrics: properties an LLM judge checks, and the scores it gives them."""


from collections.abc import Sequence

from pydantic import ConfigDict
from pydantic_core import PydanticCustomError

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


def unique_rubric_ids(rubrics: Sequence[Rubric]) -> None:
    """Refuses a list of rubrics where an id is used twice: a verdict is keyed by its rubric's
    id (in the result document, reviews and certificates), so the second would be lost or
    mistaken for the first. The one rule for a criterion's, a case's and an invocation's
    rubrics, wherever they come from (files, the web's API)."""
    first: dict[str, int] = {}
    for i, rubric in enumerate(rubrics):
        j = first.setdefault(rubric.rubric_id, i)
        if j != i:
            raise PydanticCustomError("duplicate_rubric_id", "duplicate rubric_id {id} "
                                      "(rubrics[{j}] and rubrics[{i}])",
                                      {"id": repr(rubric.rubric_id), "i": i, "j": j})


class RubricScore(WireModel):
    """A judge's score for one rubric (1.0 met, 0.0 not met, None undecided)."""

    model_config = ConfigDict(defer_build=True)

    rubric_id: str
    rationale: str | None = None
    score: float | None = None
