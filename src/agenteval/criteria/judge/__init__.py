"""LLM-judged criteria, in three floors, each importing only the ones below it:

- `engine/`: asking judges and deciding their verdicts (`JudgeService`, verdict parsing,
  log-probability confidence, the immutable `Decision` and its cascade);
- `prompting/`: what the judge is shown (prompt texts, solved examples, screening);
- the criteria themselves (`base.JudgeCriterion` and the modules beside it), which build the
  questions and combine the decisions into scores and reasons.
"""

from agenteval.criteria.judge.engine import JudgeAnswer, JudgeCache, JudgeService, Verdict, parse_verdict

__all__ = ["JudgeAnswer", "JudgeCache", "JudgeService", "Verdict", "parse_verdict"]
