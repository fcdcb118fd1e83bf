"""Finding text addressed to the judge in everything a judge question quotes.

Three layers keep such text from changing a verdict (see README "Injection-proof verdicts"):

1. the agent's answer is screened (`screen`): passages whose form addresses a grader are cut
   before the judge reads it, and kept in the record (`JudgeRecord.screened`);
2. every text written by the agent, its user or its tools is quoted as a JSON string literal
   (`prompts.quote`, tool results as JSON): a quote inside the material is escaped (`\\"`), so
   the material cannot close its quotation, and the system prompt calls quoted text data;
3. this module then reads every JSON string literal of the finished question, which covers the
   user's turns, the tool results and the reference as well as the answer, and records the
   judge-directed passages still in them (`JudgeRecord.flagged`): the same deterministic check
   as the screen, applied to material that is evidence and so is quoted whole, not cut.

With `judge_model_options.on_injection: "fail"` a question where any was found fails closed
(see `JudgeCriterion`); by default ("judge") the verdict on the screened, quoted material stands
and the reason says what was found.
"""

from __future__ import annotations

import json
import re

from agenteval.criteria.judge.prompting.screen import screen

# A JSON string literal: what `prompts.quote` and `json.dumps` write for any text.
_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def quoted(prompt: str) -> list[str]:
    """The texts of the JSON string literals in a question, in order (longer than a word)."""
    out = []
    for match in _LITERAL.finditer(prompt):
        try:
            text = json.loads(match.group(0))
        except ValueError:
            continue
        if isinstance(text, str) and len(text) > 3:
            out.append(text)
    return out


def find(text: str) -> tuple[str, ...]:
    """The passages of `text` addressed to a judge (empty when there are none)."""
    return screen(text).removed


def flagged(prompt: str, already: tuple[str, ...] | list[str] = ()) -> list[str]:
    """Judge-directed passages in a question's quoted material, except those `already` cut
    from the agent's answer (each once, in order)."""
    seen = set(already)
    out: list[str] = []
    for text in quoted(prompt):
        for passage in find(text):
            if passage not in seen:
                seen.add(passage)
                out.append(passage)
    return out


__all__ = ["find", "flagged", "quoted"]
