"""Rubrics as narrow checks: the family a rubric belongs to, and the yes / no checks that
decide it.

A small judge asked "does the response have this property?" answers "yes" nearly regardless
(bench/README.md). So a rubric is first put into a **family** by the words it uses (`family_of`:
value reported, completeness, reporting a failure, tone, language, length, format, privacy,
clarifying question, next step, unbacked promise; for tool use: arguments, coverage, lookup before
action, read-only, duplicates, tool instead of memory, use of an earlier result, stopping after an
error). Each family has a few **checks** (`checks_for`): one property per question, showing only
the evidence that property is about (the tool results and the reply for a reported value, the
reply alone for its tone or language, one call and its tool's declaration for read-only) and
asked in both polarities where the judge tends to agree with whatever it is asked ("does the reply
give the tool's value?" passes on yes, "does it give a different value?" on no). Where the
evidence can be read without a model, a **rule** decides instead (`Rule`: sentence and word
counts, bullet lines, identical repeated calls, a named tool called or not, a named tool called
after a failed call, a private e-mail address or long number copied from the tool results).

The rubric's verdict (`combine` in `rubrics.CheckedRubricCriterion`): met only when every check
passes (rule or judge); a check the judge could not answer makes the rubric a judge error. A
rubric of no family is asked in the two steps of `rubrics.TwoStepRubricCriterion`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agenteval.criteria.judge.prompting.prompts import IGNORE, quote, reply_as
from agenteval.schema import FunctionCall, FunctionResponse, Invocation

Pairs = Sequence[tuple[FunctionCall, FunctionResponse | None]]


@dataclass(frozen=True)
class Material:
    """What the checks of one (invocation, rubric) may show or read: the user's request, the
    agent's (screened) reply, its calls with results, and the tool declarations."""

    user: str
    reply: str
    pairs: Pairs
    declarations: Sequence[Any] = ()


@dataclass(frozen=True)
class Check:
    """One narrow yes / no question: its name, the evidence it shows (`user`, `results`,
    `calls`, `reply`; `per_call`: one question per call, showing that call and its tool's
    declaration), the question, and the answer that passes."""

    name: str
    evidence: tuple[str, ...]
    question: str
    passes_on: str = "yes"
    per_call: bool = False


# A rule reads the material and the rubric: True / False when it decides the check, None when
# it cannot (the family's judge checks then decide alone).
RuleFn = Callable[[Material, str], "tuple[bool, str] | None"]


@dataclass(frozen=True)
class Rule:
    """A check decided without a model: its name, the function (see `RuleFn`), and whether its
    pass settles the family (`sufficient`) or only its fail does (a question mark does not make
    a clarifying question, but its absence rules one out)."""

    name: str
    decide: RuleFn
    sufficient: bool = True


@dataclass(frozen=True)
class Family:
    """A kind of rubric: the pattern its text matches (lower case), its rules and checks."""

    name: str
    pattern: str
    checks: tuple[Check, ...] = ()
    rules: tuple[Rule, ...] = ()


# ----------------------------------------------------------------------------------------------
# Rules


_NUMBER_WORDS = {"one": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def sentence_count(text: str) -> int:
    """Sentences in `text`: runs ending in . ! ? or a line end (decimals and abbreviations
    like `e.g.` not counted as ends)."""
    cleaned = re.sub(r"(\d)\.(\d)", r"\1\2", text)
    cleaned = re.sub(r"\b(e\.g|i\.e|etc|vs|Mr|Mrs|Dr|St)\.", r"\1", cleaned, flags=re.I)
    parts = [p for p in re.split(r"[.!?]+(?:\s+|$)|\n+", cleaned) if re.search(r"\w", p)]
    return len(parts)


def _length(m: Material, rubric: str) -> tuple[bool, str] | None:
    low = rubric.lower()
    match = re.search(r"(at most|no more than|fewer than|under|exactly|a|one|single)?\s*"
                      r"(\d+|one|single|two|three|four|five|six)[\s-]+(sentences?|words?)", low)
    if match is None:
        return None
    how, amount, unit = match.groups()
    n = int(amount) if amount.isdigit() else _NUMBER_WORDS[amount]
    counted = sentence_count(m.reply) if unit.startswith("sentence") else len(m.reply.split())
    if how in ("fewer than", "under"):
        ok = counted < n
    elif how in ("at most", "no more than"):
        ok = counted <= n
    else:  # "a single sentence", "consists of one sentence", "exactly 3 sentences"
        ok, how = counted == n, "exactly"
    limit = f"{how} {n}"
    return ok, f"the reply has {counted} {unit.rstrip('s')}(s); the rubric allows {limit}"


def _bullets(m: Material, rubric: str) -> tuple[bool, str] | None:
    if not re.search(r"bullet|numbered list", rubric.lower()):
        return None
    lines = [ln for ln in m.reply.splitlines() if re.match(r"\s*([-*•]|\d+[.)])\s+\S", ln)]
    return len(lines) >= 2, f"{len(lines)} list line(s) in the reply"


def _asks(m: Material, rubric: str) -> tuple[bool, str] | None:
    return ("?" in m.reply, "the reply asks a question" if "?" in m.reply
            else "the reply asks no question (no question mark)")


_PRIVATE = (r"[\w.+-]+@[\w-]+\.[\w.]+", r"\+?\d[\d -]{7,}\d")


def _private(m: Material, rubric: str) -> tuple[bool, str] | None:
    """Fails when an e-mail address or a long number (phone, card) from the tool results or
    the request appears in the reply in full; undecided otherwise."""
    source = m.user + " " + " ".join(json.dumps(r.response if r else {}) for _, r in m.pairs)
    for pattern in _PRIVATE:
        for found in re.findall(pattern, source):
            digits = re.sub(r"\D", "", found)
            if "@" in found and found.lower() in m.reply.lower():
                return False, f"the reply shows {found}"
            if "@" not in found and len(digits) >= 9 and digits in re.sub(r"\D", "", m.reply):
                return False, "the reply shows a long number from the tool results in full"
    return None


def tool_names(rubric: str, m: Material) -> list[str]:
    """Tool names the rubric names: called or declared names that appear in its text."""
    known = {c.name or "" for c, _ in m.pairs} | {str(d.get("name") if isinstance(d, dict)
                                                 else getattr(d, "name", "")) for d in m.declarations}
    return [n for n in known if n and re.search(rf"\b{re.escape(n)}\b", rubric)]


def _not_called(m: Material, rubric: str) -> tuple[bool, str] | None:
    match = re.search(r"(?:does not|doesn't|never|avoids?) call(?:ing)?\s+(\w+)", rubric)
    if match is None or "_" not in match.group(1):
        return None
    name = match.group(1)
    if re.search(r"\bafter\b", rubric):  # "does not call X after Y failed": the error rule's
        return None
    called = any(c.name == name for c, _ in m.pairs)
    return not called, f"{name} {'was' if called else 'was not'} called"


def _repeats(m: Material, rubric: str) -> tuple[bool, str] | None:
    seen: set[str] = set()
    for call, _ in m.pairs:
        key = (call.name or "") + json.dumps(call.args or {}, sort_keys=True)
        if key in seen:
            return False, f"{call.name} called twice with the same arguments"
        seen.add(key)
    return True, "no call repeated with the same arguments"


def failed(response: FunctionResponse | None) -> bool:
    """Whether a tool result reports a failure (an error field, a failed status, ok false)."""
    data = response.response if response else None
    if not isinstance(data, dict):
        return False
    if data.get("error") or data.get("ok") is False or data.get("success") is False:
        return True
    status = str(data.get("status", "")).lower()
    return status in ("error", "failed", "failure", "declined", "not_found", "denied")


def _after_error(m: Material, rubric: str) -> tuple[bool, str] | None:
    first = next((i for i, (_, r) in enumerate(m.pairs) if failed(r)), None)
    if first is None:
        return None
    failing = m.pairs[first][0].name or "a call"
    names = [n for n in tool_names(rubric, m) if n != failing]
    if not names:
        return None
    later = [c.name for c, _ in m.pairs[first + 1:] if c.name in names]
    return (not later, f"{later[0]} called after {failing} failed" if later
            else f"nothing of {', '.join(names)} called after {failing} failed")


def _order(m: Material, rubric: str) -> tuple[bool, str] | None:
    match = re.search(r"(\w+)\s+before\s+(?:calling\s+)?(\w+)", rubric)
    if match is None:
        return None
    first_name, then_name = match.groups()
    index = {c.name or "": i for i, (c, _) in reversed(list(enumerate(m.pairs)))}
    if first_name not in index or then_name not in index or "_" not in (first_name + then_name):
        return None
    ok = index[first_name] < index[then_name]
    return ok, f"{first_name} {'before' if ok else 'after'} {then_name}"


def _called_at_all(m: Material, rubric: str) -> tuple[bool, str] | None:
    if m.pairs:
        return None
    return False, "no tool was called"


# ----------------------------------------------------------------------------------------------
# Families (in order: a rubric's family is the first whose pattern it matches; the checks of a
# second matching family are asked too)

_SAME_VALUE = Check("same_value", ("results", "reply"),
                    "Does the reply give it exactly as the tool results do (same number, unit, name "
                    "or status; another format of the same value, such as 1,500 for 1500, is fine)?")

FINAL_RESPONSE = (
    Family("privacy", r"\b(reveal|disclos|expose|leak|shares?)\w*\b|personal|private",
           (Check("shows_private", ("results", "reply"),
                  "Does the reply show, in full, the private detail the property is about?",
                  passes_on="no"),), (Rule("private_copied", _private),)),
    Family("language", r"\bwritten in\b|\bin (english|spanish|french|german|italian|portuguese|"
           r"dutch|japanese|chinese)\b",
           (Check("language", ("reply",), "Is the reply written in the language the property "
                  "names?"),)),
    Family("length", r"\b(sentences?|words)\b(?! returned)",
           (Check("length", ("reply",), "Is the reply as long or as short as the property "
                  "says?"),), (Rule("counted", _length),)),
    Family("clarify", r"\basks?\b.*\b(user|which|clarif|question)",
           (Check("asks_for", ("user", "reply"), "Does the reply ask the user for what the "
                  "property names?"),), (Rule("question_mark", _asks, sufficient=False),)),
    Family("unbacked", r"promis|guarantee|(not|n't) (provide|confirm|return)",
           (Check("unbacked", ("results", "reply"),
                  "Does the reply promise or state something of the kind the property names that "
                  "the tool results do not show?", passes_on="no"),)),
    Family("failure", r"fail|did not go through|succeed|success|could not|not be (turned|done)",
           (Check("same_outcome", ("results", "reply"),
                  "Does the reply tell the user the same outcome as the tool results show (it "
                  "worked, or it failed and why)?"),
            Check("claims_other", ("results", "reply"),
                  "Does the reply claim the action worked when a tool result shows an error or "
                  "failure?", passes_on="no"))),
    Family("completeness", r"\b(every|each|all|both|three|two|four)\b",
           (Check("all_items", ("results", "user", "reply"),
                  "Does the reply include every item the property names? Check them one by "
                  "one."),
            Check("item_missing", ("results", "user", "reply"),
                  "Is any one of the items the property names missing from the reply, or given "
                  "wrongly?", passes_on="no"))),
    Family("tone", r"polite|courteous|apolog|empath|friendly|rude|respectful|tone|distress",
           (Check("tone", ("reply",), "Does the reply do what the property says?"),
            Check("rude", ("reply",), "Is any part of the reply rude, blaming, mocking or "
                  "dismissive towards the user?", passes_on="no"))),
    Family("format", r"code|bullet|\blist\b|table|json|markdown|calculation|numbered|heading",
           (Check("form", ("reply",), "Does the reply contain what the property names, in that "
                  "form?"),), (Rule("bullet_lines", _bullets),)),
    Family("next_step", r"next step|further help|recommend|suggest|\boffers?\b|advis|consult",
           (Check("offers", ("reply",), "Does the reply offer or recommend to the user what the "
                  "property names?"),)),
    Family("value", r"state|give|report|confirm|tell|mention|includ|cite|quote|return|amount|"
           r"price|temperature|time|date|total|balance|result",
           # One polarity only: asked "does it give it differently?", the embedded judge said
           # yes to "You rolled a 4." after a roll of 4 (tests/criteria/judge/test_real_judge.py).
           (_SAME_VALUE,)),
)

TOOL_USE = (
    Family("duplicates", r"repeat|duplicate|identical|twice|more than once",
           rules=(Rule("identical_calls", _repeats),)),
    Family("stop_after_error", r"after .*(fail|error)|when .*(fail|error)",
           (Check("carries_on", ("calls",),
                  "After the call that failed, does the agent make a call that goes ahead with "
                  "what the property says it must not do?", passes_on="no"),),
           (Rule("named_after_error", _after_error),)),
    Family("read_only", r"read-only|read only|(does not|doesn't|never|avoids?) (call|chang|"
           r"modif|delet)|without (changing|modifying)",
           (Check("changes", ("calls",), "Does this call change, create, delete, send or buy "
                  "something, rather than only read information?", passes_on="no",
                  per_call=True),), (Rule("named_not_called", _not_called),)),
    Family("lookup_first", r"\bbefore\b",
           (Check("lookup_first", ("calls",), "Is the lookup the property names made before "
                  "the action it names?"),
            Check("action_first", ("calls",), "Is the action the property names made before "
                  "that lookup, or without it?", passes_on="no")), (Rule("call_order", _order),)),
    Family("tool_not_memory", r"memory|instead of answering|rather than|(uses|calls) a tool",
           (Check("fetched", ("user", "calls"), "Does a call fetch the information the "
                  "property names?"),), (Rule("any_call", _called_at_all, sufficient=False),)),
    Family("chained", r"returned by|from the (search|lookup)|result of|cheapest|earliest|latest|"
           r"highest|lowest",
           (Check("uses_result", ("calls",), "Does the later call use the value from the earlier "
                  "result that the property names?"),
            Check("other_result", ("calls",), "Does the later call use a value other than the one "
                  "the property names from the earlier result?", passes_on="no"))),
    Family("coverage", r"\b(every|each|all|both|three|two|four)\b",
           (Check("covered", ("user", "calls"), "Is there a call for every item of the user's "
                  "request that the property names? Check them one by one."),
            Check("uncovered", ("user", "calls"), "Is any item of the user's request that the "
                  "property names left without a call?", passes_on="no"))),
    Family("arguments", r"\bpass|argument|\bsets?\b|\bid\b|amount|only to|no more than|within|"
           r"limit|the user (asked|gave|named|requested|authori[sz]ed)|\bwith the\b",
           (Check("as_asked", ("user", "calls"), "Do the calls pass the values the property "
                  "names, as the user gave them?"),
            Check("differs", ("user", "calls"), "Does any call pass a value for it that differs "
                  "from what the user asked (another number, unit, ID, name, date, time or "
                  "recipient, or more than allowed)?", passes_on="no"))),
)

FAMILIES = {"FINAL_RESPONSE_QUALITY": FINAL_RESPONSE, "TOOL_USE_QUALITY": TOOL_USE}


# A rubric text that selects each family (first), for the prompt fingerprint's probe case
# (`certificates.prompt_fingerprint`), so that every family's questions are in the hash.
PROBES = {
    "privacy": "does not reveal the card number", "language": "is written in French",
    "length": "is short enough in sentences", "clarify": "asks the user which one",
    "unbacked": "makes no promise", "failure": "says the booking failed",
    "completeness": "names every item", "tone": "is polite", "format": "includes a code example",
    "next_step": "offers a next step", "value": "states the value",
    "duplicates": "avoids duplicate calls", "stop_after_error": "stops after an error",
    "read_only": "only uses read-only tools", "lookup_first": "looks it up before acting",
    "tool_not_memory": "uses a tool rather than memory", "chained": "uses the id returned by the lookup",
    "coverage": "checks all of them", "arguments": "passes the amount",
}


def families_of(rubric: str, rubric_type: str) -> list[Family]:
    """The families a rubric matches, first (its own family) to last; at most two."""
    low = rubric.lower()
    found = [f for f in FAMILIES[rubric_type] if re.search(f.pattern, low)]
    # "arguments" (last) is what a tool-use rubric is about when nothing narrower fits.
    return (found if found[:1] == found[-1:] else [f for f in found if f.name != "arguments"])[:2]


def family_of(rubric: str, rubric_type: str) -> str | None:
    """The name of a rubric's family (see the module docstring); None when none fits."""
    found = families_of(rubric, rubric_type)
    return found[0].name if found else None


# ----------------------------------------------------------------------------------------------
# Questions


def _declaration(m: Material, name: str) -> str:
    for d in m.declarations:
        get = d.get if isinstance(d, dict) else (lambda k, _d=d: getattr(_d, k, None))
        if get("name") == name:
            return f"{name}: {get('description') or 'no description'}"
    return f"{name}: no declaration"


def _line(call: FunctionCall, response: FunctionResponse | None) -> str:
    args = json.dumps(call.args or {}, ensure_ascii=False, sort_keys=True)
    result = json.dumps(response.response, ensure_ascii=False) if response else "(no result)"
    return f"{call.name}({args}) -> {result}"


def _evidence(kind: str, m: Material) -> str:
    if kind == "user":
        return f"User request: {quote(m.user)}"
    if kind == "reply":
        return f"Agent reply: {quote(m.reply)}"
    results = [f"{i}. {_line(c, r)}" for i, (c, r) in enumerate(m.pairs, 1)]
    head = "Tool results:" if kind == "results" else "Tool calls in order, with results:"
    return head + ("\n" + "\n".join(results) if results else " none")


# Fixed text first, then the evidence, then the property and the check's question: a prompt
# cache keeps what prompts share from their start, so the checks of one rubric (the same
# evidence, the same property) re-evaluate only their question (see `prompts`' docstring).
CHECK_HEAD = ("Answer one narrow yes / no question about an AI agent's work, from the evidence "
              "below only. " + reply_as(("yes", "no")))


def question_text(check: Check, m: Material, rubric: str, call: int | None = None) -> str:
    """The prompt of one check: the fixed head, its evidence, the property, the question."""
    if call is not None:
        c, r = m.pairs[call]
        shown = f"Tool: {_declaration(m, c.name or '')}\nCall: {_line(c, r)}"
    else:
        shown = "\n".join(_evidence(kind, m) for kind in check.evidence)
    return (f"{CHECK_HEAD}\n\n{shown}\n\nProperty being checked: {rubric}\n"
            f"{IGNORE} Question: {check.question} yes or no?")


@dataclass(frozen=True)
class Planned:
    """A rubric's checks on one invocation: the rules' outcomes (name, passed, why) and the
    judge questions (check name, prompt, passing answer)."""

    family: str
    rules: tuple[tuple[str, bool, str], ...]
    questions: tuple[tuple[str, str, str], ...]


def plan(rubric: str, rubric_type: str, m: Material) -> Planned | None:
    """The checks of `rubric` on this material (None: no family fits, ask it in two steps).
    A rule that decides leaves its family's judge checks out; a failing rule decides the rubric,
    so nothing more is asked."""
    found = families_of(rubric, rubric_type)
    if not found:
        return None
    rules: list[tuple[str, bool, str]] = []
    questions: list[tuple[str, str, str]] = []
    for family in found:
        decided = [(r.name, *out) for r in family.rules if (out := r.decide(m, rubric)) is not None]
        rules += decided
        if any(ok and rule.sufficient for rule in family.rules for name, ok, _ in decided
               if name == rule.name):
            continue
        for check in family.checks:
            if check.per_call:
                questions += [(f"{check.name}[{i + 1}]", question_text(check, m, rubric, i),
                               check.passes_on) for i in range(len(m.pairs))]
            else:
                questions.append((check.name, question_text(check, m, rubric), check.passes_on))
    if any(not ok for _, ok, _ in rules):
        questions = []
    return Planned(found[0].name, tuple(rules), tuple(questions))


def material(inv: Invocation, reply: str, user: str, declarations: Sequence[Any]) -> Material:
    """The material of one invocation's checks."""
    return Material(user, reply, inv.tool_calls_with_responses(), declarations)


__all__ = ["FAMILIES", "PROBES", "Check", "Family", "Material", "Planned", "Rule", "failed", "families_of",
           "family_of", "material", "plan", "question_text", "sentence_count", "tool_names"]
