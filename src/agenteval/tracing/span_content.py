"""What one span says, whatever convention wrote it: whether it is a model call or a tool call,
a model call's input and output messages, a tool call's name, arguments and result.

Read from the GenAI semantic conventions (`gen_ai.*`, ADK's schema 2, pydantic-ai, agenteval's
own), ADK's legacy attributes (`gcp.vertex.agent.*`) and OpenInference (`llm.*_messages.*`,
`input.value` / `output.value`). ADK's `execute_tool (merged)` span (`gen_ai.tool.name` "(merged
tools)", around a response's parallel calls, each of which has its own span) is not a tool call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agenteval.errors import DataError
from agenteval.tracing.otlp_json import OtlpSpan

_MODEL_OPERATIONS = ("chat", "generate_content", "text_completion")


def is_model(s: OtlpSpan) -> bool:
    """Whether the span is a model call (OpenInference LLM, a GenAI model operation, ADK's call_llm)."""
    a = s.attributes
    return (a.get("openinference.span.kind") == "LLM" or a.get("gen_ai.operation.name") in _MODEL_OPERATIONS
            or s.name == "call_llm")


MERGED_TOOLS = "(merged tools)"  # ADK's span around a response's parallel calls (each has its own)


def is_tool(s: OtlpSpan) -> bool:
    """Whether the span is one tool call (not ADK's merged span)."""
    a = s.attributes
    if a.get("gen_ai.tool.name") == MERGED_TOOLS:
        return False
    return a.get("openinference.span.kind") == "TOOL" or a.get("gen_ai.operation.name") == "execute_tool"


def parse_json(value: Any) -> Any:
    """A JSON text decoded; anything else (or text that is no JSON) as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


@dataclass
class Message:
    """One message of a model call's input or output: role, text, tool calls (id, name, args)."""

    role: str
    text: str = ""
    tool_calls: list[tuple[str | None, str, dict[str, Any]]] = field(default_factory=list)


def text_of(content: Any) -> str:
    """The text of a message content: a string, text parts, or a list of them."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(text_of(p) for p in content)
    if isinstance(content, dict):
        if content.get("type") in ("text", None) and isinstance(content.get("content"), str):
            return str(content["content"])
        if isinstance(content.get("text"), str) and not content.get("thought"):
            return str(content["text"])
    return ""


def semconv_messages(raw: Any) -> list[Message]:
    """GenAI-convention messages (`parts`), agenteval's (`content`, `tool_calls`) or genai
    contents (`parts` with `text` / `function_call`)."""
    out = []
    for m in raw if isinstance(raw, list) else []:
        if not isinstance(m, dict):
            continue
        role = str(m.get("role") or "")
        msg = Message("user" if role in ("user", "human")
                      else "assistant" if role in ("assistant", "model", "ai") else role)
        parts = m.get("parts") if isinstance(m.get("parts"), list) else None
        if parts is None:
            msg.text = text_of(m.get("content"))
            for c in m.get("tool_calls") or []:
                msg.tool_calls.append((c.get("id"), str(c.get("name")), parse_json(c.get("arguments")) or {}))
        else:
            msg.text = "".join(text_of(p) for p in parts)
            for p in parts:
                if p.get("type") == "tool_call":
                    args = parse_json(p.get("arguments")) or {}
                    msg.tool_calls.append((p.get("id"), str(p.get("name")), args))
                elif isinstance(p.get("function_call"), dict):
                    fc = p["function_call"]
                    msg.tool_calls.append((fc.get("id"), str(fc.get("name")), fc.get("args") or {}))
        if any(p.get("type") == "tool_call_response" or "function_response" in p for p in parts or []):
            msg.role = "tool"
        out.append(msg)
    return out


def flat_messages(a: dict[str, Any], prefix: str) -> list[Message]:
    """OpenInference's flattened `llm.input_messages.{i}.message.*` / `llm.output_messages...`."""
    by_index: dict[int, dict[str, Any]] = {}
    for key, value in a.items():
        if key.startswith(prefix):
            index, _, rest = key[len(prefix):].partition(".message.")
            if index.isdigit():
                by_index.setdefault(int(index), {})[rest] = value
    out = []
    for i in sorted(by_index):
        fields = by_index[i]
        role = str(fields.get("role", ""))
        msg = Message("assistant" if role in ("assistant", "ai") else role)
        msg.text = str(fields.get("content") or "") or "".join(
            str(v) for k, v in sorted(fields.items()) if k.startswith("contents.") and k.endswith(".text"))
        calls: dict[int, dict[str, Any]] = {}
        for k, v in fields.items():
            if k.startswith("tool_calls."):
                number, _, field_name = k[len("tool_calls."):].partition(".tool_call.")
                if number.isdigit():
                    calls.setdefault(int(number), {})[field_name] = v
        for n in sorted(calls):
            c = calls[n]
            msg.tool_calls.append((c.get("id"), str(c.get("function.name")),
                                   parse_json(c.get("function.arguments")) or {}))
        out.append(msg)
    return out


def _content(s: OtlpSpan, key: str, kind: type) -> Any:
    """The JSON an attribute holding a model call's messages encodes (None when absent). Text that
    is not JSON of that `kind` is a DataError naming the span and the attribute: read as no
    messages, it would score as an empty question or answer (an exporter's attribute length limit,
    `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`, cuts long ones short)."""
    value = s.attributes.get(key)
    if value is None or value == "":
        return None
    decoded = parse_json(value)
    if not isinstance(decoded, kind):
        cut = isinstance(value, str) and decoded is value
        raise DataError(None, f"{s.where} (span {s.name!r}) attribute {key}",
                        "not JSON: cut short? (an exporter's attribute length limit, "
                        "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT, truncates long values)" if cut else
                        f"expected a JSON {'list' if kind is list else 'object'} of messages, "
                        f"got {type(decoded).__name__}")
    return decoded


def model_io(s: OtlpSpan) -> tuple[list[Message], list[Message]] | None:
    """(input, output) messages of a model call; None when the span carries no content. A
    messages attribute that does not decode is a DataError (see `_content`), with no file: the
    reader of the file adds it."""
    a = s.attributes
    if "gen_ai.input.messages" in a or "gen_ai.output.messages" in a:
        return (semconv_messages(_content(s, "gen_ai.input.messages", list)),
                semconv_messages(_content(s, "gen_ai.output.messages", list)))
    if "gcp.vertex.agent.llm_request" in a and a["gcp.vertex.agent.llm_request"] not in ("{}", {}):
        request = _content(s, "gcp.vertex.agent.llm_request", dict)
        response = _content(s, "gcp.vertex.agent.llm_response", dict)
        contents = request.get("contents", []) if isinstance(request, dict) else []
        reply = [response["content"]] if isinstance(response, dict) and response.get("content") else []
        return semconv_messages(contents), semconv_messages(reply)
    if any(k.startswith(("llm.input_messages.", "llm.output_messages.")) for k in a):
        return flat_messages(a, "llm.input_messages."), flat_messages(a, "llm.output_messages.")
    return None


def tool_result(s: OtlpSpan) -> Any:
    """A tool span's result, decoded; None when not recorded."""
    a = s.attributes
    for key in ("gen_ai.tool.call.result", "gcp.vertex.agent.tool_response", "output.value"):
        if key in a:
            value = parse_json(a[key])
            # LangChain's serialised ToolMessage: the result is its content
            data = value.get("data") if isinstance(value, dict) and value.get("type") == "tool" else None
            if isinstance(data, dict):
                value = parse_json(data.get("content"))
            return value
    return None


def tool_args(s: OtlpSpan) -> dict[str, Any] | None:
    """A tool span's arguments; None when not recorded."""
    for key in ("gen_ai.tool.call.arguments", "gcp.vertex.agent.tool_call_args", "input.value"):
        value = parse_json(s.attributes.get(key))
        if isinstance(value, dict):
            return value
    return None


def tool_name(s: OtlpSpan) -> str:
    """A tool span's tool name."""
    a = s.attributes
    name = a.get("gen_ai.tool.name") or a.get("tool.name")
    return str(name) if name else s.name.removeprefix("execute_tool ").strip()


__all__ = ["MERGED_TOOLS", "Message", "flat_messages", "is_model", "is_tool", "model_io", "parse_json",
           "semconv_messages", "text_of", "tool_args", "tool_name", "tool_result"]
