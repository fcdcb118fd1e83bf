"""The runner: inference and scoring phases, over one result document."""

from agenteval.runner.recorded import pair_runs, score_recorded
from agenteval.runner.scoring import CaseRun, case_status, metric_status, score_case

__all__ = ["CaseRun", "case_status", "metric_status", "pair_runs", "score_case", "score_recorded"]
