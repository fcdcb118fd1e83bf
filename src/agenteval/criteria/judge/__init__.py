"""LLM-judged criteria, in three floors, each importing only the ones below it:

- `engine/`: asking judges and deciding their verdicts (`JudgeService`, verdict parsing,
  log-probability confidence, the immutable `Decision` and its cascade);
- `prompting/`: what the judge is shown (prompt texts, solved examples, screening);
- the criteria themselves (`base.JudgeCriterion` and the modules beside it), which build the
  questions and combine the decisions into scores and reasons.

Its names are imported when first asked for (`__getattr__`): a criterion's module imports the
engine's modules it needs, not the whole engine (the service brings the model types, and
`score` of deterministic criteria asks no judge).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenteval.lazy import names_from

if TYPE_CHECKING:
    from agenteval.criteria.judge.engine.service import JudgeAnswer, JudgeCache, JudgeService
    from agenteval.criteria.judge.engine.verdict import Verdict, parse_verdict

__getattr__ = names_from(__name__, {
    **dict.fromkeys(["JudgeAnswer", "JudgeCache", "JudgeService"], "engine.service"),
    **dict.fromkeys(["Verdict", "parse_verdict"], "engine.verdict"),
})

__all__ = ["JudgeAnswer", "JudgeCache", "JudgeService", "Verdict", "parse_verdict"]
