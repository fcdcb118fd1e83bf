"""Scoring throughput: ADK 2.13.0's evaluators vs agenteval's criteria, with exact score parity.

Run with the interpreter that has both google-adk and agenteval installed:

    /work/adkvenv/bin/python bench/bench_score.py [--n 10000] [--seed 0] [--repeat 3]

Each side runs in its own subprocess (so that its peak RSS can be read on its own); each loads
the expected and actual eval sets once with its own models, then, for the three trajectory match
types and for ROUGE-1, does one warm-up pass over every case followed by `--repeat` timed passes.

* ADK: per case, `TrajectoryEvaluator(eval_metric=m)` / `RougeEvaluator(eval_metric=m)` then
  `evaluate_invocations(actual, expected)`, with `m` from ADK's own
  `get_eval_metrics_from_config(EvalConfig(...))` on the same config file (what
  `LocalEvalService` does: a fresh evaluator per case and metric).
* agenteval: per case, `default_registry().configure(name, value).build().score(EvalContext(...))`
  (configured once; built per case as the runner does).

After loading, both sides call `gc.freeze()`: the ~10^6 loaded model objects then sit in the
permanent generation, so a pass is not charged for a full collection that traverses the corpus
(those otherwise fire every few passes, at 0.3–0.5 s each, on whichever side happens to cross
the threshold). `--no-gc-freeze` measures without it. The collector's cost on loading is real,
but it belongs to the end-to-end benchmark (bench_e2e.py), not to the criteria.

agenteval memoises ROUGE tokens per ASCII word (`functools.lru_cache`). The timed ROUGE passes
clear those caches first ("cold": what one `agenteval score` run sees); `rouge (warm)` keeps
them, as a long-lived process scoring many runs would.

The parent compares every overall and per-invocation score with exact float equality and exits
non-zero on any difference, printing the case id, metric, invocation and both values.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import platform
import resource
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
# This checkout's src/ first unless PYTHONPATH names one (a before/after): the `agenteval`
# installed here was an editable install of another copy in session 14, which runs would time.
if not os.environ.get("PYTHONPATH"):
    os.environ["PYTHONPATH"] = str(BENCH_DIR.parent / "src")
    sys.path.insert(0, os.environ["PYTHONPATH"])

from gen_corpus import DEFAULT_OUT, ensure_corpus, source_state  # noqa: E402

# (label, config file stem, metric name)
METRICS: list[tuple[str, str, str]] = [
    ("EXACT", "EXACT", "tool_trajectory_avg_score"),
    ("IN_ORDER", "IN_ORDER", "tool_trajectory_avg_score"),
    ("ANY_ORDER", "ANY_ORDER", "tool_trajectory_avg_score"),
    ("rouge", "rouge", "response_match_score"),
]
WARM_LABEL = "rouge (warm)"

Scores = tuple[float | None, list[float | None]]  # overall, per invocation


@dataclass
class SideResult:
    side: str
    seconds: dict[str, list[float]] = field(default_factory=dict)  # label -> timed passes
    cpu_seconds: dict[str, list[float]] = field(default_factory=dict)  # process CPU per pass
    scores: dict[str, dict[str, Scores]] = field(default_factory=dict)  # label -> eval_id -> ..
    invocations: int = 0
    cases: int = 0
    load_seconds: float = 0.0
    rss_after_import_kb: int = 0
    rss_after_load_kb: int = 0
    maxrss_kb: int = 0
    versions: dict[str, str] = field(default_factory=dict)


def current_rss_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def timed_passes(run: Callable[[], list[Any]], repeat: int,
                 before: Callable[[], None] | None = None
                 ) -> tuple[list[float], list[float], list[Any]]:
    """One untimed warm-up pass, then `repeat` timed passes.

    Returns wall seconds and process CPU seconds per timed pass, and the last pass's output.
    """
    if before:
        before()
    out = run()  # warm-up
    walls, cpus = [], []
    for _ in range(repeat):
        if before:
            before()
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        out = run()
        cpus.append(time.process_time() - c0)
        walls.append(time.perf_counter() - t0)
    return walls, cpus, out


# --------------------------------------------------------------------------------------------
# ADK side
# --------------------------------------------------------------------------------------------

def run_adk(exp_path: Path, act_path: Path, cfg_dir: Path, repeat: int,
            freeze: bool) -> SideResult:
    warnings.filterwarnings("ignore")
    from google.adk import version as adk_version
    from google.adk.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config
    from google.adk.evaluation.final_response_match_v1 import RougeEvaluator
    from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file
    from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator

    res = SideResult("adk", versions={"google-adk": adk_version.__version__})
    res.rss_after_import_kb = current_rss_kb()
    t0 = time.perf_counter()
    expected = load_eval_set_from_file(str(exp_path), "bench")
    actual = load_eval_set_from_file(str(act_path), "bench")
    res.load_seconds = time.perf_counter() - t0
    res.rss_after_load_kb = current_rss_kb()
    by_id = {c.eval_id: c for c in actual.eval_cases}
    pairs = [(c.eval_id, by_id[c.eval_id].conversation, c.conversation)
             for c in expected.eval_cases]
    if freeze:
        gc.freeze()
    res.cases = len(pairs)
    res.invocations = sum(len(p[1] or []) for p in pairs)

    evaluators: dict[str, type[Any]] = {"tool_trajectory_avg_score": TrajectoryEvaluator,
                                        "response_match_score": RougeEvaluator}
    for label, stem, name in METRICS:
        config = EvalConfig.model_validate_json((cfg_dir / f"config_{stem}.json").read_text())
        metric = next(m for m in get_eval_metrics_from_config(config) if m.metric_name == name)
        cls = evaluators[name]

        def run(metric: Any = metric, cls: type[Any] = cls) -> list[Any]:
            return [cls(eval_metric=metric).evaluate_invocations(a, e) for _, a, e in pairs]

        res.seconds[label], res.cpu_seconds[label], out = timed_passes(run, repeat)
        res.scores[label] = {
            pid: (r.overall_score, [p.score for p in r.per_invocation_results])
            for (pid, _, _), r in zip(pairs, out, strict=True)
        }
    res.maxrss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return res


# --------------------------------------------------------------------------------------------
# agenteval side
# --------------------------------------------------------------------------------------------

def run_agenteval(exp_path: Path, act_path: Path, cfg_dir: Path, repeat: int,
                  freeze: bool) -> SideResult:
    from importlib.metadata import version

    from agenteval.criteria import EvalContext, default_registry
    from agenteval.criteria import rouge as rouge_module
    from agenteval.datasets import load_eval_config, load_eval_set

    res = SideResult("agenteval", versions={"agenteval": version("agenteval")})
    res.rss_after_import_kb = current_rss_kb()
    t0 = time.perf_counter()
    expected = load_eval_set(exp_path)
    actual = load_eval_set(act_path)
    res.load_seconds = time.perf_counter() - t0
    res.rss_after_load_kb = current_rss_kb()
    by_id = {c.eval_id: c for c in actual.eval_cases}
    pairs = [(c.eval_id, by_id[c.eval_id].conversation or [], c.conversation)
             for c in expected.eval_cases]
    if freeze:
        gc.freeze()
    res.cases = len(pairs)
    res.invocations = sum(len(p[1]) for p in pairs)

    def clear_caches() -> None:
        for fn in (getattr(rouge_module, "_chunk_tokens", None),
                   getattr(rouge_module, "_ascii_word_tokens", None),
                   getattr(rouge_module, "_kind", None)):
            if fn is not None and hasattr(fn, "cache_clear"):
                fn.cache_clear()

    registry = default_registry()
    runs: list[tuple[str, str, str, bool]] = [(*m, True) for m in METRICS]
    runs.append((WARM_LABEL, "rouge", "response_match_score", False))
    for label, stem, name, cold in runs:
        config = load_eval_config(cfg_dir / f"config_{stem}.json")
        metric = registry.configure(name, config.criteria[name])

        def run(metric: Any = metric) -> list[Any]:
            return [metric.build().score(EvalContext(actual=a, expected=e)) for _, a, e in pairs]

        res.seconds[label], res.cpu_seconds[label], out = timed_passes(
            run, repeat, clear_caches if cold else None)
        res.scores[label] = {
            pid: (r.score, [p.score for p in r.per_invocation])
            for (pid, _, _), r in zip(pairs, out, strict=True)
        }
    res.maxrss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return res


# --------------------------------------------------------------------------------------------
# Parent: run both sides, compare, report
# --------------------------------------------------------------------------------------------

def same(a: float | None, b: float | None) -> bool:
    """Exact equality, also of type (an int 1 is not the float 1.0 a result file would hold)."""
    return a is b or (type(a) is type(b) and a == b)


def compare(adk: SideResult, ae: SideResult,
            limit: int = 20) -> tuple[dict[str, int], list[str]]:
    """Mismatch counts per label (cases with any differing score) and the first messages."""
    counts: dict[str, int] = {}
    problems: list[str] = []
    for label, adk_label, name in [(m[0], m[0], m[2]) for m in METRICS] + [
            (WARM_LABEL, "rouge", "response_match_score")]:
        a_scores, e_scores = adk.scores[adk_label], ae.scores[label]
        bad = 0
        if a_scores.keys() != e_scores.keys():
            problems.append(f"{label}: case ids differ")
            counts[label] = len(a_scores.keys() ^ e_scores.keys())
            continue
        for cid, (a_all, a_per) in a_scores.items():
            e_all, e_per = e_scores[cid]
            msgs = []
            if not same(a_all, e_all):
                msgs.append(f"{cid} {name}/{label} overall: adk={a_all!r} agenteval={e_all!r}")
            if len(a_per) != len(e_per):
                msgs.append(f"{cid} {name}/{label}: {len(a_per)} vs {len(e_per)} invocations")
            else:
                msgs += [f"{cid} {name}/{label} invocation {i}: adk={x!r} agenteval={y!r}"
                         for i, (x, y) in enumerate(zip(a_per, e_per, strict=True)) if not same(x, y)]
            if msgs:
                bad += 1
                problems += msgs[: max(0, limit - len(problems))]
        counts[label] = bad
    return counts, problems


def run_side(side: str, args: argparse.Namespace, exp: Path, act: Path) -> tuple[SideResult, Any]:
    dump = args.out / f"bench_score_{side}.pkl"
    cmd = [sys.executable, __file__, "--side", side, "--expected", str(exp), "--actual", str(act),
           "--cfg-dir", str(args.out), "--repeat", str(args.repeat), "--dump", str(dump)]
    if args.no_gc_freeze:
        cmd.append("--no-gc-freeze")
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{side} side failed with exit code {proc.returncode}")
    with open(dump, "rb") as f:
        result: SideResult = pickle.load(f)
    return result, usage


def fmt_rate(x: float) -> str:
    return f"{x:,.0f}"


def report(adk: SideResult, ae: SideResult, adk_usage: Any, ae_usage: Any, repeat: int,
           mismatched: dict[str, int]) -> dict[str, Any]:
    n = adk.invocations
    rows = []
    print(f"\n{adk.cases} cases, {n} invocations; warm-up + {repeat} timed passes; "
          "invocations/second from the median pass (best pass in brackets);\n"
          "speed-up = ADK median / agenteval median, by wall time and by process CPU time\n")
    header = (f"{'metric':<14} {'ADK inv/s':>18} {'agenteval inv/s':>22} "
              f"{'speed-up':>9} {'(CPU)':>7} {'scores':>10}")
    print(header)
    print("-" * len(header))
    for label, _, _ in [*METRICS, (WARM_LABEL, "", "")]:
        adk_label = "rouge" if label == WARM_LABEL else label
        a_t, e_t = adk.seconds[adk_label], ae.seconds[label]
        a_med, e_med = statistics.median(a_t), statistics.median(e_t)
        a_cpu = statistics.median(adk.cpu_seconds[adk_label])
        e_cpu = statistics.median(ae.cpu_seconds[label])
        a_rate, e_rate = n / a_med, n / e_med
        row = {"metric": label, "adk_median_s": a_med, "adk_best_s": min(a_t),
               "agenteval_median_s": e_med, "agenteval_best_s": min(e_t),
               "adk_inv_per_s": a_rate, "agenteval_inv_per_s": e_rate,
               "speedup": a_med / e_med, "adk_cpu_median_s": a_cpu,
               "agenteval_cpu_median_s": e_cpu, "speedup_cpu": a_cpu / e_cpu,
               "mismatched_cases": mismatched[label]}
        rows.append(row)
        verdict = "identical" if not mismatched[label] else f"{mismatched[label]} DIFF"
        print(f"{label:<14} {fmt_rate(a_rate):>9} [{fmt_rate(n / min(a_t)):>7}] "
              f"{fmt_rate(e_rate):>12} [{fmt_rate(n / min(e_t)):>7}] "
              f"{a_med / e_med:>8.2f}x {a_cpu / e_cpu:>6.2f}x {verdict:>10}")
    mem = {}
    print("\nmemory (KiB)      after import   after load   peak (self)  peak (wait4)   load s")
    for res, usage in ((adk, adk_usage), (ae, ae_usage)):
        mem[res.side] = {"after_import_kb": res.rss_after_import_kb,
                         "after_load_kb": res.rss_after_load_kb, "peak_kb": res.maxrss_kb,
                         "peak_wait4_kb": usage.ru_maxrss, "load_seconds": res.load_seconds}
        print(f"{res.side:<16} {res.rss_after_import_kb:>13,} {res.rss_after_load_kb:>12,} "
              f"{res.maxrss_kb:>13,} {usage.ru_maxrss:>13,} {res.load_seconds:>8.2f}")
    return {"cases": adk.cases, "invocations": n, "repeat": repeat, "rows": rows, "memory": mem,
            "date": time.strftime("%Y-%m-%d"), "python": platform.python_version(),
            "versions": {**adk.versions, **ae.versions}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000, help="cases in the corpus (default 10000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="timed passes per metric (default 3)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--no-gc-freeze", action="store_true",
                    help="do not gc.freeze() the loaded corpus before timing")
    # internal: one side in a subprocess
    ap.add_argument("--side", choices=["adk", "agenteval"], help=argparse.SUPPRESS)
    ap.add_argument("--expected", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--actual", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--cfg-dir", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--dump", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.side:
        fn = run_adk if args.side == "adk" else run_agenteval
        result = fn(args.expected, args.actual, args.cfg_dir, args.repeat, not args.no_gc_freeze)
        with open(args.dump, "wb") as f:
            pickle.dump(result, f)
        return

    exp, act = ensure_corpus(args.out, args.n, args.seed)
    load_before = os.getloadavg()
    print(f"corpus: {exp} / {act}; python {platform.python_version()} on {os.cpu_count()} cores; "
          f"load average {load_before[0]:.2f}")
    adk, adk_usage = run_side("adk", args, exp, act)
    print("ADK side done")
    ae, ae_usage = run_side("agenteval", args, exp, act)
    print("agenteval side done")
    mismatched, problems = compare(adk, ae)
    summary = report(adk, ae, adk_usage, ae_usage, args.repeat, mismatched)
    summary["mismatches"] = problems
    summary["gc_freeze"] = not args.no_gc_freeze
    summary["agenteval_source"] = source_state()
    summary["loadavg_before_after"] = [load_before[0], os.getloadavg()[0]]
    print(f"\nload average before/after: {load_before[0]:.2f} / {os.getloadavg()[0]:.2f} "
          f"(2 cores: above ~0.5 before the run, other processes competed for the CPU)")
    (args.out / "bench_score.json").write_text(json.dumps(summary, indent=2) + "\n")
    if problems:
        print(f"\nSCORE MISMATCHES ({sum(mismatched.values())} case/metric pairs; first "
              f"{len(problems)} differences):", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        sys.exit(1)
    print("\nall overall and per-invocation scores identical (exact float equality)")


if __name__ == "__main__":
    main()
