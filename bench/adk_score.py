"""`agenteval score`'s job done with Google ADK 2.13.0's API only (the e2e baseline).

    python bench/adk_score.py EXPECTED --actual ACTUAL --config_file_path CFG --output OUT
        [--efficiency]

Imports ADK's evaluation modules, loads both eval sets with ADK's loader
(`load_eval_set_from_file`: `EvalSet.model_validate_json`), maps the config to EvalMetrics with
`get_eval_metrics_from_config`, and for every case runs `TrajectoryEvaluator` and
`RougeEvaluator` (plus, with `--efficiency`, the four informational efficiency evaluators that
ADK always appends and agenteval also reports). Results are assembled exactly as
`LocalEvalService._evaluate_single_inference_result` does (EvalMetricResultPerInvocation,
EvalMetricResult(**eval_metric.model_dump()), the final-status rule, EvalCaseResult), wrapped
with `create_eval_set_result` and written as `model_dump_json(indent=2)`, as
`LocalEvalSetResultsManager` writes it.

It imports the evaluator modules directly rather than ADK's metric registry, which would also
import the Vertex AI facade (pandas, vertexai): that keeps the baseline as cheap as ADK allows.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from typing import Any

warnings.filterwarnings("ignore")

from google.adk.evaluation import _efficiency_evaluators as eff  # noqa: E402
from google.adk.evaluation._eval_set_results_manager_utils import (  # noqa: E402
    create_eval_set_result,
)
from google.adk.evaluation.eval_config import (  # noqa: E402
    EvalConfig,
    get_eval_metrics_from_config,
)
from google.adk.evaluation.eval_metrics import (  # noqa: E402
    EvalMetric,
    EvalMetricResult,
    EvalMetricResultDetails,
    EvalMetricResultPerInvocation,
)
from google.adk.evaluation.eval_result import EvalCaseResult  # noqa: E402
from google.adk.evaluation.evaluator import (  # noqa: E402
    EvalStatus,
    EvaluationResult,
    PerInvocationResult,
)
from google.adk.evaluation.final_response_match_v1 import RougeEvaluator  # noqa: E402
from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file  # noqa: E402
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator  # noqa: E402

EVALUATORS: dict[str, Any] = {
    "tool_trajectory_avg_score": TrajectoryEvaluator,
    "response_match_score": RougeEvaluator,
    "tool_call_count_v1": eff._ToolCallCountV1Evaluator,
    "inference_call_count_v1": eff._InferenceCallCountV1Evaluator,
    "invocation_duration_v1": eff._InvocationDurationV1Evaluator,
    "token_usage_v1": eff._TokenUsageV1Evaluator,
}


def final_status(results: list[EvalMetricResult]) -> EvalStatus:
    """`LocalEvalService._generate_final_eval_status`."""
    status = EvalStatus.NOT_EVALUATED
    for r in results:
        if r.eval_status == EvalStatus.PASSED:
            status = EvalStatus.PASSED
        elif r.eval_status in (EvalStatus.NOT_EVALUATED, EvalStatus.INFORMATIONAL):
            continue
        elif r.eval_status == EvalStatus.FAILED:
            return EvalStatus.FAILED
    return status


def evaluate_case(eval_set_id: str, case: Any, actual: list[Any],
                  metrics: list[EvalMetric]) -> EvalCaseResult:
    expected = case.conversation
    per_inv = [EvalMetricResultPerInvocation(actual_invocation=a, expected_invocation=expected[i],
                                             eval_metric_results=[])
               for i, a in enumerate(actual)]
    overall: list[EvalMetricResult] = []
    for metric in metrics:
        try:
            evaluator = EVALUATORS[metric.metric_name](eval_metric=metric)
            result = evaluator.evaluate_invocations(actual, expected, case.conversation_scenario)
        except Exception:  # as LocalEvalService: a failing metric is NOT_EVALUATED
            result = EvaluationResult(overall_eval_status=EvalStatus.NOT_EVALUATED)
        overall.append(EvalMetricResult(
            score=result.overall_score, eval_status=result.overall_eval_status,
            details=EvalMetricResultDetails(
                rubric_scores=result.overall_rubric_scores,
                token_usage_details=result.overall_token_usage_details,
                duration_details=result.overall_duration_details),
            **metric.model_dump()))
        ok = len(result.per_invocation_results) == len(per_inv)
        for i, slot in enumerate(per_inv):
            r = (result.per_invocation_results[i] if ok
                 else PerInvocationResult(actual_invocation=slot.actual_invocation))
            slot.eval_metric_results.append(EvalMetricResult(
                score=r.score, eval_status=r.eval_status,
                details=EvalMetricResultDetails(rubric_scores=r.rubric_scores,
                                                token_usage_details=r.token_usage_details,
                                                duration_details=r.duration_details),
                **metric.model_dump()))
    user_id = (case.session_input.user_id if case.session_input and case.session_input.user_id
               else "test_user_id")
    return EvalCaseResult(eval_set_file=eval_set_id, eval_set_id=eval_set_id,
                          eval_id=case.eval_id, final_eval_status=final_status(overall),
                          overall_eval_metric_results=overall,
                          eval_metric_result_per_invocation=per_inv, session_id="",
                          session_details=None, user_id=user_id)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("expected")
    ap.add_argument("--actual", required=True)
    ap.add_argument("--config_file_path", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--efficiency", action="store_true",
                    help="also run ADK's four informational efficiency metrics")
    args = ap.parse_args()
    t0 = time.perf_counter()
    with open(args.config_file_path, encoding="utf-8") as f:
        config = EvalConfig.model_validate_json(f.read())
    metrics = [m for m in get_eval_metrics_from_config(config)
               if args.efficiency or m.metric_name in ("tool_trajectory_avg_score",
                                                       "response_match_score")]
    expected = load_eval_set_from_file(args.expected, "expected")
    actual = load_eval_set_from_file(args.actual, "actual")
    by_id = {c.eval_id: c for c in actual.eval_cases}
    results = [evaluate_case(expected.eval_set_id, case, by_id[case.eval_id].conversation, metrics)
               for case in expected.eval_cases]
    result = create_eval_set_result("bench_app", expected.eval_set_id, results)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(result.model_dump_json(indent=2))
    passed = sum(1 for r in results if r.final_eval_status == EvalStatus.PASSED)
    print(f"{len(results)} cases: {passed} passed, {len(results) - passed} failed "
          f"({time.perf_counter() - t0:.2f}s after imports); wrote {args.output}")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
