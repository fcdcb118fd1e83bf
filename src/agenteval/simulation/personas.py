"""Resolving a scenario's user persona (the built-in ones are in `agenteval.schema.personas`)."""

from __future__ import annotations

from agenteval.errors import AgentEvalError
from agenteval.schema import UserPersona
from agenteval.schema.personas import builtin_persona


def persona(value: UserPersona | str | None) -> UserPersona | None:
    """Resolves a persona given inline or by built-in id; an unknown id is a clear error."""
    if value is None or isinstance(value, UserPersona):
        return value
    try:
        return builtin_persona(value)
    except ValueError as e:
        raise AgentEvalError(str(e)) from None
