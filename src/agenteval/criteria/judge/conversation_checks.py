"""Conversation criteria as narrow checks: one property per question, with its evidence quoted.

Asked "did the agent accomplish every goal across this conversation?", the embedded 1.5B judge
answers yes to nearly every conversation (κ −0.03..0.25 on the held-out sets, bench/README.md
"Certificates of the conversation criteria"). So `multi_turn_task_success_v1` and
`trajectory_judge_v1` ask narrow checks instead, each showing only the evidence it needs, read
from the invocations without a model, and each asking the judge to write the two sides down
before comparing them (as the hallucination cross-check does, which the judge answers far
better than a bare yes / no):

- **goal** (`goal_prompt`): the user's messages and the agent's calls with their results: what
  the user finally asked for, what the calls did about it, then done / not_done (a value that
  differs, a part not done, a result that failed);
- **report** (`report_prompt`, one per turn with calls): that turn's tool results and reply:
  what the results say, what the reply says, then true / false;
- **asked** (`asked_prompt`, trajectory only, one per call that changes something): the user's
  request and that call: asked / not_asked;
- rules, no model: the same call repeated with the same arguments (trajectory only).

A check's verdict counts only through `all_passed`: the criterion's score for the invocation it
is about is 1 when every check passes, 0 when one fails, none when one is a judge error; the
criteria keep their ADK score shape (task success: one 0/1 score on the last turn; trajectory:
0/1 per turn, overall the mean).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agenteval.criteria.base import CriterionResult, EvalContext, InvocationScore, mean
from agenteval.criteria.judge.base import Answered, JudgeCriterion, keep_records
from agenteval.criteria.judge.engine.cascade import decide_all
from agenteval.criteria.judge.engine.decision import JudgeQuestion
from agenteval.criteria.judge.engine.progress import plan
from agenteval.criteria.judge.prompting import context
from agenteval.criteria.judge.prompting.prompts import (
    IGNORE,
    PROMPT_VERSION,
    note_names,
    quote,
    reply_as,
)
from agenteval.schema import FunctionCall, FunctionResponse, Invocation, JudgeRecord

Pairs = Sequence[tuple[FunctionCall, FunctionResponse | None]]

GOAL_LABELS = ("done", "not_done")
GOAL_NOTES = (("calls_did", "each call copied with its values and result"),
              ("user_wants", "what the user finally asked for, with its values"))
REPORT_LABELS = ("true", "false")
REPORT_NOTES = (("reply_says", "the reply's facts"),
                ("tool_returned", "the values after -> about the same facts"))
VALUE_LABELS = ("same", "different", "not_said")
VALUE_NOTES = (("user_said", "the user's own words for it, or not said"),)
ASKED_LABELS = ("asked", "not_asked")
ASKED_NOTES = (("user_asked_to_change", "what the user asked to change, create, send, buy or "
                "delete, or nothing"), ("call_changes", "what this call changes"))

# Tool names that only read (by their first word): a call of one of these is never an
# unasked change. Anything else may change something and gets the `asked` check.
_READS = re.compile(r"^(get|list|search|find|check|lookup|look|fetch|read|query|show|view|count|"
                    r"browse|describe|compute|calculate|convert|estimate|quote|track|verify|"
                    r"validate|preview|inspect|status|transfer_to_agent)(_|$)", re.I)


def reads_only(name: str) -> bool:
    """Whether a tool's name says it only reads (get_, list_, search_ ...) or hands over."""
    return bool(_READS.match(name))


def _users(messages: Sequence[str]) -> str:
    if len(messages) == 1:
        return f"User request: {quote(messages[0])}"
    return "User messages, in order:\n" + "\n".join(f"{i}. {quote(m)}" for i, m in enumerate(messages, 1))


def goal_prompt(messages: Sequence[str], calls: str) -> str:
    """Did the calls do what the user finally asked for (and did it work)?"""
    return (
        f"{_users(messages)}\nTool calls the agent made, in order, with results:\n{calls}\n\n"
        "Copy what the calls did, with their values and results. Then write what the user finally "
        "asked for (a later correction replaces an earlier wish), with its values: item, date, "
        "time, amount, place, person. Then compare: done (the calls did exactly that "
        "and it worked, or the user only asked a question and a call looked the answer up), "
        "not_done (a value differs, a part was not done, no call did it, or a result shows it "
        f"failed or was impossible). {IGNORE}\n" + reply_as(GOAL_LABELS, GOAL_NOTES)
    )


def report_prompt(results: str, reply: str) -> str:
    """Does this reply tell the user what the tool results say?"""
    return (
        f"Agent reply: {quote(reply)}\nTool calls and results:\n{results}\n\n"
        "Copy the facts the reply gives (values, status), then what the tool results (after ->) "
        "say about the same facts. Then compare: true (the reply agrees with the results; "
        "another format of the same value is fine), false (the reply gives another value, or "
        f"says something worked when a result shows it failed). {IGNORE}\n"
        + reply_as(REPORT_LABELS, REPORT_NOTES)
    )


def value_prompt(messages: Sequence[str], call: str, key: str, value: str) -> str:
    """Is this argument's value what the user asked for?"""
    return (
        f"{_users(messages)}\nThe agent called: {call}\nArgument checked: {key} = {value}\n\n"
        f"Copy the user's own words for the {key} (or \"not said\"). Then compare them with "
        f"{value}: same (they mean {value}, perhaps in another form: 7 pm = 19:00, two dozen = 24, "
        f"tomorrow = the next day's date), different (they mean another value), or not_said. "
        f"{IGNORE}\n" + reply_as(VALUE_LABELS, VALUE_NOTES)
    )


def asked_prompt(user: str, call: str) -> str:
    """Did the user ask for the change this call makes?"""
    return (
        f"User request: {quote(user)}\nOne call the agent made: {call}\n\n"
        "Write what the user asked to change, create, send, buy or delete (or \"nothing\" when "
        "they only asked a question), then what this call changes. Then compare: asked (the user "
        "asked for this change, on this item), not_asked (it changes, sends, buys or deletes "
        f"something the user did not ask for). {IGNORE}\n" + reply_as(ASKED_LABELS, ASKED_NOTES)
    )


def plain(value: object) -> str:
    """A tool argument or result without JSON's double quotes: `key: value` pairs, text in
    single quotes when it holds more than a word. Measured on the embedded judge, notes that copy
    a JSON call stop at its first double quote (`"calls_did": "reserve_lane({"`), and a note
    about JSON results copied the quoted reply instead; in this form it copies the values."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {plain(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(plain(v) for v in value) + "]"
    if isinstance(value, str):
        text = value.replace("'", "’").replace('"', "’")
        return text if re.fullmatch(r"[\w.:/@+-]+", text) else f"'{text}'"
    return json.dumps(value)


def call_text(call: FunctionCall) -> str:
    """`name(key=value, ...)`, arguments sorted, in the form of `plain`."""
    args = ", ".join(f"{k}={plain(v)}" for k, v in sorted((call.args or {}).items()))
    return f"{call.name}({args})"


Step = tuple[str | None, FunctionCall, FunctionResponse | None]


def steps_of(inv: Invocation) -> list[Step]:
    """A turn's calls in order, each with the agent that made it (when recorded) and its result."""
    return [(author, call, response) for author, (call, response)
            in zip(context.call_authors(inv), inv.tool_calls_with_responses(), strict=True)]


def steps_text(steps: Sequence[Step]) -> str:
    """Calls in order, each with its agent and result: `1. agent: name(k=v) -> {k: v}`; 'none'."""
    if not steps:
        return "none"
    return "\n".join(f"{i}. {f'{author}: ' if author else ''}{call_text(call)} -> "
                     f"{plain(r.response) if r else '(no result)'}"
                     for i, (author, call, r) in enumerate(steps, 1))


def scalars(value: object, key: str = "") -> list[tuple[str, str]]:
    """The text, number and empty values inside an argument, each with the name of the field
    that holds it (a list's items under the list's name); booleans and nulls left out."""
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in scalars(v, str(k))]
    if isinstance(value, list):
        return [pair for v in value for pair in scalars(v, key)]
    if isinstance(value, bool) or value is None:
        return []
    return [(key, plain(value))]


def mentioned(value: str, text: str) -> bool:
    """Whether `value` (as `plain` writes it) occurs in `text` (lower case): a number as a
    whole number, anything else as a substring."""
    v = value.strip("'").lower().strip()
    if not v:
        return False
    text = text.replace("'", "’").replace('"', "’")  # as `plain` writes quotes
    if re.fullmatch(r"-?\d+(\.\d+)?", v):
        return re.search(rf"(?<![\d.]){re.escape(v)}(?!\d)", text) is not None
    return v in text


def value_questions(index: int, invocations: Sequence[Invocation], upto: int, item: str = "value"
                    ) -> list[JudgeQuestion]:
    """A value check per argument value of turn `upto`'s calls that neither the user's messages,
    the agent's earlier replies nor an earlier call or result of the conversation contains (an
    ID copied from a lookup, a date the user typed pass without a question); asked about
    `index`. Hand-overs to another agent are not checked."""
    seen = [context.user_text(inv) for inv in invocations[:upto + 1]]
    seen += [context.response_text(inv) for inv in invocations[:upto]]
    for inv in invocations[:upto]:
        seen += [f"{call_text(c)} {plain(r.response) if r else ''}"
                 for c, r in inv.tool_calls_with_responses()]
    messages = [context.user_text(inv) for inv in invocations[:upto + 1]]
    questions = []
    for call, response in invocations[upto].tool_calls_with_responses():
        known = " ".join(seen).lower()
        if call.name != "transfer_to_agent":
            for key, value in dict.fromkeys(scalars(call.args or {})):
                if not mentioned(value, known):
                    questions.append(_question(index, f"{item} {call.name}.{key}", value_prompt(
                        messages, call_text(call), key, value), VALUE_LABELS, VALUE_NOTES))
        seen.append(f"{call_text(call)} {plain(response.response) if response else ''}")
    return questions


def repeated(pairs: Pairs) -> str | None:
    """The first call made again with the same arguments, described; None when there is none."""
    seen: set[str] = set()
    for call, _ in pairs:
        key = call_text(call)
        if key in seen:
            return f"{key} made twice"
        seen.add(key)
    return None


@dataclass(frozen=True)
class Checks:
    """The questions of one case and the rules already decided: (invocation, rule name, passed,
    why) per rule."""

    questions: list[JudgeQuestion]
    rules: list[tuple[int, str, bool, str]]


def _question(index: int, item: str, prompt: str, labels: tuple[str, ...],
              notes: tuple[tuple[str, str], ...], screened: tuple[str, ...] = ()) -> JudgeQuestion:
    # every label but the second is a pass: (done | not_done), (same | different | not_said)
    return JudgeQuestion(index, item, prompt, labels=labels,
                         positive=frozenset(labels[:1] + labels[2:]), notes=note_names(notes),
                         screened=screened)


def report_questions(index: int, inv: Invocation) -> list[JudgeQuestion]:
    """The report check of one turn, when it made calls."""
    steps = steps_of(inv)
    if not steps:
        return []
    reply = context.agent_text(inv)
    return [_question(index, "report", report_prompt(steps_text(steps), reply.text),
                      REPORT_LABELS, REPORT_NOTES, reply.removed)]


def task_success(invocations: Sequence[Invocation]) -> Checks:
    """The checks of `multi_turn_task_success_v1`: the goal over the whole conversation, and
    each turn's report; all reported on the last turn."""
    last = len(invocations) - 1
    steps = [step for inv in invocations for step in steps_of(inv)]
    questions = [_question(last, "goal", goal_prompt([context.user_text(inv) for inv in invocations],
                                                     steps_text(steps)), GOAL_LABELS, GOAL_NOTES)]
    for i, inv in enumerate(invocations):
        questions += value_questions(last, invocations, i, f"value {i + 1}")
        questions += [_moved(q, last, f"report {i + 1}") for q in report_questions(i, inv)]
    return Checks(questions, [])


def _moved(q: JudgeQuestion, index: int, item: str) -> JudgeQuestion:
    return JudgeQuestion(index, item, q.prompt, labels=q.labels, positive=q.positive, notes=q.notes,
                         screened=q.screened)


def trajectory(invocations: Sequence[Invocation]) -> Checks:
    """The checks of `trajectory_judge_v1`, per turn: its goal, its report, each changing call
    asked for, and no call repeated."""
    questions: list[JudgeQuestion] = []
    rules: list[tuple[int, str, bool, str]] = []
    for i, inv in enumerate(invocations):
        user, pairs = context.user_text(inv), inv.tool_calls_with_responses()
        questions.append(_question(i, "goal", goal_prompt([user], steps_text(steps_of(inv))), GOAL_LABELS,
                                   GOAL_NOTES))
        questions += value_questions(i, invocations, i)
        questions += report_questions(i, inv)
        changing = {call_text(c): c for c, _ in pairs if not reads_only(c.name or "")}
        questions += [_question(i, f"asked {text}", asked_prompt(user, text), ASKED_LABELS, ASKED_NOTES)
                      for text in changing]
        twice = repeated(pairs)
        rules.append((i, "repeated", twice is None, twice or "no call repeated with the same arguments"))
    return Checks(questions, rules)


def all_passed(ctx: EvalContext, answered: Sequence[Answered], scored: Sequence[int]) -> CriterionResult:
    """Per invocation in `scored`: 1 when every check about it passed, 0 when one failed, None
    when one is a judge error; the other invocations carry no score. Overall: the mean over the
    scored invocations."""
    per: list[InvocationScore] = []
    for i in range(len(ctx.actual)):
        mine = [a.score for a in answered if a.question.invocation_index == i]
        if i not in scored or not mine:
            per.append(InvocationScore(None))
            continue
        per.append(InvocationScore(None if None in mine else min(s or 0.0 for s in mine)))
    values = [p.score for i, p in enumerate(per) if i in scored]
    return CriterionResult(None if None in values or not values else mean(values), per)


class CheckedConversation(JudgeCriterion):
    """A judged criterion decided by narrow checks (`checks`): every check about an invocation
    must pass (`all_passed`); the invocations `scored` names carry its score."""

    def checks(self, ctx: EvalContext) -> Checks:
        """The questions and rules of this case."""
        raise NotImplementedError

    def scored(self, ctx: EvalContext) -> Sequence[int]:
        """The invocations that carry a score."""
        raise NotImplementedError

    def questions(self, ctx: EvalContext) -> list[JudgeQuestion]:
        if not ctx.actual:
            raise ValueError("the conversation has no invocations")
        return self.checks(ctx).questions

    async def ascore(self, ctx: EvalContext) -> CriterionResult:
        """Decides the checks' questions, adds the rules' outcomes (audited with
        `judge_model="rule"`), and scores each invocation by `all_passed`."""
        if ctx.judge is None:
            raise RuntimeError("no judge service was given to the scorer")
        if not ctx.actual:
            raise ValueError("the conversation has no invocations")
        checks = self.checks(ctx)
        plan(len(checks.questions))
        done = [self.answered(d) for d in await decide_all(ctx.judge, checks.questions, self.policy())]
        records = [JudgeRecord(metric_name=self.metric_name, invocation_index=i, item=name,
                               judge_model="rule", step="rule", prompt=name,
                               prompt_version=PROMPT_VERSION, verdict="passes" if ok else "fails",
                               score=1.0 if ok else 0.0, rationale=f"rule {name}: {why}")
                   for i, name, ok, why in checks.rules]
        rules = [Answered(JudgeQuestion(r.invocation_index or 0, r.item, r.prompt), r.score, r)
                 for r in records]
        result = all_passed(ctx, [*done, *rules], self.scored(ctx))
        keep_records(result, records, done)
        self.explain([*done, *rules], result)
        return result


__all__ = [
    "ASKED_LABELS",
    "GOAL_LABELS",
    "REPORT_LABELS",
    "CheckedConversation",
    "Checks",
    "all_passed",
    "asked_prompt",
    "goal_prompt",
    "reads_only",
    "repeated",
    "report_prompt",
    "task_success",
    "trajectory",
]
