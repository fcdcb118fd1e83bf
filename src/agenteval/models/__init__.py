"""LLM backends: the embedded local model, OpenAI-compatible HTTP endpoints and a scripted
model for tests, behind one async interface (`LLM`), selected by name with `resolve_model`.

Each name is imported from its module when first asked for (`__getattr__`), so that importing
one module (`models.base` for the judge engine's types) does not import the others: the embedded
model's module brings asyncio, urllib and its slots, `openai_compat` httpx (with ssl and email;
not its command-line client: `http_lib`), none of which a `score` of deterministic criteria uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenteval.lazy import names_from

if TYPE_CHECKING:
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
    from agenteval.models.openai_compat import OpenAICompatModel
    from agenteval.models.resolve import ModelSpec, parse_model_name, resolve_model
    from agenteval.models.scripted import Reply, ScriptedModel
    from agenteval.models.toolcall_parse import parse_tool_calls

_HOME = {
    **dict.fromkeys(["LLM", "Generation", "Message", "ModelError", "ModelRequest", "ModelResponse",
                     "ModelUnavailable", "Role", "TokenLogprob", "ToolCallRequest", "ToolSpec",
                     "TransientModelError", "Usage"], "base"),
    "LimitedLLM": "limits",
    **dict.fromkeys(["LocalModel", "check_local_available"], "local"),
    "OpenAICompatModel": "openai_compat",
    **dict.fromkeys(["ModelSpec", "parse_model_name", "resolve_model"], "resolve"),
    **dict.fromkeys(["Reply", "ScriptedModel"], "scripted"),
    "parse_tool_calls": "toolcall_parse",
}

__getattr__ = names_from(__name__, _HOME)


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
