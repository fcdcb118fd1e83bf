"""`agenteval collect`: a live OTLP/HTTP receiver that assembles an agent's spans into
conversations as they arrive, scores each (against its eval case, or with reference-free
criteria) and records it in the run history."""

from agenteval.collector.assembler import Assembler, Conversation, Limits
from agenteval.collector.receiver import Collector, Receiver
from agenteval.collector.scoring import ConversationScorer, JudgeBudget, Outcome, Target

__all__ = ["Assembler", "Collector", "Conversation", "ConversationScorer", "JudgeBudget", "Limits",
           "Outcome", "Receiver", "Target"]
