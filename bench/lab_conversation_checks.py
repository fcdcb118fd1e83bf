"""Prompt lab for the judged criteria on labelled conversations (written for session 12's narrow
checks of the conversation criteria, commit e5644d7): judges labelled cases on the embedded judge
and writes, per case, its label, whether the criterion agreed, and every judge record's verdict
with the reply the judge wrote (its notes), so a tuning run shows which question got a case
wrong. For tuning sets only (`bench/judge_set/*_tuning.json`): the held-out
sets are measured by `bench_certify.py`, never read here.

    python bench/lab_conversation_checks.py bench/judge_set/trajectory_tuning.json \\
        --out bench/out/lab_conversation_checks.jsonl [--only trt-003,trt-004] [--parallelism 2]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
from pathlib import Path

import anyio

from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.labelled import criterion_config, load_labelled
from agenteval.models import resolve_model
from agenteval.runner import CaseRun, score_case


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", default="bench/out/lab_conversation_checks.jsonl")
    ap.add_argument("--only", help="comma-separated case ids")
    ap.add_argument("--num-samples", type=int, default=5)
    ap.add_argument("--parallelism", type=int, default=2)
    args = ap.parse_args()
    if any("heldout" in f for f in args.files):
        raise SystemExit("the lab is for tuning sets; held-out sets are measured with bench_certify.py")
    # files interleaved, so that a run stopped early has measured all of them
    by_file = [load_labelled(f) for f in args.files]
    cases = [c for group in itertools.zip_longest(*by_file) for c in group if c is not None]
    if args.only:
        wanted = set(args.only.split(","))
        cases = [c for c in cases if c.id in wanted or c.id.split("/")[0] in wanted]
    judge = JudgeService(lambda name: resolve_model(name, dict(os.environ)), None, early_stop=False,
                         rationales="never")
    registry = default_registry()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    limiter = anyio.CapacityLimiter(args.parallelism)
    tally = {"right": 0, "wrong": 0, "none": 0}

    async def one(case) -> None:  # type: ignore[no-untyped-def]
        metric = registry.configure(case.metric, criterion_config(case, args.num_samples))
        async with limiter:
            result = await score_case(CaseRun(case=case.case, actual=case.actual, eval_set_id="lab"),
                                      [metric], judge=judge)
        score = result.overall_eval_metric_results[0].score
        agreed = None if score is None else (score >= 1.0) == case.positive
        tally["none" if agreed is None else "right" if agreed else "wrong"] += 1
        checks = [{"item": r.item, "verdict": r.verdict, "p": r.confidence,
                   "reply": r.replies[0] if r.replies else r.rationale} for r in result.judge_records]
        with out.open("a") as fh:
            fh.write(json.dumps({"id": case.id, "label": case.label, "agreed": agreed, "score": score,
                                 "checks": checks}, ensure_ascii=False) + "\n")
        wrong = [f"{c['item']}={c['verdict']}" for c in checks]
        print(f"{case.id} {case.label}: {'right' if agreed else 'WRONG' if agreed is False else 'none'} "
              f"{' '.join(wrong)}", flush=True)

    async def run() -> None:
        async with anyio.create_task_group() as tg:
            for case in cases:
                tg.start_soon(one, case)

    anyio.run(run)
    print(tally)


if __name__ == "__main__":
    main()
