"""Tool calls written as text, parsed into `ToolCallRequest`s.

Small local models (and some OpenAI-compatible servers) leave tool calls in the message text
instead of a structured `tool_calls` field. `parse_tool_calls` recognises, in this order of
preference (the first form that yields any call wins, so one call is never counted twice):

1. Qwen/Hermes tags: `<tool_call>{...}</tool_call>`;
2. fenced blocks: three backticks, optional language (json, tool_call, ...), then JSON;
3. the whole text as JSON;
4. JSON objects embedded anywhere in the text.

A call is an object `{"name": ..., "arguments": {...}}` (`args`/`parameters` also accepted, and
`arguments` may be a JSON-encoded string), an OpenAI-style `{"function": {...}}`, a list of
these, or `{"tool_calls": [...]}`. Calls whose arguments are not a JSON object are dropped.
When `tool_names` is given only calls to those tools count, and a call without arguments
means empty arguments; without it, the arguments key is required (so ordinary JSON answers
such as `{"name": "Ann", "age": 31}` are not mistaken for calls).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from agenteval.models.base import ToolCallRequest

__all__ = ["parse_tool_calls"]

_TAG_RE = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE_RE = re.compile(r"```[A-Za-z_\-]*[ \t]*\n?(.*?)```", re.DOTALL)
_ARG_KEYS = ("arguments", "args", "parameters")
_DECODER = json.JSONDecoder()


def parse_tool_calls(
    text: str, tool_names: Collection[str] | None = None
) -> tuple[ToolCallRequest, ...]:
    """Returns the tool calls written in `text` (empty if there are none or it is junk)."""
    if "{" not in text:
        return ()
    for blocks in (_TAG_RE.findall(text), _FENCE_RE.findall(text)):
        calls = [c for block in blocks for c in _calls_in_block(block, tool_names)]
        if calls:
            return tuple(calls)
    whole = _loads(text.strip())
    if whole is not None:
        calls = _calls_from_value(whole, tool_names)
        if calls:
            return tuple(calls)
    return tuple(_embedded_calls(text, tool_names))


def _calls_in_block(block: str, tool_names: Collection[str] | None) -> list[ToolCallRequest]:
    value = _loads(block.strip())
    if value is None:
        # A block may hold several objects one after another (one call per line).
        return _embedded_calls(block, tool_names)
    return _calls_from_value(value, tool_names)


def _embedded_calls(text: str, tool_names: Collection[str] | None) -> list[ToolCallRequest]:
    calls: list[ToolCallRequest] = []
    pos = text.find("{")
    while pos != -1:
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except ValueError:
            pos = text.find("{", pos + 1)
            continue
        found = _calls_from_value(value, tool_names)
        calls.extend(found)
        # Skip past a decoded call; otherwise look inside the object for nested calls.
        pos = text.find("{", end if found else pos + 1)
    return calls


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _calls_from_value(value: Any, tool_names: Collection[str] | None) -> list[ToolCallRequest]:
    if isinstance(value, list):
        return [c for item in value for c in _calls_from_value(item, tool_names)]
    if not isinstance(value, dict):
        return []
    if isinstance(value.get("tool_calls"), list):
        return _calls_from_value(value["tool_calls"], tool_names)
    call = _call_from_object(value, tool_names)
    return [call] if call is not None else []


def _call_from_object(obj: dict[str, Any], tool_names: Collection[str] | None) -> ToolCallRequest | None:
    call_id = obj.get("id") if isinstance(obj.get("id"), str) else None
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        return None
    if tool_names is not None and name not in tool_names:
        return None
    arg_key = next((k for k in _ARG_KEYS if k in obj), None)
    if arg_key is None:
        return ToolCallRequest(name, {}, call_id) if tool_names is not None else None
    args = obj[arg_key]
    if isinstance(args, str):
        args = _loads(args) if args.strip() else {}
    if not isinstance(args, dict):
        return None
    return ToolCallRequest(name, args, call_id)
