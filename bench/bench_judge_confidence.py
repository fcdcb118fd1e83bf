"""Confidence thresholds per criterion from bench_judge.py results: chosen on the labelled set,
reported on the blind sets (issue 16).

Reads the per-case rows that `bench_judge.py --num-samples K` wrote (each verdict record's
`confidence` and `confidence_source`; a case's confidence is the lowest of its verdicts', as in
`agenteval judge calibrate`), groups them by criterion (injection cases under their criterion),
and prints per criterion: accuracy, AUROC of the confidence (how well it ranks right verdicts
above wrong ones), the lowest threshold whose committed verdicts reach --target agreement on
the labelled set, agreement and coverage there, the same threshold's agreement and coverage on
the blind set, and the judge calls escalation would make (verdicts below the threshold) against
asking the stronger judge every question.

    python bench/bench_judge_confidence.py LABELLED.jsonl [--blind BLIND.jsonl] [--target 0.9]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def load(path: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    for r in rows:
        confs = [c for c, step in zip(r["confidences"], r["steps"], strict=True)
                 if step is None and c is not None]
        r["conf"] = min(confs) if confs else None
        r["verdict_confs"] = [c for c, step in zip(r["confidences"], r["steps"], strict=True) if step is None]
    return rows


def at(rows: list[dict[str, Any]], t: float) -> tuple[float | None, float]:
    """(agreement, coverage) when cases below `t` abstain (a judge error is never committed)."""
    committed = [r for r in rows if r["pred_positive"] is not None and (r["conf"] if r["conf"] is not None
                                                                         else 1.0) >= t]
    agreement = sum(r["correct"] for r in committed) / len(committed) if committed else None
    return agreement, len(committed) / len(rows) if rows else 0.0


def choose(rows: list[dict[str, Any]], target: float) -> float | None:
    for t in sorted({0.0, *(r["conf"] for r in rows if r["conf"] is not None)}):
        agreement, _ = at(rows, t)
        if agreement is not None and agreement >= target:
            return t
    return None


def auroc(rows: list[dict[str, Any]]) -> float | None:
    right = [r["conf"] for r in rows if r["correct"] and r["conf"] is not None]
    wrong = [r["conf"] for r in rows if not r["correct"] and r["conf"] is not None]
    if not right or not wrong:
        return None
    wins = sum((a > b) + 0.5 * (a == b) for a in right for b in wrong)
    return wins / (len(right) * len(wrong))


def fmt(x: float | None, pct: bool = True) -> str:
    return "–" if x is None else (f"{100 * x:.0f}%" if pct else f"{x:.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("labelled")
    p.add_argument("--blind")
    p.add_argument("--target", type=float, default=0.9)
    p.add_argument("--thresholds", help="criterion=t,... to report instead of choosing")
    args = p.parse_args()
    labelled = load(args.labelled)
    blind = load(args.blind) if args.blind else []
    given = dict((k, float(v)) for k, v in (x.split("=") for x in args.thresholds.split(","))) \
        if args.thresholds else {}
    kinds = list(dict.fromkeys(r["criterion"] for r in labelled))
    sources = {s for r in labelled for s in r["confidence_sources"] if s}
    print(f"confidence sources: {sorted(sources)}; target agreement {args.target:.0%}\n")
    print("| criterion | set | cases | accuracy | AUROC | threshold | agreement | coverage "
          "| verdicts | escalated (below threshold) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for kind in kinds:
        mine = [r for r in labelled if r["criterion"] == kind]
        t = given.get(kind, choose(mine, args.target))
        for name, rows in (("labelled", mine), ("blind", [r for r in blind if r["criterion"] == kind])):
            if not rows:
                continue
            accuracy = sum(r["correct"] for r in rows) / len(rows)
            agreement, coverage = at(rows, t) if t is not None else (None, None)
            verdicts = [c for r in rows for c in r["verdict_confs"]]
            below = sum(1 for c in verdicts if t is not None and c is not None and c < t)
            print(f"| {kind} | {name} | {len(rows)} | {fmt(accuracy)} | {fmt(auroc(rows), False)} | "
                  f"{fmt(t, False)} | {fmt(agreement)} | {fmt(coverage)} | {len(verdicts)} | {below} |")
    print("\nAgreement / coverage at fixed thresholds (labelled set):\n")
    grid = (0.0, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
    print("| criterion | " + " | ".join(f"t={g}" for g in grid) + " |")
    print("|---|" + "---|" * len(grid))
    for kind in kinds:
        mine = [r for r in labelled if r["criterion"] == kind]
        cells = []
        for g in grid:
            agreement, coverage = at(mine, g)
            cells.append(f"{fmt(agreement)} / {fmt(coverage)}")
        print(f"| {kind} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
