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

A verdict whose rationale follows its label is asked in two calls on such an engine
(`label_first`, then `rationale_after`): the label under a grammar that ends the object after it
(the label's probabilities are those of the same tokens), then, only after a label that gets a
rationale, the reply begun up to the rationale's text (`{"verdict": "invalid", "rationale": "`)
under a grammar for the rationale alone. The second call evaluates the 6 tokens of
`", "rationale": "` with its prompt, in the slot that holds everything before them, instead of
decoding them one step each; the rationale's token cap is what the one reply would have left
it, so the reply text is the one reply's (measured on the embedded judge,
`bench/lab_rationale_split.py`: the same text and label probabilities, 0.21-0.23 s less per
failing verdict on a quiet 2-core machine). A passing verdict is the first call alone.

A notes-first reply (the hallucination cross-check's `{"sentence_says": "...", "context_says":
"...", "verdict": "same"}`) is asked in one call per field on such an engine (`note_first`, then
`field_after`): each note under the reply's grammar, stopped at its closing quote by a stop
string (so its tokens are the ones the reply written whole would have), then the reply begun up
to the next field's value; the label's call has the log-probabilities. The field names between
the notes (`", "context_says": "`, `", "verdict": "`: 12 forced tokens) are then evaluated with
the prompt, in the slot that holds everything before them, instead of decoded one step each.
Measured on the embedded judge (`bench/lab_check_split.py`): the same reply text; the label's
probabilities within about 0.02 of the reply written whole (its prefix is evaluated with the
prompt instead of token by token; the reply written whole itself varies by a few thousandths
from one run to the next), the same label and side of the shipped threshold.

A label call (the reply begun up to its label's value, a grammar for the label and the closing
`"}` alone: a label-only verdict, the first of a split verdict, a cross-check's last call) is
asked for one token (`label_token`): the labels of every built-in question differ in their
first token, so that token decides the label and carries its probabilities
(`logprobs.label_distribution` reads nothing after it), and the rest of the reply is forced: the
label's other tokens, `"}`, the end of turn, each a decode step of its own (2-4 per label call,
half of a passing verdict's generation). `first_label` reads the label off that token
(`label_call` tells which requests are label calls); the reply text is the head, the label and
`"}`, as the grammar allows nothing else. Only a label written in several tokens that gets a
rationale still needs its tokens counted (the rationale's cap), and is asked whole again.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from agenteval.criteria.judge.engine.verdict import verdict_schema
from agenteval.models.base import Message, ModelRequest

# `{"verdict": "` on the embedded model's tokenizer: the tokens a verdict-first reply no longer
# generates, taken off its token cap so that its rationale is as long as before.
HEAD_TOKENS = 5
# What follows a label that gets a rationale, and the tokens the embedded model writes it in
# (each forced by the grammar; measured, `bench/lab_rationale_split.py`): `rationale_after`
# begins its reply with them, so they come off the rationale's token cap as in the one reply.
RATIONALE_HEAD = '", "rationale": "'
RATIONALE_HEAD_TOKENS = 6
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


def _rationale(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The rationale property of a verdict-first schema (in one of its branches), or None when
    its label comes after notes or no label is followed by a rationale."""
    for branch in schema.get("anyOf") or [schema]:
        names = list(branch.get("properties") or {})
        if names[:2] == ["verdict", "rationale"]:
            prop: dict[str, Any] = branch["properties"]["rationale"]
            return prop
    return None


def label_first(request: ModelRequest) -> tuple[ModelRequest, str] | None:
    """The first of a verdict's two calls (see the module): `request`, under a verdict-first
    schema whose rationale follows some label, asked for the label alone, prefilled
    (`prefilled`; its token cap as the one reply's); None for any other schema."""
    schema = request.json_schema
    if not schema or request.grammar is not None or _rationale(schema) is None:
        return None
    labels = tuple(schema.get("properties", {}).get("verdict", {}).get("enum") or ())
    if not labels:
        return None
    return prefilled(replace(request, json_schema=verdict_schema(labels, rationale=False)))


def rationale_after(request: ModelRequest, label: str, label_tokens: int) -> tuple[ModelRequest, str]:
    """The second call: `request` (the verdict-first request `label_first` was made from) with
    its reply begun up to the rationale's text after `label` (written in `label_tokens` tokens
    by the first call), a grammar for the rationale and the closing `"}`, no log-probabilities,
    and the token cap the one reply would have left its rationale; and that beginning."""
    head = '{"verdict": "' + json.dumps(label)[1:-1] + RATIONALE_HEAD
    prop = _rationale(request.json_schema or {}) or {}
    cap = request.max_tokens - HEAD_TOKENS - label_tokens - RATIONALE_HEAD_TOKENS
    grammar = f"root ::= {_string(prop)} {_lit(chr(34) + '}')}\n"
    return replace(request, messages=(*request.messages, Message("assistant", head)),
                   json_schema=None, grammar=grammar, logprobs=0, max_tokens=max(1, cap)), head


def _noted(schema: dict[str, Any]) -> list[str] | None:
    """The fields of a notes-first verdict schema (string notes, then the label), or None."""
    props = schema.get("properties") or {}
    names = list(props)
    if schema.get("anyOf") or len(names) < 2 or names[-1] != "verdict" or \
            not isinstance(props["verdict"].get("enum"), list):
        return None
    if any(props[n].get("type") != "string" or "enum" in props[n] for n in names[:-1]):
        return None
    return names


def note_first(request: ModelRequest) -> tuple[ModelRequest, str] | None:
    """The first call of a notes-first reply (see the module): `request` prefilled
    (`prefilled`), stopped at its first note's closing quote, without log-probabilities; and
    its head. None for any other schema."""
    begun = prefilled(request) if request.json_schema and _noted(request.json_schema) else None
    return None if begun is None else (replace(begun[0], stop=('"',), logprobs=0), begun[1])


def field_after(request: ModelRequest, written: str, index: int, used: int
                ) -> tuple[ModelRequest, str]:
    """The next call of a notes-first reply to `request` (the request written whole): `written`
    is the reply up to the end of field `index`'s value (its closing quote left out), `used` the
    tokens generated so far. The reply begun up to the next field's value, under a grammar for
    the rest; a note's call stopped at its closing quote without log-probabilities, the label's
    with the request's. Its token cap is what the reply written whole would have left (the field
    names counted at about three characters a token); and the beginning."""
    schema = request.json_schema or {}
    props = schema["properties"]
    names = (_noted(schema) or [])[index + 1:]
    joint = f'", "{names[0]}": "'
    parts: list[str] = []
    for i, name in enumerate(names):
        if i:
            parts.append(_lit(f'", "{name}": "'))
        parts.append("(" + " | ".join(_lit(x) for x in props[name]["enum"]) + ")"
                     if name == "verdict" else _string(props[name]))
    parts.append(_lit('"}'))
    head = written + joint
    cap = max(1, request.max_tokens - used - len(joint) // 3)
    last = names[0] == "verdict"
    return replace(request, messages=(*request.messages, Message("assistant", head)),
                   json_schema=None, grammar="root ::= " + " ".join(parts) + "\n",
                   stop=() if last else ('"',), logprobs=request.logprobs if last else 0,
                   max_tokens=cap), head


_LABEL_CALL = re.compile(r'root ::= (\()?\((?P<labels>"[^"\\]*"(?: \| "[^"\\]*")*)\) "\\"\}"(?(1)\))\n')


def label_call(request: ModelRequest) -> tuple[str, ...]:
    """The labels of a label call (see the module): `request`'s reply is begun in the prompt and
    its grammar allows one of the labels and the closing `"}` alone (`prefilled` of a label-only
    schema, `label_first`, `field_after`'s last call); () for any other request."""
    if request.grammar is None or not request.messages or request.messages[-1].role != "assistant":
        return ()
    match = _LABEL_CALL.fullmatch(request.grammar)
    if match is None:
        return ()
    labels = tuple(json.loads(x) for x in match["labels"].split(" | "))
    return labels if len(set(labels)) == len(labels) else ()


def first_label(value: str, labels: tuple[str, ...]) -> tuple[str, bool] | None:
    """The label a verdict's value must become once its first token wrote `value`, and whether
    that token wrote all of it; None when `value` could still become several labels (labels
    sharing a first token) or none."""
    matching = [label for label in labels
                if value and ((label + '"').startswith(value) or value.startswith(label + '"'))]
    if len(matching) != 1:
        return None
    label = matching[0]
    return label, value == label or value.startswith(label + '"')


def label_token(request: ModelRequest) -> ModelRequest:
    """A label call (`label_call`) asked for the label's first token alone (see the module)."""
    return replace(request, max_tokens=1)


__all__ = ["HEAD_TOKENS", "RATIONALE_HEAD", "RATIONALE_HEAD_TOKENS", "field_after", "first_label",
           "label_call", "label_first", "label_token", "note_first", "prefilled", "rationale_after"]
