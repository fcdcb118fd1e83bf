"""The judge engine: asking judge models and deciding their verdicts, criterion-agnostic.

`service` asks (sampling, caching, retries, one-pass label probabilities from `logprobs`) and
`verdict` reads the replies; `decision` turns an answer into an immutable `Decision` (vote →
confidence → held to `min_confidence` → escalated → cross-checked, pure functions) and
`cascade` asks for the decisions of a criterion's questions; `spans` puts each judge call in the
case's trace. The engine imports neither the prompts nor the criteria.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenteval.lazy import names_from

if TYPE_CHECKING:
    from agenteval.criteria.judge.engine.cascade import Policy, decide_all
    from agenteval.criteria.judge.engine.decision import Decision, DecisionOptions, JudgeQuestion, decide
    from agenteval.criteria.judge.engine.service import JudgeAnswer, JudgeCache, JudgeService, Sample
    from agenteval.criteria.judge.engine.verdict import Verdict, parse_verdict

# Each name is imported from its module when first asked for: importing one module of the
# engine (`decision` for a criterion's questions) does not import the others.
__getattr__ = names_from(__name__, {
    **dict.fromkeys(["Policy", "decide_all"], "cascade"),
    **dict.fromkeys(["Decision", "DecisionOptions", "JudgeQuestion", "decide"], "decision"),
    **dict.fromkeys(["JudgeAnswer", "JudgeCache", "JudgeService", "Sample"], "service"),
    **dict.fromkeys(["Verdict", "parse_verdict"], "verdict"),
})

__all__ = ["Decision", "DecisionOptions", "JudgeAnswer", "JudgeCache", "JudgeQuestion", "JudgeService",
           "Policy", "Sample", "Verdict", "decide", "decide_all", "parse_verdict"]
