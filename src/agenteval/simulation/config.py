"""User-simulator configuration (`user_simulator_config` in an eval config)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError

from agenteval.errors import from_validation_error
from agenteval.schema.base import WireModel


class LlmBackedUserSimulatorConfig(WireModel):
    """An LLM plays the user: the scenario's starting prompt first, then generated turns.

    `max_allowed_invocations` counts user turns including the first (-1: no limit);
    the conversation ends when the simulated user writes `stop_signal`.
    """

    type: Literal["llm_backed"] = "llm_backed"
    model: str = "local"
    model_configuration: dict[str, Any] | None = None
    max_allowed_invocations: int = Field(default=20, ge=-1)
    custom_instructions: str | None = None
    include_function_calls: bool = False
    stop_signal: str = "</finished>"
    temperature: float = 0.7


def parse_simulator_config(raw: dict[str, Any] | None,
                           source: str | None = None) -> LlmBackedUserSimulatorConfig:
    """Validates the config's `user_simulator_config`; a missing `type` means `llm_backed`."""
    data = dict(raw or {})
    if data.get("type") is None:
        data["type"] = "llm_backed"
    try:
        return LlmBackedUserSimulatorConfig.model_validate(data)
    except ValidationError as e:
        raise from_validation_error(source, e, "user_simulator_config") from None
