"""Verdicts over a result document: statistics and gating over repeated runs, and each case's
outcome. Pure computation over `agenteval.schema`, below the runner, the store and reporting."""

from agenteval.verdicts.aggregate import all_passed, summarise, summarise_case
from agenteval.verdicts.outcome import CaseOutcome, SetCounts, invocation_tokens, outcomes, set_counts

__all__ = [
    "CaseOutcome",
    "SetCounts",
    "all_passed",
    "invocation_tokens",
    "outcomes",
    "set_counts",
    "summarise",
    "summarise_case",
]
