"""What each solved example contributes: `bench_judge.py` run with a criterion's examples cut to
a chosen subset, in this process only (nothing in `src/` changes).

A criterion's solved examples are a tuple in `agenteval.criteria.judge.prompting.examples`, read
when its questions are built; `--keep NAME=0,2,5` replaces tuple NAME by those of its examples
(indices into the shipped tuple), so a leave-one-out series measures each example's share of the
tuning set's gold-label probability (`lab_prefix_tokens.py --compare shipped.jsonl cut.jsonl`)
without writing a patch per subset. Every other argument goes to `bench_judge.py`:

    python bench/lab_example_ablation.py --keep HALLUCINATIONS=0,1,2,3,4,5 -- \\
        --only hallucinations --num-samples 5 --jobs 2 --out bench/out/hal_drop6.jsonl
    python bench/lab_example_ablation.py --list HALLUCINATIONS   # the examples, numbered

`--first-only` drops the hallucination questions' cross-checks (their first question's label
probabilities are what a leave-one-out of `HALLUCINATIONS` reads, in ~40% less time); a case's
right or wrong is then the first question's alone.

Only the tuning sets belong here: choosing examples by held-out outcomes would tune on them.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_judge

from agenteval.criteria.judge.engine.decision import JudgeQuestion
from agenteval.criteria.judge.hallucinations import HallucinationsV1
from agenteval.criteria.judge.prompting import examples


def _keep(spec: str) -> None:
    name, _, picks = spec.partition("=")
    shipped = getattr(examples, name)
    setattr(examples, name, tuple(shipped[int(i)] for i in picks.split(",") if i.strip()))
    print(f"{name}: {len(getattr(examples, name))} of {len(shipped)} examples ({picks})", file=sys.stderr)


def _first_only() -> None:
    shipped = HallucinationsV1.questions

    def questions(self: HallucinationsV1, ctx: Any) -> list[JudgeQuestion]:
        return [replace(q, check=None, check_when=frozenset()) for q in shipped(self, ctx)]

    HallucinationsV1.questions = questions  # type: ignore[method-assign]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--keep", action="append", default=[], metavar="NAME=I,J,...")
    p.add_argument("--first-only", action="store_true", help="no hallucination cross-checks")
    p.add_argument("--list", metavar="NAME", help="print the examples of tuple NAME, numbered")
    args, rest = p.parse_known_args()
    if args.list:
        for i, (question, reply) in enumerate(getattr(examples, args.list)):
            print(f"[{i}] {reply}\n    {question[-160:]!r}")
        return
    for spec in args.keep:
        _keep(spec)
    if args.first_only:
        _first_only()
    sys.argv = [sys.argv[0], *[a for a in rest if a != "--"]]
    bench_judge.main()


if __name__ == "__main__":
    main()
