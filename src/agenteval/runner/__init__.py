"""The runner: inference and scoring phases, over one result document."""

from agenteval.runner.aggregate import all_passed, summarise
from agenteval.runner.evaluate import EvalSetRequest, run_evaluation
from agenteval.runner.inference import infer_case, session_spec
from agenteval.runner.recorded import pair_runs, score_recorded
from agenteval.runner.scoring import CaseRun, case_status, metric_status, score_case

__all__ = [
    "CaseRun",
    "EvalSetRequest",
    "all_passed",
    "case_status",
    "infer_case",
    "metric_status",
    "pair_runs",
    "run_evaluation",
    "score_case",
    "score_recorded",
    "session_spec",
    "summarise",
]
