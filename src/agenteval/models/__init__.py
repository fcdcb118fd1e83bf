"""LLM backends: the embedded local model, OpenAI-compatible HTTP endpoints and a scripted
model for tests, behind one async interface (`LLM`), selected by name with `resolve_model`.

`OpenAICompatModel` is imported when first asked for: its module brings httpx (with ssl, email
and pygments), about a tenth of a second of every command's start that only an HTTP model needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenteval.lazy import names_from
from agenteval.models.base import (
    LLM,
    Generation,
    Message,
    ModelError,
    ModelRequest,
    ModelResponse,
    ModelUnavailable,
    Role,
    TokenLogprob,
    ToolCallRequest,
    ToolSpec,
    TransientModelError,
    Usage,
)
from agenteval.models.limits import LimitedLLM
from agenteval.models.local import LocalModel, check_local_available
from agenteval.models.resolve import ModelSpec, parse_model_name, resolve_model
from agenteval.models.scripted import Reply, ScriptedModel
from agenteval.models.toolcall_parse import parse_tool_calls

if TYPE_CHECKING:
    from agenteval.models.openai_compat import OpenAICompatModel


__getattr__ = names_from(__name__, {"OpenAICompatModel": "openai_compat"})


__all__ = [
    "LLM",
    "Generation",
    "LimitedLLM",
    "LocalModel",
    "Message",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "ModelSpec",
    "ModelUnavailable",
    "OpenAICompatModel",
    "Reply",
    "Role",
    "ScriptedModel",
    "TokenLogprob",
    "ToolCallRequest",
    "ToolSpec",
    "TransientModelError",
    "Usage",
    "check_local_available",
    "parse_model_name",
    "parse_tool_calls",
    "resolve_model",
]
