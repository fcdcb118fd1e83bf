"""Search, filter and sort over one run's cases (the web's run view, issue 27).

Each case is reduced once to its `CaseFacts`: the text of its prompts and answers (every run,
lower-cased), the tools it called and their arguments, its error types (an inference error's type;
`X not evaluated` for a criterion's metric error), failing criteria, its
score (the mean of its gating criteria's means), agent seconds and tokens. `query_cases` keeps
the cases matching every condition of a `CaseQuery` and sorts them; `facets` lists the values
a run offers to filter by.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from agenteval.schema import EvalStatus, content_text
from agenteval.verdicts.outcome import CaseOutcome

SortKey = Literal["position", "score", "latency", "tokens"]
_ERROR_TYPE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Timeout))\b")


@dataclass(frozen=True)
class CaseFacts:
    """What a case is searched, filtered and sorted by."""

    position: int
    eval_id: str
    status: EvalStatus
    score: float | None
    seconds: float | None
    tokens: float | None
    text: str  # prompts and answers of every run, lower-cased
    tools: frozenset[str]
    arguments: frozenset[str]  # `tool.arg` and `tool.arg=value` (value as JSON)
    errors: frozenset[str]
    failing: frozenset[str]  # failing or not evaluated gating criteria


@dataclass(frozen=True)
class CaseQuery:
    """Conditions a case must all meet (None: any), and the order of the result.

    `text` matches prompts, answers and the eval id, case-insensitively; `argument` is a tool
    argument as `tool.arg` or `tool.arg=value` (value as JSON, e.g. `lookup.q="paris"`); `error`
    an error type (`facets` lists them); the score range is inclusive and leaves out unscored
    cases. Sorting by a measure puts cases without it last."""

    text: str | None = None
    status: Literal["passed", "failed", "not_evaluated"] | None = None
    criterion: str | None = None
    tool: str | None = None
    argument: str | None = None
    error: str | None = None
    min_score: float | None = None
    max_score: float | None = None
    sort: SortKey = "position"
    descending: bool = False


def error_type(message: str) -> str:
    """An inference error's type: its leading exception name (`TimeoutError: ...`), else
    `inference error`."""
    match = _ERROR_TYPE.match(message.strip())
    return match.group(1) if match else "inference error"


def _value(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def case_facts(position: int, case: CaseOutcome) -> CaseFacts:
    """The facts of `case` (at `position` in its run)."""
    texts = [case.eval_id]
    tools: set[str] = set()
    arguments: set[str] = set()
    errors: set[str] = set()
    for run in case.runs:
        if run.error_message:
            errors.add(error_type(run.error_message))
        # A metric error is why a criterion (or its score on one invocation) was not
        # evaluated: tagged as such, its words are on the case's own page.
        errors.update(f"{e.metric_name} not evaluated"
                      + ("" if e.invocation_index is None else " on an invocation")
                      for e in run.metric_errors)
        for per in run.eval_metric_result_per_invocation:
            inv = per.actual_invocation
            texts += [content_text(inv.user_content), content_text(inv.final_response)]
            for call in inv.tool_calls():
                tools.add(call.name or "")
                for key, value in (call.args or {}).items():
                    arguments.update((f"{call.name}.{key}", f"{call.name}.{key}={_value(value)}"))
    means = [m.mean for m in case.gating_metrics() if m.mean is not None]
    return CaseFacts(position=position, eval_id=case.eval_id, status=case.status,
                     score=sum(means) / len(means) if means else None, seconds=case.duration(),
                     tokens=case.tokens(), text="\n".join(texts).lower(), tools=frozenset(tools),
                     arguments=frozenset(arguments), errors=frozenset(errors),
                     failing=frozenset(m.metric_name for m in case.failing_metrics()))


def run_facts(cases: Iterable[CaseOutcome]) -> list[CaseFacts]:
    """The facts of a run's cases, in case order."""
    return [case_facts(i, c) for i, c in enumerate(cases)]


_STATUS = {"passed": EvalStatus.PASSED, "failed": EvalStatus.FAILED,
           "not_evaluated": EvalStatus.NOT_EVALUATED}


def _argument_matches(wanted: str, arguments: frozenset[str]) -> bool:
    if wanted in arguments:
        return True
    if "=" not in wanted:
        return False
    # A bare value is also taken as a JSON string: `lookup.q=paris` finds `lookup.q="paris"`.
    name, value = wanted.split("=", 1)
    return f"{name}={json.dumps(value)}" in arguments


def matches(f: CaseFacts, q: CaseQuery) -> bool:
    """Whether case facts `f` meet every condition of `q`."""
    if q.text and q.text.lower() not in f.text:
        return False
    if q.status is not None and f.status != _STATUS[q.status]:
        return False
    if q.criterion is not None and q.criterion not in f.failing:
        return False
    if q.tool is not None and q.tool not in f.tools:
        return False
    if q.argument is not None and not _argument_matches(q.argument, f.arguments):
        return False
    if q.error is not None and q.error not in f.errors:
        return False
    if q.min_score is not None or q.max_score is not None:
        if f.score is None:
            return False
        if q.min_score is not None and f.score < q.min_score:
            return False
        if q.max_score is not None and f.score > q.max_score:
            return False
    return True


def _measure(f: CaseFacts, key: SortKey) -> float | None:
    return {"position": float(f.position), "score": f.score, "latency": f.seconds,
            "tokens": f.tokens}[key]


def query_cases(facts: Sequence[CaseFacts], q: CaseQuery) -> list[CaseFacts]:
    """The cases meeting `q`, sorted by `q.sort` (ties in case order; missing measures last)."""
    hits = [f for f in facts if matches(f, q)]
    present = [f for f in hits if _measure(f, q.sort) is not None]
    missing = [f for f in hits if _measure(f, q.sort) is None]
    present.sort(key=lambda f: (_measure(f, q.sort) or 0.0) * (-1 if q.descending else 1))
    return present + missing


@dataclass(frozen=True)
class Facets:
    """The values a run's cases can be filtered by, each sorted."""

    criteria: list[str]
    tools: list[str]
    arguments: list[str]  # `tool.arg` names only
    errors: list[str]


def facets(facts: Iterable[CaseFacts]) -> Facets:
    """Every failing criterion, tool, argument name and error type in `facts`."""
    criteria: set[str] = set()
    tools: set[str] = set()
    arguments: set[str] = set()
    errors: set[str] = set()
    for f in facts:
        criteria |= f.failing
        tools |= f.tools
        arguments.update(a for a in f.arguments if "=" not in a)
        errors |= f.errors
    return Facets(sorted(criteria), sorted(tools), sorted(arguments), sorted(errors))


__all__ = ["CaseFacts", "CaseQuery", "Facets", "SortKey", "case_facts", "error_type", "facets",
           "matches", "query_cases", "run_facts"]
