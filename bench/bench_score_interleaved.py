"""Criteria throughput on a busy machine: ADK's and agenteval's passes interleaved in one process.

    python bench/bench_score_interleaved.py [--n 10000] [--seed 0] [--repeat 5]

`bench_score.py` runs each side in its own process, one after the other: when other work
comes and goes on the machine (a shared 2-core box at load 10+), the two sides see different
machines. Here one process loads the corpus with both loaders, freezes it (`gc.freeze()`), and
per metric alternates an ADK pass and an agenteval pass (`--repeat` pairs after one warm-up
pair), as `bench_score.py` builds them (an evaluator / criterion per case); the ratio is taken
pair by pair on process CPU time (and wall), and its median reported. Every score is compared
(exact float equality).

Each agenteval pass starts cold, as one `agenteval score` run does: its ROUGE token caches are
cleared and every invocation's memoised tool calls dropped (`forget_tool_calls`), outside the
timed region. Since 2026-11-26 (session 11) the calls are collected as each invocation's
intermediate data is validated, so a freshly loaded set holds them: the bench collects them
again after dropping them and freezes them with the corpus (the state a load leaves), times
that collection and prints the trajectory ratios with it added to agenteval's pass
(`+collect`): an upper bound of what loading pays for it, since this collection walks cold
objects and frees the previous pass's (at load the objects are fresh in the caches; a
streamed load of both 10,000-case files measured the same CPU with and without it).

Earlier on 2026-11-26 the invocations memoised their call keys lazily and the bench kept the
memos, so every pass after the first read the keys the first had built, while ADK walked every
invocation's events again: that flattered agenteval (`--keep-memos` measures that way, e.g. an
older src given with PYTHONPATH). The corpus is written to
`bench/out/c<n>` (`c2k` for 2,000) unless `--n` is 10,000 (`bench/out`, which the other benches share).
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
# This checkout's src/ first unless PYTHONPATH names one (a before/after): the `agenteval`
# installed here was an editable install of another copy in session 14, which runs would time.
if not os.environ.get("PYTHONPATH"):
    os.environ["PYTHONPATH"] = str(BENCH_DIR.parent / "src")
    sys.path.insert(0, os.environ["PYTHONPATH"])

from bench_score import METRICS, same  # noqa: E402
from gen_corpus import DEFAULT_OUT, ensure_corpus  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None,
                    help="corpus directory (default: bench/out for 10,000 cases, else bench/out/c<n>)")
    ap.add_argument("--keep-memos", action="store_true",
                    help="keep the invocations' memoised calls between passes (warm; flatters agenteval)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    if args.out is None:  # another size must not overwrite the shared 10,000-case corpus
        size = f"{args.n // 1000}k" if args.n % 1000 == 0 else str(args.n)
        args.out = DEFAULT_OUT if args.n == 10_000 else DEFAULT_OUT / f"c{size}"
    exp_path, act_path = ensure_corpus(args.out, args.n, args.seed)

    from google.adk.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config
    from google.adk.evaluation.final_response_match_v1 import RougeEvaluator
    from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file
    from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator

    from agenteval.criteria import EvalContext, default_registry
    from agenteval.criteria import rouge as rouge_module
    from agenteval.datasets import load_eval_config, load_eval_set

    a_exp, a_act = load_eval_set_from_file(str(exp_path), "x"), load_eval_set_from_file(str(act_path), "x")
    e_exp, e_act = load_eval_set(exp_path), load_eval_set(act_path)
    a_by = {c.eval_id: c for c in a_act.eval_cases}
    e_by = {c.eval_id: c for c in e_act.eval_cases}
    a_pairs = [(c.eval_id, a_by[c.eval_id].conversation or [], c.conversation) for c in a_exp.eval_cases]
    e_pairs = [(e_by[c.eval_id].conversation or [], c.conversation) for c in e_exp.eval_cases]
    e_invocations = [inv for act, exp in e_pairs for inv in (*act, *exp)]
    invocations = sum(len(p[1]) for p in a_pairs)
    gc.collect()
    gc.freeze()
    registry = default_registry()
    print(f"{len(a_pairs)} cases, {invocations} invocations; load average {os.getloadavg()[0]:.1f}")
    # Whether this src collects the calls as it validates (session 11 on): then `cold` restores that.
    collects = any(hasattr(inv.intermediate_data, "_calls_memo") for inv in e_invocations[:200])
    print(f"{'metric':<10} {'ADK CPU s':>10} {'agenteval CPU s':>16} {'speed-up CPU':>13} "
          f"{'(wall)':>8} {'+collect':>9}  scores")
    for label, stem, name in METRICS:
        config = load_eval_config(args.out / f"config_{stem}.json")
        a_metric = get_eval_metrics_from_config(
            EvalConfig.model_validate_json((args.out / f"config_{stem}.json").read_text()))[0]
        reads_calls = name == "tool_trajectory_avg_score"
        cls: Any = TrajectoryEvaluator if reads_calls else RougeEvaluator
        metric = registry.configure(name, config.criteria[name])

        def adk(cls: Any = cls, a_metric: Any = a_metric) -> list[Any]:
            return [cls(eval_metric=a_metric).evaluate_invocations(act, exp) for _, act, exp in a_pairs]

        def ours(metric: Any = metric) -> list[Any]:
            return [metric.build().score(EvalContext(actual=act, expected=exp)) for act, exp in e_pairs]

        def cold() -> float:
            """Untimed in the pass: what a fresh `agenteval score` process starts from. Returns
            the CPU seconds of collecting the calls again where loading collects them."""
            for fn in (rouge_module._chunk_tokens, rouge_module._ascii_word_tokens, rouge_module._kind):
                fn.cache_clear()
            if args.keep_memos:
                return 0.0
            for inv in e_invocations:
                inv.forget_tool_calls()
            if not collects:
                return 0.0
            c = time.process_time()
            for inv in e_invocations:
                inv.tool_calls()
            spent = time.process_time() - c
            gc.freeze()  # as the corpus was after loading: not walked by the collector in the pass
            return spent

        ratios, walls, a_cpu, e_cpu, with_collect = [], [], [], [], []
        a_out: list[Any] = []
        e_out: list[Any] = []
        for i in range(args.repeat + 1):
            # Neither side's results are alive while the other side runs (the collector would
            # walk them), and each pass starts from a collected heap, as in bench_score.py.
            a_out = e_out = []
            gc.collect()
            c0, t0 = time.process_time(), time.perf_counter()
            a_out = adk()
            a_cpu_s, a_wall_s = time.process_time() - c0, time.perf_counter() - t0
            a_scores = [(r.overall_score, [p.score for p in r.per_invocation_results]) for r in a_out]
            a_out = []
            collect_s = cold()
            gc.collect()
            c1, t1 = time.process_time(), time.perf_counter()
            e_out = ours()
            c2, t2 = time.process_time(), time.perf_counter()
            if i:  # the first pair warms up
                a_cpu.append(a_cpu_s)
                e_cpu.append(c2 - c1)
                ratios.append(a_cpu_s / (c2 - c1))
                with_collect.append(a_cpu_s / (c2 - c1 + collect_s) if reads_calls else math.nan)
                walls.append(a_wall_s / (t2 - t1))
        bad = sum(1 for (overall, per), e in zip(a_scores, e_out, strict=True)
                  if not same(overall, e.score)
                  or any(not same(x, y.score) for x, y in zip(per, e.per_invocation, strict=True)))
        print(f"{label:<10} {statistics.median(a_cpu):>10.3f} {statistics.median(e_cpu):>16.3f} "
              f"{statistics.median(ratios):>12.2f}x {statistics.median(walls):>7.2f}x "
              f"{statistics.median(with_collect):>8.2f}x  "
              f"{'identical' if not bad else f'{bad} cases differ'}")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
