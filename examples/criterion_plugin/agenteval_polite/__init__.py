"""An example criterion plugin: `polite_v1`, 1.0 per invocation whose final response thanks the
user or says please, else 0.0; the mean over the case. Install this folder
(`pip install examples/criterion_plugin`) and name `polite_v1` in an eval config's criteria."""

from __future__ import annotations

from agenteval.criteria import CriterionResult, EvalContext, InvocationScore
from agenteval.criteria.base import Criterion, mean

WORDS = ("please", "thank")


class Polite(Criterion):
    """`polite_v1`: does each final response say please or thank you?"""

    def score(self, ctx: EvalContext) -> CriterionResult:
        scores = [1.0 if any(w in (inv.final_response.text() if inv.final_response else "").lower()
                             for w in WORDS) else 0.0 for inv in ctx.actual]
        return CriterionResult(mean(scores), [InvocationScore(s) for s in scores])
