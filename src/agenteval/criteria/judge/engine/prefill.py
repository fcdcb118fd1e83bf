"""A verdict's fixed JSON head written into the prompt instead of generated.

Under a JSON schema, `{"verdict": "supported"}` is 7 tokens and the end of turn on the embedded
model's tokenizer, of which only the label is chosen: `{"`, `ver`, `dict`, `":`, ` "` are forced
by the grammar, and llama.cpp decodes a forced token like any other (one decode step each, about
0.1 s on a quiet 2-core machine, where a prompt token in a batch costs a fraction of that). An
engine that continues a trailing assistant message (llama.cpp does: the reply is that message
continued) can be given the head `{"verdict": "` (or a notes-first reply's `{"sentence_says": "`)
as that message and a grammar for the rest: the tokens before the label are then the same
tokens, evaluated with the prompt, and the label's probabilities are those of the reply written
whole (measured on the embedded judge, `bench/lab_prefill.py`: equal to four decimals on every
question tried). The reply llama.cpp returns holds the head, so it reads and is cached as before.

`prefilled` makes such a request from a verdict schema (`verdict.verdict_schema`,
`verdict.explained_verdict_schema`); the grammar allows what the schema's grammar allowed after
the head, with the spacing llama.cpp's replies use (`", "rationale": "`; a reply written whole
sometimes puts a space before its closing brace, one token more, which this grammar leaves
out), and the schema's string lengths.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from agenteval.models.base import Message, ModelRequest

# `{"verdict": "` on the embedded model's tokenizer: the tokens a verdict-first reply no longer
# generates, taken off its token cap so that its rationale is as long as before.
HEAD_TOKENS = 5
_CHAR = r'([^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}))'


def _lit(text: str) -> str:
    return json.dumps(text)  # a GBNF literal escapes as a JSON string does


def _string(prop: dict[str, Any]) -> str:
    return f"{_CHAR}{{0,{int(prop.get('maxLength', 200))}}}"


def _branch(branch: dict[str, Any]) -> tuple[str, str] | None:
    """(the head, the grammar of the rest) of one object shape: its first field's name up to the
    opening quote of its value, then each value and the next field's name, the label last or
    first."""
    props = branch.get("properties") or {}
    names = list(props)
    if "verdict" not in names or not isinstance(props["verdict"].get("enum"), list):
        return None
    parts = []
    for i, name in enumerate(names):
        if i:
            parts.append(_lit(f'", "{name}": "'))
        if name == "verdict":
            parts.append("(" + " | ".join(_lit(label) for label in props[name]["enum"]) + ")")
        elif props[name].get("type") == "string":
            parts.append(_string(props[name]))
        else:
            return None
    parts.append(_lit('"}'))
    return '{"' + names[0] + '": "', " ".join(parts)


def prefilled(request: ModelRequest) -> tuple[ModelRequest, str] | None:
    """`request` (under a verdict schema) with its reply's fixed head as a trailing assistant
    message, a GBNF grammar for the rest instead of the schema, and its token cap lowered by the
    head's tokens where the label comes first; and the head. None for any other schema."""
    schema = request.json_schema
    if not schema or request.grammar is not None:
        return None
    shapes = [_branch(b) for b in schema.get("anyOf") or [schema]]
    if any(s is None for s in shapes) or len({s[0] for s in shapes if s}) != 1:
        return None
    head = shapes[0][0] if shapes[0] else ""
    grammar = "root ::= " + " | ".join(f"({s[1]})" for s in shapes if s) + "\n"
    cap = request.max_tokens - HEAD_TOKENS if head == '{"verdict": "' else request.max_tokens
    return replace(request, messages=(*request.messages, Message("assistant", head)),
                   json_schema=None, grammar=grammar, max_tokens=max(1, cap)), head


__all__ = ["HEAD_TOKENS", "prefilled"]
