"""Statistics over repeated runs, and the verdict per case under a gating rule.

For each case and gating criterion, over its runs: mean and standard deviation of the
case-level score, a 95% confidence interval of the mean (Student's t), and pass@k / pass^k
with k the number of runs (unbiased estimators over the observed passes; with k = n they are
"any run passed" and "every run passed").

Gating rules: `mean` (default; as ADK's AgentEvaluator) — the mean of the runs' scores must meet
the threshold; `all_runs` — every run must pass; `any_run` — one passing run suffices. A run
whose criterion was not evaluated counts as failing under `all_runs`, and under `mean` the
criterion fails if any run was not evaluated (no silent averaging over missing scores), unless
the config's `not_evaluated` is `ignore`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from agenteval.schema import (
    CaseSummary,
    EvalCaseResult,
    EvalMetricResult,
    EvalSetResult,
    EvalStatus,
    MetricSummary,
)
from agenteval.schema.base import maker, trusted
from agenteval.schema.result import FAILED as _FAILED
from agenteval.schema.result import INFORMATIONAL as _INFORMATIONAL
from agenteval.schema.result import NOT_EVALUATED as _NOT_EVALUATED
from agenteval.schema.result import PASSED as _PASSED

# (The statuses as module names: `schema.result`'s note.)

# Two-sided 95% Student-t critical values by degrees of freedom (1..30); beyond, `t95`'s series.
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042]
_Z975 = 1.959963984540054  # the standard normal's 97.5% quantile


def t95(dof: int) -> float:
    """Student's t 97.5% quantile with `dof` degrees of freedom (scipy.stats.t.ppf(0.975, dof)):
    the table to 30, then the Cornish–Fisher series in 1/dof (error below 1e-7 from 31 on; 1.96
    alone, used there before, made a 40-run interval 3% too narrow)."""
    if 1 <= dof <= len(_T95):
        return _T95[dof - 1]
    z, v = _Z975, float(dof)
    z2 = z * z
    return z * (1.0 + (z2 + 1.0) / (4.0 * v)
                + ((5.0 * z2 + 16.0) * z2 + 3.0) / (96.0 * v ** 2)
                + (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / (384.0 * v ** 3)
                + ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) / (92160.0 * v ** 4))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chance that at least one of k runs drawn without replacement from n (c passing) passes."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_pow_k(n: int, c: int, k: int) -> float:
    """Chance that all k runs drawn without replacement from n (c passing) pass."""
    return math.comb(c, k) / math.comb(n, k) if k <= n else 0.0


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def summary_reason(results: Sequence[EvalMetricResult], reasons: Sequence[str | None],
                   status: EvalStatus, mean: float | None, low: float | None, high: float | None,
                   passed: int, gating: str) -> str | None:
    """Why a criterion got `status` over a case's runs. One run: that run's own reason when it
    did not pass (a passing run's stays with the run only). Several:
    the rule that decided (the mean and its 95% CI against the threshold, or the runs passed),
    and the first failing run's reason (as given: `summarise_case` prefixes `run N: `). None
    when no run recorded a reason."""
    if status == _INFORMATIONAL or not any(reasons):
        return None
    if len(results) == 1:  # a passing run's reason stays with the run (`EvalCaseResult.reason`)
        return reasons[0] if status != _PASSED else None
    n, threshold = len(results), results[0].threshold
    scored = sum(1 for r in results if r.score is not None)
    if status == _NOT_EVALUATED:
        head = f"{scored} of {n} runs scored"
    elif gating in ("all_runs", "any_run"):
        head = f"passed {passed}/{n} runs (gating: {gating}, threshold {_num(threshold)})"
    else:
        sign = "≥" if status == _PASSED else "<"
        head = (f"mean {_num(mean)} (95% CI [{_num(low)}, {_num(high)}]) {sign} threshold "
                f"{_num(threshold)}; passed {passed}/{n} runs (gating: mean)")
    failing = next(((k, why) for k, (r, why) in enumerate(zip(results, reasons, strict=True))
                    if r.eval_status != _PASSED and why), None)
    if failing is None:
        return head
    return f"{head}; {failing[1]}"


def summarise_metric(results: Sequence[EvalMetricResult], gating: str,
                     ignore_not_evaluated: bool,
                     reasons: Sequence[str | None] = ()) -> MetricSummary:
    """One criterion over the runs of one case; `reasons`, the runs' overall reasons (run
    order, as `results`), explain the verdict (`summary_reason`)."""
    first = results[0]
    scores = [r.score for r in results if r.score is not None]
    n = len(results)
    passed = sum(1 for r in results if r.eval_status == _PASSED)
    informational = first.eval_status == _INFORMATIONAL
    mean = statistics.fmean(scores) if scores else None
    std = statistics.stdev(scores) if len(scores) > 1 else (0.0 if scores else None)
    low = high = mean
    if mean is not None and std is not None and len(scores) > 1:
        half = t95(len(scores) - 1) * std / math.sqrt(len(scores))
        low, high = mean - half, mean + half
    if informational:
        status = _INFORMATIONAL
    elif not scores or (len(scores) < n and not ignore_not_evaluated and gating != "any_run"):
        status = _NOT_EVALUATED
    elif gating == "all_runs":
        status = _PASSED if passed == n else _FAILED
    elif gating == "any_run":
        status = _PASSED if passed > 0 else _FAILED
    else:
        threshold = first.threshold if first.threshold is not None else 0.0
        status = _PASSED if (mean or 0.0) >= threshold else _FAILED
    # Not validated: every value is computed here with its declared type, and a large run
    # builds one per criterion per case (60,000 for 10,000 cases).
    return trusted(MetricSummary, {
        "metric_name": first.metric_name, "threshold": first.threshold, "runs": n,
        "scored_runs": len(scores), "passed_runs": passed, "mean": mean, "std": std,
        "ci_low": low, "ci_high": high,
        "pass_at_k": None if informational else pass_at_k(n, passed, n),
        "pass_pow_k": None if informational else pass_pow_k(n, passed, n),
        "eval_status": status,
        "reason": summary_reason(results, reasons or [None] * n, status, mean, low, high, passed,
                                 gating),
    })


# `trusted` without its check of the keys, for the two hot sites below, whose dicts name every
# field in declaration order (a case makes one summary and one per criterion; `test_aggregate`
# compares what they make with `trusted`'s).
_make_metric_summary = maker(MetricSummary)
_make_case_summary = maker(CaseSummary)


def _one_run(result: EvalMetricResult, reason: str | None, gating: str) -> MetricSummary:
    """`summarise_metric([result], gating, ..., [reason])`: the values it computes for one run
    (a mean of one score is that score as a float, its deviation 0, pass@1 and pass^1 1 or 0),
    without the statistics' generic paths, since most runs are single and a large run
    summarises hundreds of thousands of criteria."""
    # Each field read once (a model's attribute read is slow: `schema.base`).
    score, given, threshold = result.score, result.eval_status, result.threshold
    passed = 1 if given == _PASSED else 0
    informational = given == _INFORMATIONAL
    mean = None if score is None else float(score)
    if informational:
        status = _INFORMATIONAL
    elif mean is None:
        status = _NOT_EVALUATED
    elif gating in ("all_runs", "any_run"):
        status = _PASSED if passed else _FAILED
    else:
        status = _PASSED if mean >= (threshold if threshold is not None else 0.0) else _FAILED
    chance = None if informational else float(passed)
    return _make_metric_summary({
        "metric_name": result.metric_name, "threshold": threshold, "runs": 1,
        "scored_runs": 0 if mean is None else 1, "passed_runs": passed, "mean": mean,
        "std": None if mean is None else 0.0, "ci_low": mean, "ci_high": mean,
        "pass_at_k": chance, "pass_pow_k": chance, "eval_status": status,
        "reason": reason if reason and status not in (_INFORMATIONAL, _PASSED)
        else None,
    })


def summarise_case(eval_id: str, runs: Sequence[EvalCaseResult], gating: str,
                   ignore_not_evaluated: bool) -> CaseSummary:
    """A case's verdict over its runs: failed if any run failed to infer or any criterion fails."""
    results = runs[0].overall_eval_metric_results if len(runs) == 1 else None
    if results is not None and len(names := [m.metric_name for m in results]) == len(set(names)):
        # One run, each criterion once (the usual case): `_one_run` per criterion.
        why = {x.metric_name: x.reason for x in runs[0].reasons if x.invocation_index is None}
        return _verdict(eval_id, runs, gating, ignore_not_evaluated,
                        [_one_run(m, why.get(name), gating) for m, name in zip(results, names, strict=True)])
    tag = len(runs) > 1
    # Each criterion's results and overall reasons over the runs (run order), criteria in the
    # order they first come: one pass over the runs.
    by_name: dict[str, tuple[list[EvalMetricResult], list[str | None]]] = {}
    for r in runs:
        why = {x.metric_name: f"run {r.run_index}: {x.reason}" if tag else x.reason
               for x in r.reasons if x.invocation_index is None}
        for m in r.overall_eval_metric_results:
            if (entry := by_name.get(m.metric_name)) is None:
                entry = by_name[m.metric_name] = ([], [])
            entry[0].append(m)
            entry[1].append(why.get(m.metric_name))
    metrics = [summarise_metric(results, gating, ignore_not_evaluated, reasons)
               for results, reasons in by_name.values()]
    return _verdict(eval_id, runs, gating, ignore_not_evaluated, metrics)


def _verdict(eval_id: str, runs: Sequence[EvalCaseResult], gating: str, ignore_not_evaluated: bool,
             metrics: list[MetricSummary]) -> CaseSummary:
    """The case's summary from its criteria's (`summarise_case`)."""
    statuses = [m.eval_status for m in metrics]  # (an informational one is none of the three)
    errored = any(r.error_message for r in runs)
    not_evaluated = _NOT_EVALUATED in statuses and not ignore_not_evaluated
    if (errored and gating != "any_run") or not_evaluated or _FAILED in statuses:
        final = _FAILED
    elif _PASSED in statuses:
        final = _PASSED
    else:
        final = _FAILED if errored else _NOT_EVALUATED
    # Not validated: every value is of its declared type (one summary per case).
    return _make_case_summary({"eval_id": eval_id, "runs": len(runs), "final_eval_status": final,
                               "metrics": metrics})


def summarise(result: EvalSetResult, gating: str = "mean",
              ignore_not_evaluated: bool = False) -> EvalSetResult:
    """Fills `result.summary` (one entry per case, in case order) and returns the result."""
    by_case: dict[str, list[EvalCaseResult]] = {}
    for case in result.eval_case_results:
        by_case.setdefault(case.eval_id, []).append(case)
    result.summary = [summarise_case(eid, runs, gating, ignore_not_evaluated)
                      for eid, runs in by_case.items()]
    result.gating = gating
    return result


def all_passed(results: Sequence[EvalSetResult]) -> bool:
    """True when every case passed (by its summary) and there was at least one case."""
    summaries = [s for r in results for s in r.summary]
    return bool(summaries) and all(s.final_eval_status == _PASSED for s in summaries)
