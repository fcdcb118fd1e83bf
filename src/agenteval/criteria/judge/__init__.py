"""LLM-judged criteria: prompts, sampling and voting, and the criteria themselves."""

from agenteval.criteria.judge.service import JudgeAnswer, JudgeCache, JudgeService
from agenteval.criteria.judge.verdict import Verdict, parse_verdict

__all__ = ["JudgeAnswer", "JudgeCache", "JudgeService", "Verdict", "parse_verdict"]
