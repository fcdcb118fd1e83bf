"""Seconds per verdict and per case, before and after one-pass verdicts (issue 16), on the embedded judge.

Each labelled case (bench_judge.py's cases, `--limit` per criterion and injection group) is
scored through `score_case` under several judge configurations, one after another, the order
rotated from case to case so that no configuration always runs first on a busy machine:

  sampled1   num_samples 1, written samples (as before: no log-probabilities asked)
  sampled5   num_samples 5, written samples, early stop (the default before issue 16)
  onepass1   num_samples 1, one greedy reply with log-probabilities (confidence from them)
  onepass5   num_samples 5, the same reply, the 5 samples drawn from the verdict token
  label5     (removed) as onepass5, a verdict-first reply stopped at its label by a stop string:
             llama.cpp then reported wrong probabilities (0.9999 where it gives 0.64 without)

No judge cache. The engine's prompt cache keeps each criterion's system prompt and solved
examples (as in any real run, after the first question); every question itself is processed
afresh: a per-(configuration, case) tag at the start of each question keeps one configuration
from reusing another's. Every criterion is warmed up with one untimed case first.

    python bench/bench_judge_onepass.py [--limit 2] [--configs sampled1,sampled5,onepass1,onepass5]
    python bench/bench_judge_onepass.py --table-from bench/out/judge_onepass.jsonl

Per-case rows go to --out; tables to stdout. Besides wall seconds, each row has the CPU seconds
the process spent (llama.cpp's threads included): with `--threads 1` that is close to what the
verdict takes on an idle core, and far less sensitive than wall time to other work on the
machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_judge import OUT_DIR, Counting, load_cases, run_case

from agenteval.criteria.judge import JudgeService
from agenteval.models import LLM, LocalModel, Message, ModelRequest, ModelResponse, resolve_model

CONFIGS: dict[str, tuple[int, int]] = {  # name: (num_samples, logprobs)
    "sampled1": (1, 0), "sampled5": (5, 0), "onepass1": (1, 20), "onepass5": (5, 20),
    "label5": (5, 20),  # only to read the rows of earlier runs
}


@dataclass
class Tagged(Counting):
    """Counting, with `tag` at the start of the question (the last message)."""

    tag: str = ""

    async def generate(self, request: ModelRequest) -> ModelResponse:
        *head, last = request.messages
        tagged = replace(request, messages=(*head, Message(last.role, f"[{self.tag}] {last.content}")))
        return await super().generate(tagged)


THREADS: int | None = None  # --threads: llama.cpp threads (1 holds up best on a busy 2-core machine)


def judge_for(config: str, tag: str) -> tuple[JudgeService, Counting]:
    _, logprobs = CONFIGS[config]
    model = Tagged(LocalModel(threads=THREADS) if THREADS else resolve_model("local", {}), tag=tag)
    resolve: Callable[[str], LLM] = lambda name: model  # noqa: E731
    return JudgeService(resolve, None, logprobs=logprobs), model


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(q * (len(values) - 1))))] if values else float("nan")


def tables(rows: list[dict[str, Any]]) -> None:
    configs = [c for c in CONFIGS if any(r["config"] == c for r in rows)]
    print("| configuration | cases | verdicts | accuracy | median s/verdict | p90 s/verdict "
          "| median CPU s/verdict | p90 CPU s/verdict | model calls | completion tokens |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for c in configs:
        mine = [r for r in rows if r["config"] == c]
        per = [r["seconds_per_verdict"] for r in mine]
        cpu = [r.get("cpu_seconds_per_verdict", float("nan")) for r in mine]
        print(f"| {c} | {len(mine)} | {sum(r['questions'] for r in mine)} | "
              f"{sum(r['correct'] for r in mine)}/{len(mine)} | {statistics.median(per):.2f} | "
              f"{pct(per, 0.9):.2f} | {statistics.median(cpu):.2f} | {pct(cpu, 0.9):.2f} | "
              f"{sum(r['model_calls'] for r in mine)} | {sum(r['completion_tokens'] for r in mine)} |")
    kinds = sorted({r["criterion"] for r in rows})
    print("\nMedian seconds per case, wall / CPU (the whole criterion: every question, requirement and "
          "cross-check):\n")
    print("| criterion | " + " | ".join(configs) + " |")
    print("|---|" + "---|" * len(configs))
    for k in kinds:
        cells = []
        for c in configs:
            mine = [r for r in rows if r["config"] == c and r["criterion"] == k]
            cells.append(f"{statistics.median([r['seconds'] for r in mine]):.1f} / "
                         f"{statistics.median([r.get('cpu_seconds', float('nan')) for r in mine]):.1f}")
        print(f"| {k} | " + " | ".join(cells) + " |")
    by_case: dict[str, dict[str, Any]] = {}
    for r in rows:
        by_case.setdefault(r["id"], {})[r["config"]] = r["pred_positive"]
    print("\nSame case verdict as sampled5 (the default before):\n")
    for c in configs:
        same = [v[c] == v["sampled5"] for v in by_case.values() if c in v and "sampled5" in v]
        print(f"- {c}: {sum(same)}/{len(same)}")


async def main_async(args: argparse.Namespace) -> None:
    global THREADS
    THREADS = args.threads
    cases = load_cases(args.only, args.limit, set(args.ids.split(",")) if args.ids else None, args.blind)
    configs = args.configs.split(",")
    print(f"load before: {os.getloadavg()}", file=sys.stderr, flush=True)
    warmed: set[str] = set()
    for kind, inj, case in cases:  # the examples of each criterion into the prompt cache, untimed
        if kind not in warmed:
            warmed.add(kind)
            judge, model = judge_for("onepass1", f"warm-{case['id']}")
            await run_case(kind, inj, case, judge, model, 1)
    rows = []
    out = Path(args.out)
    with out.open("w") as sink:
        for i, (kind, inj, case) in enumerate(cases):
            order = configs[i % len(configs):] + configs[:i % len(configs)]
            for config in order:
                judge, model = judge_for(config, f"{config}-{case['id']}-{args.run_tag}")
                cpu = time.process_time()
                row = await run_case(kind, inj, case, judge, model, CONFIGS[config][0])
                row["cpu_seconds"] = time.process_time() - cpu
                row["cpu_seconds_per_verdict"] = row["cpu_seconds"] / row["questions"]
                row["config"], row["load"] = config, os.getloadavg()[0]
                rows.append(row)
                sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                sink.flush()
                print(f"[{i + 1}/{len(cases)}] {config:9} {'ok ' if row['correct'] else 'BAD'} {row['id']:8} "
                      f"{row['seconds']:6.1f}s cpu={row['cpu_seconds']:.1f}s calls={row['model_calls']} "
                      f"load={row['load']:.2f}",
                      file=sys.stderr, flush=True)
    print(f"load after: {os.getloadavg()}", file=sys.stderr)
    tables(rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only")
    p.add_argument("--limit", type=int, default=2)
    p.add_argument("--ids")
    p.add_argument("--blind", action="store_true")
    p.add_argument("--threads", type=int)
    p.add_argument("--configs", default="sampled1,sampled5,onepass1,onepass5")
    p.add_argument("--run-tag", default=str(int(time.time())))
    p.add_argument("--out", default=str(OUT_DIR / "judge_onepass.jsonl"))
    p.add_argument("--table-from", metavar="JSONL")
    args = p.parse_args()
    if args.table_from:
        tables([json.loads(line) for line in Path(args.table_from).read_text().splitlines() if line.strip()])
        return
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
