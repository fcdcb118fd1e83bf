"""Scores must equal ADK 2.13.0's exactly on the recorded parity corpus."""

import asyncio
import json

import pytest

from agenteval.criteria import resolve_metrics
from agenteval.datasets import load_eval_config, load_eval_set
from agenteval.runner import score_recorded
from tests.conftest import PARITY

CONFIGS = {
    "config_EXACT": "tool_trajectory_avg_score/EXACT",
    "config_IN_ORDER": "tool_trajectory_avg_score/IN_ORDER",
    "config_ANY_ORDER": "tool_trajectory_avg_score/ANY_ORDER",
    "config_rouge": "response_match_score",
}


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_scores_equal_adk(config: str) -> None:
    reference = json.loads((PARITY / "adk_scores.json").read_text())["scores"]
    metrics = resolve_metrics(load_eval_config(PARITY / f"{config}.json"),
                                         include_informational=False)
    result = asyncio.run(score_recorded(load_eval_set(PARITY / "expected.evalset.json"),
                                        load_eval_set(PARITY / "actual.evalset.json"), metrics))
    assert len(result.eval_case_results) == len(reference) == 60
    for case in result.eval_case_results:
        want = reference[case.eval_id][CONFIGS[config]]
        (overall,) = case.overall_eval_metric_results
        per = [p.eval_metric_results[0].score for p in case.eval_metric_result_per_invocation]
        assert (overall.score, per) == (want["overall"], want["per_invocation"]), case.eval_id
