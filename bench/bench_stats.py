"""The statistics that decide, measured on a simulated agent with known per-case pass chances.

    python bench/bench_stats.py [--cases 40] [--runs 3] [--docs 40] [--pairs 2000] [--seeds 5]

The agent is a plain callable (no model): case i makes the expected tool call with its chance
p_i, else a wrong one, so each case run passes `tool_trajectory_avg_score` with chance p_i.
Chances are drawn once (seeded) from U(0.3, 1.0).

1. The gate (`agenteval compare`, --fail_on regression, alpha 0.05):
   * through the runner: `--docs` documents of the agent and `--docs` of the agent with every
     chance 10 points lower (`run_evaluation`, `--runs` runs a case); the false-alarm rate over
     every pair of two baseline documents (A/A), the power over every (baseline, regressed) pair;
   * at the verdict level (the same `compare_paired`, run outcomes drawn directly, so many more
     independent pairs): `--pairs` A/A pairs and `--pairs` regressed pairs, for 1 and `--runs`
     runs a case and for 40 / 200 cases.
2. `--until_decided` (alpha 0.05, bar 0.5, max_runs 20) against a fixed `--num_runs`, through the
   runner, on a set mixing always / never / mostly passing cases and two coins: case runs spent
   and cases decided right / wrong (against the known chances), and the smallest fixed N whose
   decisions get as many cases right, by (a) the same rule read once at N runs, (b) an exact
   one-sided binomial test at N runs (the best a fixed design can do), with the runs they
   spend (N x cases) and their wrong decisions. The fixed runs are the first N of a 20-run
   document (the same as running N).

Writes bench/out/bench_stats.json.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from agenteval.agents import CallableAdapter
from agenteval.criteria import resolve_metrics
from agenteval.runner import EvalSetRequest, run_evaluation
from agenteval.schema import (
    Content,
    EvalCase,
    EvalConfig,
    EvalSet,
    EvalSetResult,
    FunctionCall,
    IntermediateData,
    Invocation,
)
from agenteval.verdicts.paired import RunOutcome, Runs, compare_paired, runs_of
from agenteval.verdicts.sequential import Decision, SequentialRule, decide
from agenteval.verdicts.stats import binom_cdf

OUT = Path(__file__).resolve().parent / "out" / "bench_stats.json"
METRICS = resolve_metrics(EvalConfig(criteria={"tool_trajectory_avg_score": 1.0}))
ALPHA = 0.05


def eval_set(n: int) -> EvalSet:
    expected = IntermediateData(tool_uses=[FunctionCall(name="ok", args={})])
    return EvalSet(eval_set_id="sim", eval_cases=[EvalCase(eval_id=f"c{i}", conversation=[Invocation(
        user_content=Content.from_text(f"c{i}", role="user"), final_response=Content.from_text("r"),
        intermediate_data=expected)]) for i in range(n)])


def agent(chances: list[float], rng: random.Random) -> Any:
    """A plain callable whose case `c{i}` makes the expected call with chance chances[i]."""

    def root_agent(text: str, state: dict[str, Any]) -> dict[str, Any]:
        ok = rng.random() < chances[int(text[1:])]
        return {"response": "r", "tool_calls": [{"name": "ok" if ok else "bad", "args": {}, "response": 1}]}

    return root_agent


def run(chances: list[float], runs: int, rng: random.Random, **kw: Any) -> EvalSetResult:
    (doc,) = asyncio.run(run_evaluation(CallableAdapter(agent(chances, rng)),
                                        [EvalSetRequest(eval_set(len(chances)), METRICS)], num_runs=runs,
                                        parallelism=8, traces=False, **kw))
    return doc


def _empty(rid: str) -> EvalSetResult:
    return EvalSetResult(eval_set_result_id=rid, eval_set_id="sim")


def gate_through_runner(chances: list[float], runs: int, docs: int, rng: random.Random) -> dict[str, Any]:
    worse = [max(0.0, p - 0.1) for p in chances]
    started = time.perf_counter()
    base = [runs_of(run(chances, runs, rng)) for _ in range(docs)]
    bad = [runs_of(run(worse, runs, rng)) for _ in range(docs)]
    seconds = time.perf_counter() - started

    def fails(a: Runs, b: Runs) -> bool:
        return compare_paired(_empty("A"), _empty("B"), runs_a=a, runs_b=b, resamples=0).gate_failed

    aa = [fails(a, b) for a, b in itertools.combinations(base, 2)]
    ab = [fails(a, b) for a in base for b in bad]
    return {"cases": len(chances), "runs": runs, "documents": 2 * docs,
            "case_runs": 2 * docs * len(chances) * runs,
            "runner_seconds": round(seconds, 1), "aa_pairs": len(aa), "false_alarm_rate": sum(aa) / len(aa),
            "regressed_pairs": len(ab), "power_10pt": sum(ab) / len(ab)}


def _draw(chances: list[float], runs: int, rng: random.Random) -> Runs:
    return {f"c{i}": {j: RunOutcome(rng.random() < p) for j in range(runs)} for i, p in enumerate(chances)}


def gate_simulated(cases: int, runs: int, pairs: int, rng: random.Random) -> dict[str, Any]:
    chances = [rng.uniform(0.3, 1.0) for _ in range(cases)]
    worse = [max(0.0, p - 0.1) for p in chances]

    def fails(x: list[float], y: list[float]) -> bool:
        return compare_paired(_empty("A"), _empty("B"), runs_a=_draw(x, runs, rng),
                              runs_b=_draw(y, runs, rng), resamples=0).gate_failed

    alarms = sum(fails(chances, chances) for _ in range(pairs))
    caught = sum(fails(chances, worse) for _ in range(pairs))
    return {"cases": cases, "runs": runs, "pairs": pairs, "false_alarm_rate": alarms / pairs,
            "power_10pt": caught / pairs}


def _binomial_decision(passes: int, n: int, rate: float) -> Decision:
    """Exact one-sided binomial tests at a fixed n: passed when P(X ≥ passes | rate) ≤ alpha,
    failed when P(X ≤ passes | rate) ≤ alpha."""
    if 1.0 - binom_cdf(passes - 1, n, rate) <= ALPHA:
        return Decision.PASSED
    if binom_cdf(passes, n, rate) <= ALPHA:
        return Decision.FAILED
    return Decision.UNDECIDED


MIX = [1.0] * 16 + [0.0] * 8 + [0.95] * 4 + [0.05] * 4 + [0.85] * 4 + [0.15] * 4 + [0.5] * 2


def until_decided(seeds: int, max_runs: int = 20) -> dict[str, Any]:
    rule = SequentialRule(ALPHA, 0.5, max_runs)
    truth = {f"c{i}": Decision.PASSED if p > 0.5 else Decision.FAILED for i, p in enumerate(MIX) if p != 0.5}
    rows = []
    for seed in range(seeds):
        rng = random.Random(1000 + seed)
        seq = runs_of(run(MIX, 1, rng, until_decided=rule))
        verdicts = {i: [r.passed for _, r in sorted(v.items())] for i, v in seq.items()}
        decisions = {c.eval_id: c.decision for c in rule.decisions(list(verdicts.items())).cases}
        full = {i: [r.passed for _, r in sorted(v.items())]
                for i, v in runs_of(run(MIX, max_runs, rng)).items()}

        def tally(got: dict[str, Decision]) -> tuple[int, int]:
            """(decided right, decided wrong) against the true chances."""
            made = {i: d for i, d in got.items() if d != Decision.UNDECIDED}
            return (sum(truth.get(i) == d for i, d in made.items()),
                    sum(truth.get(i) not in (None, d) for i, d in made.items()))

        right, wrong = tally(decisions)
        row: dict[str, Any] = {"seed": seed, "cases": len(MIX), "decided_right": right,
                               "decided_wrong": wrong,
                               "until_decided_case_runs": sum(len(v) for v in verdicts.values())}
        fixed = {"same_rule": lambda v: decide("", v, ALPHA, 0.5).decision,
                 "binomial": lambda v: _binomial_decision(sum(v), len(v), 0.5)}
        for name, decider in fixed.items():
            # The smallest fixed N deciding as many cases right as until_decided did.
            n = next((n for n in range(1, max_runs + 1)
                      if tally({i: decider(v[:n]) for i, v in full.items()})[0] >= right), None)
            row[f"fixed_n_{name}"] = n
            row[f"fixed_{name}_case_runs"] = None if n is None else n * len(MIX)
            row[f"fixed_{name}_wrong"] = (None if n is None
                                          else tally({i: decider(v[:n]) for i, v in full.items()})[1])
        rows.append(row)
    return {"alpha": ALPHA, "bar": 0.5, "max_runs": max_runs, "mix": MIX, "seeds": rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--docs", type=int, default=40)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(0)
    chances = [rng.uniform(0.3, 1.0) for _ in range(args.cases)]
    report: dict[str, Any] = {"gate_runner": [], "gate_simulated": []}
    for runs in (1, args.runs):
        report["gate_runner"].append(gate_through_runner(chances, runs, args.docs, random.Random(runs)))
        print(json.dumps(report["gate_runner"][-1]), flush=True)
    for cases in (40, 200):
        for runs in (1, args.runs):
            found = gate_simulated(cases, runs, args.pairs, random.Random(cases + runs))
            report["gate_simulated"].append(found)
            print(json.dumps(report["gate_simulated"][-1]), flush=True)
    report["until_decided"] = until_decided(args.seeds)
    for row in report["until_decided"]["seeds"]:
        print(json.dumps(row), flush=True)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(report, indent=1))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
