"""End to end, process start to result file: `agenteval score` vs the same job through ADK's API.

    /work/adkvenv/bin/python bench/bench_e2e.py [--n 10000] [--seed 0] [--repeat 5]

Contenders, each a fresh process per run, on the same corpus and default criteria
(tool_trajectory_avg_score 1.0 + response_match_score 0.8):

* `agenteval`: the console script,
  `agenteval score EXPECTED --actual ACTUAL --config_file_path CFG --output OUT`, which on
  the 10,000-case corpus scores in worker processes (`runner.sharded`: `--parallelism`, 4 by
  default, at most one per CPU; their CPU time is counted with the
  command's: `wait4` includes its reaped children, and this process, made the reaper of their
  orphans, waits for the fork server that outlives the command and adds its CPU, which holds
  its workers'); `--one-process` adds the same with `--parallelism 1`;
  (it also computes the four informational efficiency metrics and prints its report tables;
  stdout goes to a file under bench/out/);
* `adk`: `bench/adk_score.py` (ADK's loader, TrajectoryEvaluator + RougeEvaluator per case,
  EvalCaseResult / EvalSetResult assembled as LocalEvalService does, JSON written);
* `adk+efficiency` (with `--efficiency`): the same plus ADK's four efficiency evaluators, i.e. the
  same metric set agenteval computes;
* `agenteval+fixes` and `agenteval+fixes+compact` (with `--what-if`): `profile_e2e.py --what-if
  all [write-compact]`, i.e. `agenteval score` with the fixes suggested in README.md monkeypatched
  in (a prototype of what src/ could reach), the second also writing unindented JSON.

One untimed warm-up run of each (so that byte-code caches exist), then `--repeat` timed rounds,
interleaved. Wall time is measured around the process; CPU time and peak RSS come from
`os.wait4`. Afterwards the two result files are compared score by score (exact equality).

`PYTHONDONTWRITEBYTECODE` is removed from the children's environment: with it set every run
would recompile every imported module from source, which no installed tool does.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
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

from gen_corpus import CONFIGS, DEFAULT_OUT, ensure_corpus, source_state  # noqa: E402

COMPARED = ("tool_trajectory_avg_score", "response_match_score")
EFFICIENCY = ("tool_call_count_v1", "inference_call_count_v1", "token_usage_v1",
              "invocation_duration_v1")


@dataclass
class Runs:
    name: str
    cmd: list[str]
    output: Path
    stdout: Path
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    maxrss_kb: list[int] = field(default_factory=list)
    exit_codes: list[int] = field(default_factory=list)
    processes: list[int] = field(default_factory=list)  # agenteval's, from its console line


def become_subreaper() -> bool:
    """Makes this process the reaper of its descendants' orphans (Linux), so that a process a
    contender leaves behind (a fork server's, which outlives the command and reaps its workers)
    is waited for here and its CPU counted; False where that is not possible."""
    try:
        import ctypes

        return bool(ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) == 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def run_once(r: Runs, env: dict[str, str]) -> tuple[float, float, int, int]:
    r.output.unlink(missing_ok=True)
    with open(r.stdout, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(r.cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    cpu, peak = usage.ru_utime + usage.ru_stime, usage.ru_maxrss
    while True:  # orphans of the contender (this process is their reaper): theirs too
        try:
            _, _, orphan = os.wait4(-1, 0)
        except ChildProcessError:
            break
        cpu += orphan.ru_utime + orphan.ru_stime
        peak = max(peak, orphan.ru_maxrss)
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    if code not in (0, 1) or not r.output.is_file():
        sys.exit(f"{r.name} failed (exit {code}); see {r.stdout}")
    return wall, cpu, peak, code


def processes_used(stdout: Path) -> int:
    """The worker processes `agenteval score` says it scored in (1 when it says nothing)."""
    found = re.search(rb"Scored in (\d+) worker processes", stdout.read_bytes())
    return int(found.group(1)) if found else 1


def scores_of(path: Path, metrics: tuple[str, ...] = COMPARED,
              details: bool = False) -> dict[str, dict[str, Any]]:
    """eval_id -> {status, metric -> [overall, [per invocation]]} from a result document
    (with `details`, each score is paired with the metric result's `details`)."""
    doc = json.loads(path.read_text(encoding="utf-8"))

    def value(m: dict[str, Any]) -> Any:
        return (m["score"], m.get("details")) if details else m["score"]

    out: dict[str, dict[str, Any]] = {}
    for case in doc["eval_case_results"]:
        entry: dict[str, Any] = {"status": case["final_eval_status"]}
        for m in case["overall_eval_metric_results"]:
            if m["metric_name"] in metrics:
                entry[m["metric_name"]] = [value(m), []]
        for inv in case["eval_metric_result_per_invocation"]:
            for m in inv["eval_metric_results"]:
                if m["metric_name"] in metrics:
                    entry[m["metric_name"]][1].append(value(m))
        out[case["eval_id"]] = entry
    return out


def compare(a_path: Path, b_path: Path, limit: int = 20, metrics: tuple[str, ...] = COMPARED,
            keys: tuple[str, ...] = ("status", *COMPARED),
            details: bool = False) -> tuple[int, list[str]]:
    """Cases whose status or metric results differ between an ADK (a) and agenteval (b) file."""
    a, b = scores_of(a_path, metrics, details), scores_of(b_path, metrics, details)
    problems: list[str] = []
    bad = 0
    if a.keys() != b.keys():
        return len(a.keys() ^ b.keys()), ["eval ids differ between the result files"]
    for cid, x in a.items():
        y = b[cid]
        msgs = [f"{cid} {k}: adk={x.get(k)!r} agenteval={y.get(k)!r}"
                for k in keys if x.get(k) != y.get(k)]
        if msgs:
            bad += 1
            problems += msgs[: max(0, limit - len(problems))]
    return bad, problems


def compare_efficiency(adk_eff: Path, agenteval: Path) -> dict[str, dict[str, Any]]:
    """The informational metrics, metric by metric: cases whose scores / details differ."""
    out: dict[str, dict[str, Any]] = {}
    for name in EFFICIENCY:
        n_scores, p_scores = compare(adk_eff, agenteval, 1, (name,), (name,))
        n_details, p_details = compare(adk_eff, agenteval, 1, (name,), (name,), details=True)
        out[name] = {"cases_scores_differ": n_scores, "cases_scores_or_details_differ": n_details,
                     "example": (p_scores or p_details or [""])[0][:400]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=5, help="timed rounds (default 5)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--agenteval", default=str(Path(sys.executable).parent / "agenteval"),
                    help="the agenteval console script (default: beside this interpreter)")
    ap.add_argument("--adk-python", default=sys.executable,
                    help="interpreter with google-adk (default: this one)")
    ap.add_argument("--efficiency", action="store_true",
                    help="also time ADK with its four efficiency metrics (agenteval's metric set)")
    ap.add_argument("--one-process", action="store_true",
                    help="also time `agenteval score --parallelism 1` (no worker processes)")
    ap.add_argument("--what-if", action="store_true",
                    help="also time agenteval with the suggested fixes (profile_e2e.py --what-if all)")
    args = ap.parse_args()

    # Made (if missing) in a child process: a corpus generated in this one raised its peak RSS
    # (578 MiB at 10,000 cases), which every contender forked after inherits (see below).
    subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; from gen_corpus import "
                    "ensure_corpus; ensure_corpus(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))",
                    str(Path(args.out).resolve()), str(args.n), str(args.seed)], cwd=BENCH_DIR, check=True)
    exp, act = ensure_corpus(args.out, args.n, args.seed)  # (now only its paths)
    cfg = args.out / "config_default.json"
    cfg.write_text(json.dumps(CONFIGS["default"]) + "\n")
    agenteval = shutil.which(args.agenteval) or args.agenteval
    common = [str(exp), "--actual", str(act), "--config_file_path", str(cfg), "--output"]
    out = args.out
    runs = [
        Runs("agenteval", [agenteval, "score", *common, str(out / "e2e_agenteval.json")],
             out / "e2e_agenteval.json", out / "e2e_agenteval.stdout"),
        Runs("adk", [args.adk_python, str(BENCH_DIR / "adk_score.py"), *common,
                     str(out / "e2e_adk.json")], out / "e2e_adk.json", out / "e2e_adk.stdout"),
    ]
    if args.one_process:
        runs.insert(1, Runs("agenteval 1 process", [agenteval, "score", "--parallelism", "1", *common,
                                                    str(out / "e2e_agenteval_1p.json")],
                            out / "e2e_agenteval_1p.json", out / "e2e_agenteval_1p.stdout"))
    if args.efficiency:
        runs.append(Runs("adk+efficiency", [args.adk_python, str(BENCH_DIR / "adk_score.py"),
                                            *common, str(out / "e2e_adk_eff.json"),
                                            "--efficiency"],
                         out / "e2e_adk_eff.json", out / "e2e_adk_eff.stdout"))
    if args.what_if:
        for i, (name, fixes) in enumerate((("agenteval+fixes", ["all"]),
                                           ("agenteval+fixes+compact", ["all", "write-compact"]))):
            tag = name.replace("agenteval+", "").replace("+", "_")
            result = out / f"e2e_agenteval_{tag}.json"
            runs.insert(1 + i, Runs(name, [sys.executable, str(BENCH_DIR / "profile_e2e.py"),
                                           "--what-if", *fixes, "--n", str(args.n),
                                           "--seed", str(args.seed), "--out", str(out),
                                           "--result", str(result)],
                                    result, out / f"e2e_agenteval_{tag}.stdout"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    # Counted in a child process: a child's peak RSS (from wait4) starts at its parent's RSS when
    # it is forked (Linux keeps ru_maxrss across fork and exec), so this process must never hold
    # the parsed corpus (1.4 GB for 50,000 cases), or every contender's peak would include it.
    n_inv = int(subprocess.run(
        [sys.executable, "-c", "import json, sys; print(sum(len(c['conversation']) for c in "
         "json.load(open(sys.argv[1], encoding='utf-8'))['eval_cases']))", str(exp)],
        capture_output=True, text=True, check=True).stdout)
    print(f"corpus: {exp.name} / {act.name}: {args.n} cases, {n_inv} invocations "
          f"({exp.stat().st_size / 1e6:.0f} + {act.stat().st_size / 1e6:.0f} MB); "
          f"python {platform.python_version()}, {os.cpu_count()} cores")
    if not become_subreaper():
        print("warning: not a subreaper here: a fork server's CPU (agenteval's workers) is not counted")
    load_before = os.getloadavg()[0]
    print(f"load average {load_before:.2f}")
    for r in runs:
        print(f"  {r.name}: {' '.join(r.cmd)}")
        w, _, _, _ = run_once(r, env)
        print(f"    warm-up {w:.2f}s")
    for i in range(args.repeat):
        for r in runs:
            w, c, m, code = run_once(r, env)
            r.wall.append(w)
            r.cpu.append(c)
            r.maxrss_kb.append(m)
            r.exit_codes.append(code)
            r.processes.append(processes_used(r.stdout))
        print(f"  round {i + 1}: " + ", ".join(
            f"{r.name} {r.wall[-1]:.2f}s" + (f" ({r.processes[-1]} processes)" if r.processes[-1] > 1 else "")
            for r in runs))

    adk_run = next(r for r in runs if r.name == "adk")
    bad, problems = compare(adk_run.output, runs[0].output)
    for r in runs:
        if r.name.startswith("agenteval+"):
            fixes_bad, fixes_problems = compare(adk_run.output, r.output)
            print(f"{r.name} result file vs adk: {fixes_bad} cases differ")
            bad += fixes_bad
            problems += fixes_problems
    adk_wall = statistics.median(adk_run.wall)
    adk_cpu = statistics.median(adk_run.cpu)
    print(f"\n{'contender':<24} {'median s':>9} {'best s':>8} {'CPU s':>7} {'peak RSS MiB':>13} "
          f"{'speed-up vs adk (wall / CPU)':>29}")
    rows = []
    for r in runs:
        med, cpu = statistics.median(r.wall), statistics.median(r.cpu)
        rows.append({"name": r.name, "median_s": med, "best_s": min(r.wall), "cpu_median_s": cpu,
                     "peak_rss_mib": max(r.maxrss_kb) / 1024, "speedup_vs_adk": adk_wall / med,
                     "speedup_vs_adk_cpu": adk_cpu / cpu, "wall_s": r.wall, "cpu_s": r.cpu,
                     "exit_codes": r.exit_codes, "processes": r.processes, "cmd": r.cmd})
        print(f"{r.name:<24} {med:>9.2f} {min(r.wall):>8.2f} {cpu:>7.2f} "
              f"{max(r.maxrss_kb) / 1024:>13.0f} {adk_wall / med:>20.2f}x / {adk_cpu / cpu:.2f}x"
              + (f"   processes per run: {r.processes}" if r.name.startswith("agenteval") else ""))
    efficiency: dict[str, Any] = {}
    eff_run = next((r for r in runs if r.name == "adk+efficiency"), None)
    if eff_run is not None:
        efficiency = compare_efficiency(eff_run.output, runs[0].output)
        print("\ninformational metrics, agenteval vs adk+efficiency (not part of the parity goal):")
        for name, diff in efficiency.items():
            print(f"  {name:<24} scores differ in {diff['cases_scores_differ']:>5} cases; "
                  f"scores or details in {diff['cases_scores_or_details_differ']:>5}")
            if diff["example"]:
                print(f"    e.g. {diff['example'][:300]}")
    summary = {"cases": args.n, "efficiency_metric_differences": efficiency,
               "invocations": n_inv, "repeat": args.repeat, "rows": rows,
               "date": time.strftime("%Y-%m-%d"), "python": platform.python_version(),
               "agenteval_source": source_state(),
               "mismatched_cases": bad, "mismatches": problems,
               "loadavg_before_after": [load_before, os.getloadavg()[0]]}
    print(f"load average before/after: {load_before:.2f} / {os.getloadavg()[0]:.2f}")
    (out / "bench_e2e.json").write_text(json.dumps(summary, indent=2) + "\n")
    if problems:
        print(f"\nRESULT FILES DIFFER in {bad} cases (first {len(problems)} differences):",
              file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        sys.exit(1)
    print(f"\nresult files agree: final status and every {' / '.join(COMPARED)} score "
          "(overall and per invocation) identical")


if __name__ == "__main__":
    main()
