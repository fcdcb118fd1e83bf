"""User-simulator configuration (`user_simulator_config` in an eval config)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, ValidationError

from agenteval.errors import from_validation_error
from agenteval.schema.config import UserSimulatorConfig


class LlmBackedUserSimulatorConfig(UserSimulatorConfig):
    """An LLM plays the user: the scenario's starting prompt first, then generated turns.

    `max_allowed_invocations` counts user turns including the first (-1: no limit);
    the conversation ends when the simulated user writes `stop_signal`. The fields are the
    config's (`agenteval.schema.config.UserSimulatorConfig`), with the type filled in.
    """

    model_config = ConfigDict(defer_build=True)

    type: Literal["llm_backed"] | None = "llm_backed"


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
