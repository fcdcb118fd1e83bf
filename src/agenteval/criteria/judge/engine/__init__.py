"""The judge engine: asking judge models and deciding their verdicts, criterion-agnostic.

`service` asks (sampling, caching, retries, one-pass label probabilities from `logprobs`) and
`verdict` reads the replies; `decision` turns an answer into an immutable `Decision` (vote →
confidence → held to `min_confidence` → escalated → cross-checked, pure functions) and
`cascade` asks for the decisions of a criterion's questions; `spans` puts each judge call in the
case's trace. The engine imports neither the prompts nor the criteria.
"""

from agenteval.criteria.judge.engine.cascade import Policy, decide_all
from agenteval.criteria.judge.engine.decision import Decision, DecisionOptions, JudgeQuestion, decide
from agenteval.criteria.judge.engine.service import JudgeAnswer, JudgeCache, JudgeService, Sample
from agenteval.criteria.judge.engine.verdict import Verdict, parse_verdict

__all__ = ["Decision", "DecisionOptions", "JudgeAnswer", "JudgeCache", "JudgeQuestion", "JudgeService",
           "Policy", "Sample", "Verdict", "decide", "decide_all", "parse_verdict"]
