"""Eval configuration (`test_config.json` / `--config_file_path`) as written on disk."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agenteval.schema.base import OpenWireModel, WireModel

DEFAULT_CRITERIA: dict[str, float | dict[str, Any]] = {
    "tool_trajectory_avg_score": 1.0,
    "response_match_score": 0.8,
}


class CodeConfig(WireModel):
    """Where a custom metric's function lives: a dotted `module.function` path."""

    name: str
    args: list[Any] | None = None


class CustomMetricConfig(WireModel):
    """A custom metric declared in the config (it runs only if `criteria` names it too)."""

    code_config: CodeConfig
    metric_info: dict[str, Any] | None = None
    description: str = ""


class EvalConfig(WireModel):
    """The criteria to score with and their thresholds.

    `criteria` maps a metric name to a threshold or to a criterion object; each value is
    validated against its metric's criterion model by the registry. Extensions:
    `not_evaluated` — by default a criterion that could not be evaluated fails its case;
    `repeat_gating` — with repeated runs, a criterion passes when the mean of its per-run
    scores meets the threshold (`mean`), when every run passes (`all_runs`), or when any run
    passes (`any_run`).
    """

    criteria: dict[str, float | dict[str, Any]] = Field(
        default_factory=lambda: dict(DEFAULT_CRITERIA)
    )
    custom_metrics: dict[str, CustomMetricConfig] | None = None
    user_simulator_config: dict[str, Any] | None = None
    live_model_config: dict[str, Any] | None = None
    not_evaluated: Literal["fail", "ignore"] = "fail"
    repeat_gating: Literal["mean", "all_runs", "any_run"] = "mean"


class SessionFile(OpenWireModel):
    """An initial-session file (`initial_session_file`): app, user and starting state."""

    app_name: str = ""
    user_id: str = ""
    state: dict[str, Any] = Field(default_factory=dict)
