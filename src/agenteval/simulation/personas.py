"""Resolving a scenario's user persona (the built-in ones are in `agenteval.schema.personas`)."""

from __future__ import annotations

from agenteval.errors import AgentEvalError
from agenteval.schema import UserPersona
from agenteval.schema.personas import PERSONAS


def persona(value: UserPersona | str | None) -> UserPersona | None:
    """Resolves a persona given inline or by built-in id; an unknown id is a clear error."""
    if value is None or isinstance(value, UserPersona):
        return value
    found = PERSONAS.get(value.upper())
    if found is None:
        raise AgentEvalError(f"unknown user persona {value!r}; built-in: {', '.join(PERSONAS)}")
    return found
