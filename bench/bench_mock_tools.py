"""Scores over reruns of the volatile ADK agent, live vs `mock_tools: expected`.

    python bench/bench_mock_tools.py [--reruns 5] [--json bench/out/mock_tools.json]

The agent (`tests/agents/volatile_adk.py`: a scripted `BaseLlm`, so the model itself is
deterministic) answers with what its tools return: the clock, a uuid, a random quote. Live, the
answer and so `response_match_score` change from run to run; with the tools' responses served from
the eval set, every rerun must score the same. Each rerun goes through the runner
(`AgentEvaluator.evaluate_eval_set`, criteria tool_trajectory_avg_score 1.0 and
response_match_score 0.8); printed per mode: each case's scores per rerun, how many distinct
score vectors the reruns gave, the pass count, the tools' own calls, and wall / CPU seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for tests.agents

from tests.agents import volatile_adk

from agenteval import AgentEvaluator
from agenteval.evaluator import EvaluationFailed
from agenteval.schema import EvalConfig, EvalSetResult, EvalStatus

CRITERIA: dict[str, float | dict[str, Any]] = {"tool_trajectory_avg_score": 1.0,
                                               "response_match_score": 0.8}


def rerun(mock: str | None) -> tuple[EvalSetResult, float, float]:
    config = EvalConfig(criteria=dict(CRITERIA), mock_tools=mock)  # type: ignore[arg-type]
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        result = asyncio.run(AgentEvaluator.evaluate_eval_set(
            volatile_adk.agent(), volatile_adk.eval_set(), eval_config=config, num_runs=1,
            print_detailed_results=False, store_root=None))
    except EvaluationFailed as e:  # a failing case is a result here, not an error
        result = e.results[0]
    return result, time.perf_counter() - wall, time.process_time() - cpu


def scores(result: EvalSetResult) -> dict[str, dict[str, float | None]]:
    return {c.eval_id: {m.metric_name: m.score for m in c.overall_eval_metric_results
                        if m.metric_name in CRITERIA}
            for c in result.eval_case_results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reruns", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    report: dict[str, Any] = {}
    for label, mock in (("live", None), ("mocked", "expected")):
        volatile_adk.CALLS.clear()
        runs = [rerun(mock) for _ in range(args.reruns)]
        table = [scores(r) for r, _, _ in runs]
        passed = [sum(1 for c in r.eval_case_results if c.final_eval_status == EvalStatus.PASSED)
                  for r, _, _ in runs]
        distinct = len({json.dumps(t, sort_keys=True) for t in table})
        report[label] = {"scores": table, "passed": passed, "distinct_score_vectors": distinct,
                         "tool_calls": dict(volatile_adk.CALLS),
                         "wall_s": [round(w, 3) for _, w, _ in runs],
                         "cpu_s": [round(c, 3) for _, _, c in runs]}
        print(f"== {label} ({args.reruns} reruns): {distinct} distinct score vector(s), "
              f"passed cases per rerun {passed}, tool calls {dict(volatile_adk.CALLS)}")
        for case in table[0]:
            for metric in CRITERIA:
                values = [t[case][metric] for t in table]
                shown = ", ".join("-" if v is None else f"{v:.3f}" for v in values)
                print(f"  {case:18} {metric:26} {shown}")
        print(f"  wall s per rerun {report[label]['wall_s']}; CPU s {report[label]['cpu_s']}")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
