"""How much of a tuning run's right count the vote draw decides, and a count it does not.

A 5-sample verdict's votes are drawn from the first reply's label probabilities by systematic
sampling with one offset u from a seed taken from the request (`engine/logprobs.draw`,
`JudgeService._seed`): a label of (sharpened) probability q gets floor(5q) or ceil(5q) votes,
ceil with probability frac(5q). A case whose gold label has q between 0.4 and 0.6 is right with
probability 5q - 2 (of two labels), whatever the prompt; any change to the prompt redraws u.

`--shift C` runs `bench_judge.py` (every argument after `--`) with every verdict's vote seed
shifted by C, nothing else changed (`--keep` cuts a criterion's examples as
`lab_example_ablation.py` does). With `--cache` the label probabilities of an earlier run of the
same prompt are read back, so a shifted run costs no model call and differs from it by the draw
alone. `<out>.meta.json` gets the run's wall, CPU (llama.cpp's threads are in this process) and
load average.

    python bench/lab_vote_draw.py --shift 0 -- --only final_response_match --num-samples 5 \\
        --jobs 2 --cache bench/out/s25h3/frm.sqlite --out bench/out/s25h3/shipped.jsonl
    for c in 1 2 3; do python bench/lab_vote_draw.py --shift $c -- ... --out .../shift$c.jsonl; done
    python bench/lab_vote_draw.py --report bench/out/s25h3/shipped.jsonl bench/out/s25h3/shift*.jsonl
    python bench/lab_vote_draw.py --report A.jsonl --against B.jsonl   # the gate, A shipped

`--report` prints each run's right count, the cases whose verdict differs between the runs, and
per case the probability over u that the vote is right (`p_right`, from the first run's label
probabilities; checked against the shifted runs). Its sum, the count expected over the draw, is
what a prompt decides; the count of one run adds the draw's coin flips to it. `--against`
compares two prompts by that expected count and the gold-label probability, case by case.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_judge
import lab_example_ablation

from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.criteria.judge.labelled import POSITIVE

TEMPERATURE = 0.7  # the sampling temperature of a multi-sample verdict (JudgeService)
GRID = 10_000  # offsets u at which p_right is evaluated


def _shift_seed(shift: int) -> None:
    shipped = JudgeService._seed

    def shifted(self: JudgeService, *args: Any, **kwargs: Any) -> int:
        return shipped(self, *args, **kwargs) + shift

    JudgeService._seed = shifted  # type: ignore[method-assign]


def _cpu() -> float:
    own, children = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run(args: argparse.Namespace, rest: list[str]) -> None:
    for spec in args.keep:
        lab_example_ablation._keep(spec)
    _shift_seed(args.shift)
    sys.argv = [sys.argv[0], *[a for a in rest if a != "--"]]
    out = Path(sys.argv[sys.argv.index("--out") + 1]) if "--out" in sys.argv else None
    load, wall, cpu = os.getloadavg(), time.perf_counter(), _cpu()
    bench_judge.main()
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    meta = {"shift": args.shift, "keep": args.keep, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "load_start": load, "load_end": os.getloadavg()}
    print(json.dumps(meta), file=sys.stderr)
    if out is not None:
        Path(f"{out}.meta.json").write_text(json.dumps(meta))


# ---------------------------------------------------------------------------------------------
# The draw's expectation


def vote_share(distribution: dict[str, float], label: str, n: int = 5, temperature: float = TEMPERATURE,
               grid: int = GRID) -> float:
    """The probability over the draw's offset u that `label` gets the most of `n` votes drawn
    as `engine.logprobs.draw` draws them (the same sharpening and points (i + u) / n)."""
    key = (tuple(sorted(distribution.items())), label, n, temperature, grid)
    if key not in _SHARES:
        _SHARES[key] = _vote_share(distribution, label, n, temperature, grid)
    return _SHARES[key]


_SHARES: dict[tuple[Any, ...], float] = {}


def _vote_share(distribution: dict[str, float], label: str, n: int, temperature: float, grid: int) -> float:
    labels = sorted(k for k, p in distribution.items() if p > 0)
    if label not in labels:
        return 0.0
    top = max(distribution[k] for k in labels)
    weights = [math.exp((math.log(distribution[k]) - math.log(top)) / max(temperature, 1e-3)) for k in labels]
    total = sum(weights)
    bounds, cumulative = [], 0.0
    for w in weights:
        cumulative += w / total
        bounds.append(cumulative)
    wins = 0
    for g in range(grid):
        u = (g + 0.5) / grid
        votes = dict.fromkeys(labels, 0)
        for i in range(n):
            point = (i + u) / n
            k = next((j for j, b in enumerate(bounds) if point < b), len(labels) - 1)
            votes[labels[k]] += 1
        best = max(votes.values())
        wins += votes[label] == best and list(votes.values()).count(best) == 1
    return wins / grid


def _rows(path: str) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in map(json.loads, Path(path).read_text().splitlines())}


def gold_prob(row: dict[str, Any]) -> float | None:
    """The first question's probability of the gold label (None without probabilities)."""
    probs = (row.get("label_probs") or [None])[0]
    return float(probs.get(row["label"], 0.0)) if probs else None


def _probs(rows: dict[str, dict[str, Any]], ids: list[str],
           of: Callable[[dict[str, Any]], float | None]) -> dict[str, float]:
    return {i: p for i in ids if (p := of(rows[i])) is not None}


def p_right(row: dict[str, Any]) -> float | None:
    """The probability over the vote draw that the case comes out right: its gold label wins
    the first question's vote (one-question criteria; None without probabilities)."""
    probs = (row.get("label_probs") or [None])[0]
    if not probs or len(row.get("label_probs") or []) != 1:
        return None
    return vote_share({k: float(v) for k, v in probs.items()}, row["label"], row["num_samples"])


def expected(rows: dict[str, dict[str, Any]], ids: list[str]) -> tuple[float, float]:
    """The count expected over the draw and its standard deviation (cases drawn independently:
    each case's offset comes from its own seed)."""
    ps = [p_right(rows[i]) for i in ids]
    known = [p for p in ps if p is not None]
    fixed = sum(rows[i]["correct"] for i, p in zip(ids, ps, strict=True) if p is None)
    return fixed + sum(known), math.sqrt(sum(p * (1 - p) for p in known))


def report(paths: list[str]) -> None:
    runs = [_rows(p) for p in paths]
    ids = sorted(set.intersection(*(set(r) for r in runs)))
    counts = [sum(r[i]["correct"] for i in ids) for r in runs]
    for path, n in zip(paths, counts, strict=True):
        print(f"{path}: {n}/{len(ids)} right")
    if len(runs) > 1:
        print(f"count over {len(runs)} runs: mean {statistics.mean(counts):.2f}, sd "
              f"{statistics.stdev(counts):.2f}, min {min(counts)}, max {max(counts)}")
    same_probs = sum(all(gold_prob(r[i]) == gold_prob(runs[0][i]) for r in runs) for i in ids)
    print(f"label probabilities identical in every run: {same_probs}/{len(ids)} cases")
    mean, sd = expected(runs[0], ids)
    gold = _probs(runs[0], ids, gold_prob)
    print(f"expected over the draw (first run's probabilities): {mean:.2f}/{len(ids)}, sd {sd:.2f}; "
          f"gold-label p mean {statistics.mean(gold.values()):.3f}")
    moved = [i for i in ids if len({r[i]["correct"] for r in runs}) > 1]
    print(f"cases whose verdict differs between the runs: {len(moved)}")
    print("| case | gold | gold-label p | p_right over the draw | right in runs |")
    print("|---|---|---|---|---|")
    for i in ids:
        pr, gp = p_right(runs[0][i]), gold_prob(runs[0][i])
        if i in moved or (pr is not None and 0.0 < pr < 1.0):
            right = sum(r[i]["correct"] for r in runs)
            print(f"| {i} | {runs[0][i]['label']} | {gp:.3f} | {pr:.2f} | {right}/{len(runs)} |")


def against(a_path: str, b_path: str) -> None:
    """The gate's figures, B against A: expected counts over the draw, gold-label p means, and
    the paired per-case differences of the gold-label p (mean, standard error, up / down).
    Session 25's gate (stated before its variant was run): B passes iff its expected count over
    the draw and its gold-label p mean are both >= A's; the paired figures are read, not gated."""
    a, b = _rows(a_path), _rows(b_path)
    ids = sorted(set(a) & set(b))
    for name, rows in ((a_path, a), (b_path, b)):
        mean, sd = expected(rows, ids)
        gold = _probs(rows, ids, gold_prob)
        probs = list(gold.values())
        valid = [p for i, p in gold.items() if rows[i]["label"] in POSITIVE]
        invalid = [p for i, p in gold.items() if rows[i]["label"] not in POSITIVE]
        print(f"{name}: {sum(rows[i]['correct'] for i in ids)}/{len(ids)} right in this run, expected "
              f"over the draw {mean:.2f} (sd {sd:.2f}); gold-label p mean {statistics.mean(probs):.4f} "
              f"({statistics.mean(valid):.3f} positive / {statistics.mean(invalid):.3f} negative)")
    ga, gb = _probs(a, ids, gold_prob), _probs(b, ids, gold_prob)
    d = [gb[i] - ga[i] for i in ids if i in ga and i in gb]
    print(f"paired gold-label p, B - A over {len(d)} cases: mean {statistics.mean(d):+.4f}, se "
          f"{statistics.stdev(d) / math.sqrt(len(d)):.4f}, up {sum(x > 0 for x in d)}, "
          f"down {sum(x < 0 for x in d)}")
    ra, rb = _probs(a, ids, p_right), _probs(b, ids, p_right)
    print("cases whose p_right moved by more than 0.1:")
    for x, i in sorted((rb[i] - ra[i], i) for i in ids if i in ra and i in rb):
        if abs(x) > 0.1:
            print(f"  {i} ({a[i]['label']}): gold p {gold_prob(a[i]):.3f} -> {gold_prob(b[i]):.3f}, "
                  f"p_right {p_right(a[i]):.2f} -> {p_right(b[i]):.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shift", type=int, help="run bench_judge.py with the vote seeds shifted by this")
    p.add_argument("--keep", action="append", default=[], metavar="NAME=I,J,...")
    p.add_argument("--report", nargs="+", metavar="JSONL", help="runs of one prompt, the first the reference")
    p.add_argument("--against", metavar="JSONL", help="with one --report run: another prompt's run")
    args, rest = p.parse_known_args()
    if args.report and args.against:
        against(args.report[0], args.against)
    elif args.report:
        report(args.report)
    elif args.shift is not None:
        run(args, rest)
    else:
        p.error("--shift or --report")


if __name__ == "__main__":
    main()
