"""Differential check: `agenteval score` against ADK 2.13's own `LocalEvalService.evaluate` on
seeded random eval sets and configs (tests/cli/adk_differential.py). Every case's final status
and every overall and per-invocation (score, status) of every criterion must be identical,
floats to the bit. Runs where google-adk is installed."""

from __future__ import annotations

import asyncio
import json
import logging
import warnings
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from tests.cli import adk_differential as gen

pytest.importorskip("google.adk.evaluation.local_eval_service",
                    reason="ADK's evaluation is not importable: it needs google-adk's eval extra "
                           "(pip install 'google-adk[eval]==2.13.0')")

Scores = dict[str, Any]


async def _adk(expected_file: Path, actual_file: Path, config_file: Path | None) -> Scores:
    from google.adk.agents import LlmAgent
    from google.adk.evaluation.base_eval_service import (
        EvaluateConfig,
        EvaluateRequest,
        InferenceResult,
        InferenceStatus,
    )
    from google.adk.evaluation.eval_config import (
        get_eval_metrics_from_config,
        get_evaluation_criteria_or_default,
    )
    from google.adk.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
    from google.adk.evaluation.local_eval_service import LocalEvalService
    from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file

    expected = load_eval_set_from_file(str(expected_file), expected_file.name.split(".")[0])
    actual = {c.eval_id: c.conversation for c in load_eval_set_from_file(str(actual_file), "a").eval_cases}
    metrics = get_eval_metrics_from_config(
        get_evaluation_criteria_or_default(None if config_file is None else str(config_file)))
    manager = InMemoryEvalSetsManager()
    manager.create_eval_set("app", expected.eval_set_id)
    for case in expected.eval_cases:
        manager.add_eval_case("app", expected.eval_set_id, case)
    service = LocalEvalService(root_agent=LlmAgent(name="a", model="gemini-2.5-flash"),
                               eval_sets_manager=manager)
    inferences = [InferenceResult(app_name="app", eval_set_id=expected.eval_set_id, eval_case_id=c.eval_id,
                                  inferences=actual[c.eval_id], session_id=None,
                                  status=InferenceStatus.SUCCESS) for c in expected.eval_cases]
    request = EvaluateRequest(inference_results=inferences,
                              evaluate_config=EvaluateConfig(eval_metrics=metrics))
    return {r.eval_id: adk_case(r) async for r in service.evaluate(request)}


def adk_case(r: Any) -> list[Any]:
    """[final status, {metric: [score, status]}, per invocation {metric: [score, status]}]."""
    return [r.final_eval_status.value,
            {m.metric_name: [m.score, m.eval_status.value] for m in r.overall_eval_metric_results},
            [{m.metric_name: [m.score, m.eval_status.value] for m in p.eval_metric_results}
             for p in r.eval_metric_result_per_invocation]]


def adk_scores(expected_file: Path, actual_file: Path, config_file: Path | None) -> Scores:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.CRITICAL)
        try:
            return asyncio.run(_adk(expected_file, actual_file, config_file))
        finally:
            logging.disable(logging.NOTSET)


def agenteval_scores(expected_file: Path, actual_file: Path, config_file: Path | None, out: Path) -> Scores:
    args = ["score", str(expected_file), "--actual", str(actual_file), "-o", str(out)]
    if config_file is not None and config_file.name != "test_config.json":
        args += ["--config_file_path", str(config_file)]  # test_config.json: found beside the set
    result = CliRunner().invoke(cli, args)
    assert result.exit_code in (0, 1), result.output
    return {r["eval_id"]: [
        r["final_eval_status"],
        {m["metric_name"]: [m.get("score"), m["eval_status"]] for m in r["overall_eval_metric_results"]},
        [{m["metric_name"]: [m.get("score"), m["eval_status"]] for m in p["eval_metric_results"]}
         for p in r["eval_metric_result_per_invocation"]]]
        for r in json.loads(out.read_text())["eval_case_results"]}


GATING = ("tool_trajectory_avg_score", "response_match_score")


def as_documented(theirs: Scores, config: Any) -> Scores:
    """ADK's results with agenteval's one documented difference applied (README, "Where agenteval
    differs from ADK"): a gating criterion that could not be evaluated fails the case unless the
    config says `"not_evaluated": "ignore"`; ADK skips it."""
    if config is not None and config.get("not_evaluated") == "ignore":
        return theirs
    out = {}
    for case, (status, overall, per) in theirs.items():
        unevaluated = any(m in GATING and s == 3 for m, (_, s) in overall.items())
        out[case] = [2 if unevaluated else status, overall, per]
    return out


def differences(ours: Scores, theirs: Scores) -> list[str]:
    """Case by case, what differs (types too: 1 and 1.0 are not the same score)."""
    out = []
    for case in sorted(set(ours) | set(theirs)):
        a, b = ours.get(case), theirs.get(case)
        if json.dumps(a, sort_keys=True) != json.dumps(b, sort_keys=True):
            out.append(f"{case}:\n  agenteval {json.dumps(a, sort_keys=True)}\n"
                       f"  ADK       {json.dumps(b, sort_keys=True)}")
    return out


@pytest.mark.parametrize(("make", "seed", "n_cases"),
                         [(gen.scenario, seed, 12) for seed in range(12)]
                         + [(gen.legacy_scenario, seed, 6) for seed in range(100, 104)])
def test_random_sets_score_as_adk_scores_them(make: Any, seed: int, n_cases: int, tmp_path: Path) -> None:
    """New-format sets, and legacy list files (seeds from 100), with the config beside the set
    in every other seed."""
    expected, actual, config = make(seed, n_cases=n_cases)
    files = gen.write(tmp_path, expected, actual, config, beside=seed % 2 == 0)
    theirs = as_documented(adk_scores(*files), config)
    ours = agenteval_scores(*files, tmp_path / "result.json")
    assert not differences(ours, theirs), "\n".join(differences(ours, theirs))
