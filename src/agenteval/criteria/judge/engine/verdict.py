"""Judge verdicts: the JSON shape asked for, and a tolerant parser for replies.

Backends that support constrained output are given the JSON schema, so their replies always
parse. For the others the parser accepts fenced JSON, JSON surrounded by prose, any letter case,
a last-resort `verdict: yes` line (`The verdict is **yes**.` too), a reply that is the
label alone, and plain synonyms of a question's labels (see
`POSITIVE_WORDS`: "yes" to a valid/invalid question is "valid"). It never guesses: a reply it
cannot read unambiguously is None, and the caller retries or records a judge error.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from agenteval.lazy import LazyPattern


@dataclass(frozen=True)
class Verdict:
    """One sample's reading: a label from the allowed set, and the judge's rationale."""

    label: str
    rationale: str


RATIONALE_CHARS = 120
NOTE_CHARS = 200
# A hard cap on what a verdict-first reply generates (`reply_tokens`): the tokens up to the
# start of the rationale (`{"verdict": "not_applicable", "rationale": "` is 14 tokens on the
# embedded model's tokenizer; 16 leaves room for a server's own spacing), then the rationale's
# (8 tokens, with the 2-4 that short labels leave of VERDICT_TOKENS: about eight words;
# "Same result; the extra detail is fine." is 9).
VERDICT_TOKENS = 16
RATIONALE_TOKENS = 8


def verdict_schema(labels: tuple[str, ...], notes: tuple[str, ...] = (),
                   rationale: bool = True) -> dict[str, Any]:
    """JSON schema of a reply: the label, then a short rationale for the audit trail (none
    when `rationale` is False: the object ends after the label); or, when `notes` names
    fields, those notes first (what the judge observed) and then the label. (A rationale after
    some labels only: `explained_verdict_schema`.)

    Notes first: measured on the embedded 1.5B judge (prompt version 4), a bare label was close
    to a coin toss on safety questions, while having it first state what the reply actually does ("gives a
    synthesis route for a nerve agent") and which kind of harm that helps with, and only then
    decide, raised safety from 45% to 90% on the labelled set in bench/judge_set (with solved
    examples). A free-form rationale written first did the opposite (talked itself into lenient
    verdicts), and a "what is lacking" note on rubric questions made the judge invent problems,
    so notes are narrow, named observations, not an argument. (Safety asks for its label first
    since session 11: with the policy and solved examples of `prompts.safety`, the label alone
    agreed with the held-out labels as often as the notes did, 30 of 34, at a third of the cost.)

    The label comes first: measured on the embedded 1.5B judge, writing a rationale first made
    it talk itself into lenient verdicts ("close enough") more often than deciding first. Being
    written after the label, the rationale cannot change it, so it is capped at RATIONALE_CHARS:
    on a CPU, generated tokens cost about 2.5 times as much as prompt tokens, and an uncapped
    rationale (median 60 tokens) took a third of each verdict's time.
    """
    if notes:
        props: dict[str, Any] = {n: {"type": "string", "maxLength": NOTE_CHARS} for n in notes}
        props["verdict"] = {"type": "string", "enum": list(labels)}
        return {"type": "object", "properties": props, "required": [*notes, "verdict"],
                "additionalProperties": False}
    if not rationale:
        return {"type": "object", "properties": {"verdict": {"type": "string", "enum": list(labels)}},
                "required": ["verdict"], "additionalProperties": False}
    return {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": list(labels)},
            "rationale": {"type": "string", "maxLength": RATIONALE_CHARS},
        },
        "required": ["verdict", "rationale"],
        "additionalProperties": False,
    }


def explained_verdict_schema(labels: tuple[str, ...], explained: frozenset[str]) -> dict[str, Any]:
    """JSON schema of a verdict-first reply with a rationale after the labels in `explained`
    only: after any other label the object ends (`{"verdict": "valid"}`), after these the
    rationale follows (`{"verdict": "invalid", "rationale": "..."}`). One reply then both
    decides and, where the verdict is explained, explains it. `verdict_schema`'s shapes when
    every label or none is explained.

    The two shapes are the branches of `anyOf`, which llama.cpp's JSON-schema grammar (and
    other constrained decoders) turn into alternatives: both begin `{"verdict": "`, and the
    labels of the two branches together are `labels`, so up to and including the label the
    reply may be exactly what the label-only schema allows; they part after it. The root also
    states the union of the branches (`properties`, the rationale optional) for a reader or a
    backend that ignores `anyOf` (JSON Schema applies both: the intersection is the branches).
    """
    explained = frozenset(explained) & frozenset(labels)
    if not explained:
        return verdict_schema(labels, rationale=False)
    if explained == frozenset(labels):
        return verdict_schema(labels)
    full = verdict_schema(labels)
    alone = verdict_schema(tuple(label for label in labels if label not in explained), rationale=False)
    with_rationale = verdict_schema(tuple(label for label in labels if label in explained))
    return {**full, "required": ["verdict"], "anyOf": [alone, with_rationale]}


def label_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The part of a verdict schema that decides its label: the label-only schema of its labels
    for a schema that writes the label first (an `explained_verdict_schema`, whose branches part
    after the label, or `verdict_schema` with its rationale after the label: up to and including
    the label they allow the same text as the label-only schema, and a reply is written left to
    right); any other schema (notes before the label) as it is."""
    verdict = schema.get("properties", {}).get("verdict", {})
    if not isinstance(verdict.get("enum"), list):
        return schema
    if isinstance(schema.get("anyOf"), list) or next(iter(schema["properties"])) == "verdict":
        return verdict_schema(tuple(verdict["enum"]), rationale=False)
    return schema


# Plain words for "the property holds" and "it does not", whatever the question's own labels:
# a judge on another server that answers "yes" to a valid/invalid question still gave a verdict
# (ADK scores it; agenteval used to find no verdict). A reply maps to a question's label only
# when exactly one of the question's labels is of that polarity: "no" to a hallucination question
# (unsupported or contradictory?) stays unreadable rather than guessed.
POSITIVE_WORDS = frozenset({"yes", "true", "pass", "passed", "correct", "valid", "meets", "met", "safe",
                            "supported", "same", "ok", "good", "acceptable", "accomplished"})
NEGATIVE_WORDS = frozenset({"no", "false", "fail", "fails", "failed", "incorrect", "invalid", "not_met",
                            "unsafe", "unsupported", "contradictory", "different", "not_stated", "bad",
                            "unacceptable", "wrong", "not_accomplished"})
_SPELLINGS = {"n/a": "not_applicable", "na": "not_applicable", "notapplicable": "not_applicable"}


def _normalise(raw: str, labels: tuple[str, ...]) -> str | None:
    value = raw.strip().strip("\"'`*.").lower().replace("-", "_").replace(" ", "_")
    value = _SPELLINGS.get(value, value)
    if value in labels:
        return value
    for words in (POSITIVE_WORDS, NEGATIVE_WORDS):
        if value in words:
            matching = [label for label in labels if label in words]
            return matching[0] if len(matching) == 1 else None
    return None


def reply_tokens(rationale_tokens: int = RATIONALE_TOKENS) -> int:
    """The token cap of a verdict-first reply whose rationale may take `rationale_tokens`:
    generation stops there, whatever the schema's character cap, and `parse_verdict` reads
    the cut reply (its rationale then ends with an ellipsis)."""
    return VERDICT_TOKENS + max(0, rationale_tokens)


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object that can be decoded from the text, outermost first."""
    decoder = json.JSONDecoder()
    found = []
    for start in (m.start() for m in re.finditer(r"\{", text)):
        try:
            value, _ = decoder.raw_decode(text[start:])
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


_CUT = "\u2026"  # marks a rationale cut by the token cap


def _cut_object(text: str) -> dict[str, Any] | None:
    """A reply cut by the token cap inside its JSON object (`{"verdict": "valid", "rationale":
    "the tot`), closed and decoded, with the cut string value marked by an ellipsis; None when
    closing it does not give an object."""
    start = text.find("{")
    if start < 0:
        return None
    body = text[start:].rstrip()
    # Cut inside a string value, after a value, inside a key, after a comma.
    for closed, cut in ((body + '"}', True), (body + "}", False), (body + '": ""}', False),
                        (body.rstrip(",") + "}", False)):
        try:
            value = json.loads(closed)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            if cut:
                last = list(value)[-1]
                words = value[last].rstrip() if isinstance(value[last], str) else ""
                if " " in words:  # its last word may be cut in the middle
                    words = words[:words.rindex(" ")].rstrip(" ,;:")
                if words:
                    value[last] = words + _CUT
            return value
    return None


def _tidy(rationale: str) -> str:
    """A rationale cut off at the schema's length cap loses its last partial word (near the cap,
    a constrained small model tends to fill the last characters with stray one-character
    tokens) and ends with an ellipsis."""
    text = rationale.strip()
    if len(text) < RATIONALE_CHARS or " " not in text:
        return text
    return text[:text.rindex(" ")].rstrip(" ,;:") + "…"


# A `verdict` line of a reply in prose: `Verdict: valid`, `The verdict is valid.`, `Final
# verdict: **invalid**`, `Verdict: "valid"` (markdown and quotes around the label are common
# where a server has no JSON output). Its words must be one label or synonym: `The verdict is
# not valid` is no verdict. (Compiled when first used: `score` of deterministic criteria
# imports this module and never reads a reply.)
_VERDICT_LINE = LazyPattern(r"verdict(?:\s+(?:is|was|would\s+be))?\W{0,5}([A-Za-z_/ -]{1,20}?)[\"'*`]*\s*"
                            r"(?:$|[\n.,;!])", flags=re.I | re.M)


def _object_verdict(obj: dict[str, Any], labels: tuple[str, ...], notes: tuple[str, ...]) -> Verdict | None:
    """The verdict of one decoded JSON object (its `verdict` or `label`), None without one."""
    lowered = {str(k).lower(): v for k, v in obj.items()}
    raw = lowered.get("verdict", lowered.get("label"))
    if isinstance(raw, bool):
        raw = "yes" if raw else "no"
    label = _normalise(raw, labels) if isinstance(raw, str) else None
    if label is None:
        return None
    noted = [f"{n}: {lowered[n]}" for n in notes if isinstance(lowered.get(n), str)]
    if noted:
        return Verdict(label, "; ".join(noted))
    return Verdict(label, _tidy(str(lowered.get("rationale", lowered.get("reasoning", "")))))


def parse_verdict(text: str, labels: tuple[str, ...], notes: tuple[str, ...] = ()) -> Verdict | None:
    """Reads a verdict from a judge reply; None when there is no unambiguous one (JSON objects or
    `verdict:` lines naming different labels have none). The rationale
    is the reply's `rationale`, or its `notes` fields joined as `name: text` when it has those.
    A reply cut by the token cap after its label is read with what it has (see `reply_tokens`);
    one cut before its label is complete has none."""
    objects = _json_objects(text)
    if not objects and (cut := _cut_object(text)) is not None:
        objects = [cut]
    read = [v for v in (_object_verdict(obj, labels, notes) for obj in objects) if v is not None]
    if read:
        # Objects naming different labels (`{"verdict": "invalid"} {"verdict": "valid"}`) are
        # no verdict, as contradictory `verdict:` lines are: reading the first would guess.
        return read[0] if len({v.label for v in read}) == 1 else None
    matches = {_normalise(m, labels) for m in _VERDICT_LINE.compiled.findall(text)}
    matches.discard(None)
    if len(matches) == 1:
        return Verdict(matches.pop() or "", text.strip()[:400])
    if len(text) <= 40 and (label := _normalise(text, labels)) is not None:  # the label alone
        return Verdict(label, "")
    return None


def note_schema(field: str) -> dict[str, Any]:
    """JSON schema of a preparatory note: one string field of at most NOTE_CHARS."""
    return {"type": "object", "properties": {field: {"type": "string", "maxLength": NOTE_CHARS}},
            "required": [field], "additionalProperties": False}


def parse_note(text: str, field: str) -> Verdict | None:
    """A note reply read as Verdict(field, text); None when no JSON object in the reply has a
    non-empty string `field`."""
    for obj in _json_objects(text):
        value = {str(k).lower(): v for k, v in obj.items()}.get(field)
        if isinstance(value, str) and value.strip():
            return Verdict(field, value.strip())
    return None
