"""Failure groups: a run's failing cases grouped by what failed ("12 cases: `lookup.q` differs").

Each failing case (failed or not evaluated) gets its reasons, short and the same for every case
they apply to, taken from its runs against the expected invocations:

* a tool call's argument that differs, is missing or is unexpected (`lookup.q` differs), a tool
  expected and not called, or called and not expected — calls paired by name, in order, within
  each invocation;
* an inference error's type (`TimeoutError`), a criterion that could not be evaluated;
* each failing criterion the tool reasons do not already explain (`safety_v1 failed`): a
  trajectory criterion is explained when the case has any tool reason; one not evaluated is
  that (`safety_v1 not evaluated`), never "failed".

A case with several reasons is in several groups. Groups are listed largest first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agenteval.reporting.case_query import CaseFacts, case_facts, error_type
from agenteval.schema import EvalStatus, FunctionCall, Invocation
from agenteval.verdicts.outcome import FAILING, CaseOutcome

_TOOL_CRITERIA = ("trajectory", "tool")


@dataclass(frozen=True)
class FailureGroup:
    """One reason and the cases (eval ids, in case order) it applies to."""

    reason: str
    eval_ids: list[str]


def call_reasons(expected: Sequence[FunctionCall], actual: Sequence[FunctionCall]) -> list[str]:
    """How `actual` tool calls differ from `expected` ones (paired by name, in order)."""
    reasons: list[str] = []
    unused = list(actual)
    for want in expected:
        got = next((c for c in unused if c.name == want.name), None)
        if got is None:
            reasons.append(f"`{want.name}` not called")
            continue
        unused.remove(got)
        wanted, given = want.args or {}, got.args or {}
        for key in wanted:
            if key not in given:
                reasons.append(f"`{want.name}.{key}` missing")
            elif given[key] != wanted[key]:
                reasons.append(f"`{want.name}.{key}` differs")
        reasons += [f"`{want.name}.{key}` unexpected" for key in given if key not in wanted]
    reasons += [f"`{c.name}` called, not expected" for c in unused]
    return reasons


def _invocation_reasons(actual: Invocation, expected: Invocation | None) -> list[str]:
    if expected is None:
        return []
    return call_reasons(expected.tool_calls(), actual.tool_calls())


def case_reasons(case: CaseOutcome) -> list[str]:
    """The reasons of one failing case, each once, in the order found."""
    tool: list[str] = []
    other: list[str] = []
    for run in case.runs:
        if run.error_message:
            other.append(error_type(run.error_message))
        other += [f"`{e.metric_name}` not evaluated" for e in run.metric_errors]
        for per in run.eval_metric_result_per_invocation:
            tool += _invocation_reasons(per.actual_invocation, per.expected_invocation)
    for m in case.failing_metrics():
        explained = tool and any(word in m.metric_name for word in _TOOL_CRITERIA)
        if m.eval_status == EvalStatus.NOT_EVALUATED:  # (its error, if any, said so already)
            other.append(f"`{m.metric_name}` not evaluated")
        elif not explained:
            other.append(f"`{m.metric_name}` failed")
    return list(dict.fromkeys(tool + other))


def failure_groups(cases: Iterable[CaseOutcome]) -> list[FailureGroup]:
    """The failing cases of a run grouped by reason, largest group first (ties by reason)."""
    return _grouped((c.eval_id, case_reasons(c)) for c in cases if c.status in FAILING)


def facts_and_groups(cases: Iterable[CaseOutcome]) -> tuple[list[CaseFacts], list[FailureGroup]]:
    """`run_facts` and `failure_groups` of `cases` in one pass (what a run's explorer shows: a
    large run read once, a case at a time, keeping only these)."""
    facts, failing = [], []
    for i, case in enumerate(cases):
        facts.append(case_facts(i, case))
        if case.status in FAILING:
            failing.append((case.eval_id, case_reasons(case)))
    return facts, _grouped(failing)


def _grouped(failing: Iterable[tuple[str, list[str]]]) -> list[FailureGroup]:
    groups: dict[str, list[str]] = {}
    for eval_id, reasons in failing:
        for reason in reasons or ["failed (no reason recorded)"]:
            groups.setdefault(reason, []).append(eval_id)
    return [FailureGroup(r, ids) for r, ids in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))]


__all__ = ["FailureGroup", "call_reasons", "case_reasons", "facts_and_groups", "failure_groups"]
