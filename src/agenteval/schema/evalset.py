"""Eval sets and eval cases: the recorded conversations an agent is judged against."""


from typing import Any

from pydantic import ConfigDict, Field, field_validator, model_validator

from agenteval.schema.base import OpenWireModel, WireModel
from agenteval.schema.invocation import Invocation
from agenteval.schema.rubric import Rubric, unique_rubric_ids


class SessionInput(OpenWireModel):
    """The session a case starts from: app, user, optional pinned session id, initial state."""

    model_config = ConfigDict(defer_build=True)

    app_name: str
    user_id: str
    session_id: str | None = None
    state: dict[str, Any] = Field(default_factory=dict)


class UserBehavior(WireModel):
    """One behaviour of a simulated user, with the rubrics that detect violations of it."""

    name: str
    description: str
    behavior_instructions: list[str] = Field(default_factory=list)
    violation_rubrics: list[str] = Field(default_factory=list)


class UserPersona(WireModel):
    """A simulated user's persona."""

    id: str
    description: str
    behaviors: list[UserBehavior] = Field(default_factory=list)


class ConversationScenario(WireModel):
    """A conversation to simulate: the first user message verbatim, then a plan to follow."""

    model_config = ConfigDict(defer_build=True)

    starting_prompt: str
    conversation_plan: str
    user_persona: UserPersona | str | None = None


class EvalCase(OpenWireModel):
    """One case: a static conversation (turns to replay and expected outputs) or a scenario."""

    # Not empty (ADK allows ""): an id keys the case in the history, the web's routes and
    # `--eval_ids`-style selections, where "" names nothing.
    eval_id: str = Field(min_length=1)
    conversation: list[Invocation] | None = None
    conversation_scenario: ConversationScenario | None = None
    session_input: SessionInput | None = None
    creation_timestamp: float = 0.0
    rubrics: list[Rubric] | None = None
    final_session_state: dict[str, Any] | None = Field(default_factory=dict)

    @field_validator("rubrics")
    @classmethod
    def _unique_rubric_ids(cls, rubrics: list[Rubric] | None) -> list[Rubric] | None:
        # Refused wherever a case comes from (a file, the web's API), as the page refuses it:
        # found when scoring, every judged run of the case was NOT_EVALUATED on it.
        unique_rubric_ids(rubrics or ())
        return rubrics

    @model_validator(mode="after")
    def _one_source(self) -> "EvalCase":
        if (self.conversation is None) == (self.conversation_scenario is None):
            raise ValueError("exactly one of conversation and conversation_scenario must be set")
        return self


class EvalSet(OpenWireModel):
    """A named collection of eval cases."""

    eval_set_id: str = Field(min_length=1)  # not empty: as `EvalCase.eval_id`
    name: str | None = None
    description: str | None = None
    eval_cases: list[EvalCase]
    creation_timestamp: float = 0.0

    def case(self, eval_id: str) -> EvalCase | None:
        """The case with this id, if any."""
        return next((c for c in self.eval_cases if c.eval_id == eval_id), None)
