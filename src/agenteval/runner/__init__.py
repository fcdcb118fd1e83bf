"""The runner: one entry point for every front end (`run`, `rescore`), over one result document.

A job (`EvalJob`, `ScoreJob`) says what to do; `Services` hold the run's models, limits and
judge cache; the result is a `Run` (header + one `EvalSetResult` per eval set). The phases
underneath (inference, scoring) are exported for tools that drive them directly.

Each name is imported from its module when first asked for (`__getattr__`), so that importing
one module of the runner (`agenteval.runner.streamed` for `score`) does not import the others
(`evaluate` brings the agents, the model clients and httpx: a tenth of a second at start-up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenteval.lazy import names_from, names_over_submodules

if TYPE_CHECKING:
    from agenteval.runner.evaluate import EvalSetRequest, run_evaluation
    from agenteval.runner.inference import infer_case, session_spec
    from agenteval.runner.job import EvalJob, JobOptions, ScoreJob, weak_judges, with_judge_model
    from agenteval.runner.plan import RunPlan, prepare
    from agenteval.runner.recorded import load_actual, pair_runs, score_recorded
    from agenteval.runner.run import Run, check_judges, rescore, run, start
    from agenteval.runner.scoring import CaseRun, case_status, metric_status, score_case
    from agenteval.runner.selection import Selection, config_beside, resolve_config, select
    from agenteval.runner.services import Services

_HOME = {
    **dict.fromkeys(["EvalSetRequest", "run_evaluation"], "evaluate"),
    **dict.fromkeys(["infer_case", "session_spec"], "inference"),
    **dict.fromkeys(["EvalJob", "JobOptions", "ScoreJob", "weak_judges", "with_judge_model"], "job"),
    **dict.fromkeys(["RunPlan", "prepare"], "plan"),
    **dict.fromkeys(["load_actual", "pair_runs", "score_recorded"], "recorded"),
    **dict.fromkeys(["Run", "check_judges", "rescore", "run", "start"], "run"),
    **dict.fromkeys(["CaseRun", "case_status", "metric_status", "score_case"], "scoring"),
    **dict.fromkeys(["Selection", "config_beside", "resolve_config", "select"], "selection"),
    "Services": "services",
}


names_over_submodules(__name__, _HOME)  # (`run`: the function, not its submodule)
__getattr__ = names_from(__name__, _HOME)


__all__ = [
    "CaseRun",
    "EvalJob",
    "EvalSetRequest",
    "JobOptions",
    "Run",
    "RunPlan",
    "ScoreJob",
    "Selection",
    "Services",
    "case_status",
    "check_judges",
    "config_beside",
    "infer_case",
    "load_actual",
    "metric_status",
    "pair_runs",
    "prepare",
    "rescore",
    "resolve_config",
    "run",
    "run_evaluation",
    "score_case",
    "score_recorded",
    "select",
    "session_spec",
    "start",
    "weak_judges",
    "with_judge_model",
]
