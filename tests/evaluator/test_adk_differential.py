"""Differential check: agenteval's `AgentEvaluator.evaluate` against ADK 2.13's on the same ADK
agent (tests/evaluator/scripted_runs_adk.py: scripted per run, no model) over seeded random
cases: several runs that behave differently, multi-turn, nested and 1-vs-1.0 arguments, unicode,
empty answers, thresholds at the edges, `*.test.json` files written as eval sets or as ADK's
legacy list of turns, `test_config.json` in every criterion form. Per case (one file each, since
ADK's failure lines do not name the case): the same pass / fail, the same failing criteria, and
the score ADK reports shown in agenteval's line. Runs where ADK's eval extras import."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import warnings
from pathlib import Path
from typing import Any

import pytest

from agenteval import AgentEvaluator as OurEvaluator
from agenteval import EvaluationFailed
from tests.cli import adk_differential as gen

pytest.importorskip("google.adk.evaluation.local_eval_service",
                    reason="ADK's evaluation is not importable: it needs google-adk's eval extra "
                           "(pip install 'google-adk[eval]==2.13.0')")

from tests.evaluator import scripted_runs_adk as agent  # (imports google.adk)

MODULE = agent.__name__
ADK_LINE = re.compile(r"^(\w+) for \S+ (?:Failed\. Expected (\S+), but got (\S+)\.|was not evaluated)")


def case(rng: random.Random, i: int, num_runs: int) -> tuple[dict[str, Any], bool]:
    """(the file's JSON, written as a legacy list?), with the agent's script for every run set."""
    turns, script = [], {}
    for j in range(rng.choice([1, 1, 2, 3])):
        prompt = f"c{i}t{j} {gen.text(rng, 0, 3)}"
        calls = gen.calls(rng)
        reference = gen.text(rng, 0, 6)
        turns.append((prompt, calls, reference))
        runs = []
        for _ in range(num_runs):
            text = reference if rng.random() < 0.4 else gen.text(rng, 0, 6)
            runs.append({"calls": gen.mutate_calls(rng, calls), "text": text})
        script[prompt] = runs
    agent.SCRIPT.update(script)
    if rng.random() < 0.4:
        return [{"query": p, "expected_tool_use": [{"tool_name": n, "tool_input": a} for n, a in cs],
                 "reference": r} for p, cs, r in turns], True
    conversation = [{"user_content": {"role": "user", "parts": [{"text": p}]},
                     "final_response": {"role": "model", "parts": [{"text": r}]},
                     "intermediate_data": {"tool_uses": [{"name": n, "args": a} for n, a in cs]}}
                    for p, cs, r in turns]
    return {"eval_set_id": f"s{i}", "eval_cases": [{"eval_id": f"c{i}", "conversation": conversation}]}, False


Runs = list[str]  # each run of the case: its scores as JSON, sorted


def run_scores(overall: Any, per_invocation: Any) -> str:
    """A run's (score, status) per criterion, overall and per invocation, as JSON; the measured
    duration left out (real clocks)."""
    def scores(results: Any) -> dict[str, Any]:
        return {m.metric_name: [m.score, m.eval_status.value] for m in results
                if m.metric_name != "invocation_duration_v1"}
    return json.dumps([scores(overall), [scores(p.eval_metric_results) for p in per_invocation]],
                      sort_keys=True)


def adk_failures(path: Path, num_runs: int) -> tuple[dict[str, str | None] | None, Runs]:
    """ADK's verdict on one file (None when it passes, else {criterion: the score it reports})
    and its runs' scores."""
    from google.adk.evaluation.agent_evaluator import AgentEvaluator

    agent.HEARD.clear()
    results: list[Any] = []
    real = AgentEvaluator._get_eval_results_by_eval_id

    async def kept(*args: Any, **kwargs: Any) -> Any:
        by_id = await real(*args, **kwargs)
        results.extend(r for runs in by_id.values() for r in runs)
        return by_id

    AgentEvaluator._get_eval_results_by_eval_id = kept  # type: ignore[method-assign]
    failures: dict[str, str | None] | None = None
    try:
        asyncio.run(AgentEvaluator.evaluate(MODULE, str(path), num_runs=num_runs,
                                            print_detailed_results=False))
    except AssertionError as e:
        lines = [m for line in str(e).splitlines() if (m := ADK_LINE.match(line))]
        failures = {m.group(1): m.group(3) for m in lines}
    finally:
        AgentEvaluator._get_eval_results_by_eval_id = real  # type: ignore[method-assign]
    runs = sorted(run_scores(r.overall_eval_metric_results, r.eval_metric_result_per_invocation)
                  for r in results)
    return failures, runs


def our_failures(path: Path, num_runs: int) -> tuple[dict[str, str] | None, Runs]:
    """agenteval's verdict on one file (None when it passes, else {criterion: its failure line})
    and its runs' scores."""
    agent.HEARD.clear()
    failures = None
    try:
        results = asyncio.run(OurEvaluator.evaluate(MODULE, path, num_runs=num_runs, parallelism=1,
                                                    print_detailed_results=False, store_root=None))
    except EvaluationFailed as e:
        failures = {line.split(": ")[1].split()[0]: line for line in e.failures}
        results = e.results
    runs = sorted(run_scores(c.overall_eval_metric_results, c.eval_metric_result_per_invocation)
                  for r in results for c in r.eval_case_results)
    return failures, runs


@pytest.mark.parametrize("seed", range(3))
def test_agent_evaluator_decides_as_adks_does(seed: int, tmp_path: Path) -> None:
    rng = random.Random(1000 + seed)
    problems = []
    for i in range(6):
        num_runs = rng.choice([1, 2, 3])
        data, legacy = case(rng, i, num_runs)
        folder = tmp_path / f"case{i}"
        folder.mkdir()
        config = gen.config(rng) or {"criteria": {"tool_trajectory_avg_score": 1.0,
                                                  "response_match_score": 0.8}}
        (folder / "test_config.json").write_text(json.dumps({"criteria": config["criteria"]}))
        path = folder / f"c{i}.test.json"
        path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            logging.disable(logging.CRITICAL)
            try:
                theirs, their_runs = adk_failures(path, num_runs)
                ours, our_runs = our_failures(path, num_runs)
            finally:
                logging.disable(logging.NOTSET)
        where = f"case {i} ({'legacy' if legacy else 'eval set'}, {num_runs} runs, {config['criteria']})"
        if our_runs != their_runs:
            problems.append(f"{where}: runs scored\n  ADK       {their_runs}\n  agenteval {our_runs}")
        if (theirs is None) != (ours is None) or set(theirs or {}) != set(ours or {}):
            problems.append(f"{where}: ADK {theirs}, agenteval {ours}")
            continue
        for metric, score in (theirs or {}).items():
            line = (ours or {})[metric]
            if score is not None and f"{float(score):.4g}" not in line and score not in line:
                problems.append(f"{where}: ADK reports {metric} {score}, agenteval says {line}")
    assert not problems, "\n".join(problems)


def test_one_ulp_below_the_threshold_fails_and_the_line_shows_it(tmp_path: Path) -> None:
    # ROUGE-1 of 1/7, 2/13 and 2/9 over three turns: the left-to-right mean that ADK's evaluator
    # gives the case (and agenteval the case and the run) is 0.17297517297517295, one ulp below
    # the threshold; ADK's AgentEvaluator re-averages with statistics.mean (…298) and passes the
    # case its own LocalEvalService marks FAILED (docs/adk-parity.md). The failure line must
    # not round the score up to the threshold ("got 0.173").
    turns = [("u1", "a b c d e f g", "a z0 z1 z2 z3 z4 z5"), ("u2", "a b c d e f", "a z0 z1 z2 z3 z4 z5"),
             ("u3", "a b", "a z0 z1 z2 z3 z4 z5")]
    agent.SCRIPT.update({p: [{"calls": [], "text": said}] for p, _, said in turns})
    threshold = 0.17297517297517298
    (tmp_path / "test_config.json").write_text(json.dumps({"criteria": {"response_match_score": threshold}}))
    path = tmp_path / "edge.test.json"
    legacy = [{"query": p, "expected_tool_use": [], "reference": ref} for p, ref, _ in turns]
    path.write_text(json.dumps(legacy))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert adk_failures(path, 1)[0] is None
    ours = our_failures(path, 1)[0]
    assert ours is not None
    assert ours["response_match_score"].endswith(f"expected >= {threshold}, got 0.17297517297517295")
