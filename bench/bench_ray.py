"""The Ray executor against the asyncio one, on the fixed-latency stub (issue 15's Measure).

    python bench/bench_ray.py [--cases 1000] [--turns 3] [--latency 0.2] [--parallelism 64] \
        [--workers 1 2] [--no-local]

What it does (fixtures and stub as `bench_scaling.py`: every user turn costs 2 model calls):

1. starts `bench/stub_server.py` with `--latency` seconds per call and writes, under
   bench/out/ray/, the eval set (`--cases` x `--turns`), its config and the agent package;
2. the asyncio executor: `agenteval eval bench_agent SET --parallelism P --model_parallelism
   STUB=P --output ... --no_history` as a subprocess;
3. for each `--workers` N: `ray start --head --num-cpus N` (one worker per CPU), the same command
   with `--executor ray --ray_address auto`, then `ray stop`. The cluster's start is not in
   the eval's wall time (it is printed apart); each eval run starts its own worker actors,
   which is.

Each contender gets one untimed one-case warm-up. Per run: wall and CPU of the `agenteval`
process (the driver; `wait4`), its peak RSS, and, sampled every 0.25 s from /proc, the CPU and
the summed RSS of the Ray processes (workers, raylet, GCS: the cluster); the stub's peak calls
in flight; the bound: total calls x latency / P. Scores are compared case by case with the
asyncio run's (every metric but the per-invocation seconds). Results: bench/out/ray/summary.json
and a markdown table on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_scaling as scaling  # a sibling script, not a package

OUT = scaling.BENCH_DIR / "out" / "ray"
RAY = Path(sys.executable).parent / "ray"
_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class Row:
    contender: str
    workers: int | None
    wall_s: float
    bound_s: float
    driver_cpu_s: float
    driver_peak_rss_mb: float
    cluster_cpu_s: float | None
    cluster_peak_rss_mb: float | None
    model_calls: int
    max_in_flight: int
    passed: int
    cases: int
    same_scores: bool | None
    note: str = ""


class RaySampler:
    """Samples the Ray processes (command line mentioning ray) every 0.25 s: CPU seconds each
    used since first seen (or since start, for those born during the run) and summed RSS."""

    def __init__(self) -> None:
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self.peak_rss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _ray_pids() -> list[int]:
        out = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != os.getpid():
                try:
                    cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
                except OSError:
                    continue
                if b"ray" in cmd and b"--executor" not in cmd:  # not the driver
                    out.append(int(entry))
        return out

    def sample(self, baseline: bool = False) -> None:
        rss = 0
        for pid in self._ray_pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            cpu = (int(fields[11]) + int(fields[12])) / _TICK  # utime + stime
            rss += int(fields[21]) * _PAGE
            self.first.setdefault(pid, cpu if baseline else 0.0)
            self.last[pid] = cpu
        self.peak_rss = max(self.peak_rss, rss)

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            self.sample()

    def __enter__(self) -> RaySampler:
        self.sample(baseline=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    @property
    def cpu_s(self) -> float:
        return sum(self.last[p] - self.first[p] for p in self.last)


def scores(path: Path) -> dict[tuple[str, int], Any]:
    doc = scaling.snake(json.loads(path.read_text(encoding="utf-8")))
    return {(c["eval_id"], c.get("run_index") or 0):
            (c["final_eval_status"], sorted((m["metric_name"], m.get("score"))
                                            for m in c["overall_eval_metric_results"]
                                            if m["metric_name"] != "invocation_duration_v1"))
            for c in doc["eval_case_results"]}


@dataclass
class Timing(scaling.Timing):
    max_rss_kb: int = 0


def timed(cmd: list[str], log: Path) -> Timing:
    """`bench_scaling.timed`, keeping the process's peak RSS too."""
    with open(log, "wb") as out:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=scaling.ROOT, stdout=out, stderr=subprocess.STDOUT,
                                env=scaling.child_env())
        _, status, usage = os.wait4(proc.pid, 0)
        end = time.monotonic()
    return Timing(end - start, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status),
                  start, end, usage.ru_maxrss)


def run_eval(args: argparse.Namespace, stub: scaling.Stub, evalset: Path, tag: str,
             extra: list[str], sampler: RaySampler | None) -> tuple[Timing, dict[str, Any], Path]:
    output = OUT / f"{tag}.json"
    output.unlink(missing_ok=True)
    cmd = [scaling.agenteval_script(), "eval", str(OUT / "bench_agent"), str(evalset),
           "--parallelism", str(args.parallelism), "--output", str(output), "--no_history",
           "--model_parallelism", f"openai-compat:stub@{stub.base_url}={args.parallelism}", *extra]
    stub.reset()
    if sampler is None:
        t = timed(cmd, OUT / f"{tag}.log")
    else:
        with sampler:
            t = timed(cmd, OUT / f"{tag}.log")
    if t.exit_code not in (0, 1) or not output.is_file():
        sys.exit(f"{tag} failed (exit {t.exit_code}); see {OUT / f'{tag}.log'}")
    return t, stub.stats(), output


def row(args: argparse.Namespace, name: str, workers: int | None, t: Timing, st: dict[str, Any],
        output: Path, reference: dict[tuple[str, int], Any] | None, sampler: RaySampler | None,
        note: str = "") -> Row:
    passed, _, errors = scaling.summarize_agenteval(output)
    calls = args.cases * args.turns * 2
    got = scores(output)
    return Row(name, workers, t.wall_s, calls * args.latency / args.parallelism, t.cpu_s,
               t.max_rss_kb / 1024, sampler.cpu_s if sampler else None,
               sampler.peak_rss / 2**20 if sampler else None, st["requests"], st["max_in_flight"],
               passed, args.cases, None if reference is None else got == reference,
               "; ".join(x for x in (note, f"{errors} case errors" if errors else "") if x))


def ray(*a: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(RAY), *a], capture_output=True, text=True, env=scaling.child_env())


def table(rows: list[Row]) -> str:
    head = ("| executor | workers | wall (s) | bound (s) | wall / bound | driver CPU (s) "
            "| driver peak RSS (MB) | cluster CPU (s) | cluster peak RSS (MB) | model calls | peak in flight "
            "| passed | same scores | note |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        def f(v: float | None, d: int = 1) -> str:
            return "-" if v is None else f"{v:.{d}f}"
        lines.append(f"| {r.contender} | {r.workers or '-'} | {r.wall_s:.2f} | {r.bound_s:.2f} "
                     f"| {r.wall_s / r.bound_s:.2f}x | {r.driver_cpu_s:.1f} | {r.driver_peak_rss_mb:.0f} "
                     f"| {f(r.cluster_cpu_s)} | {f(r.cluster_peak_rss_mb, 0)} | {r.model_calls} "
                     f"| {r.max_in_flight} | {r.passed}/{r.cases} "
                     f"| {'-' if r.same_scores is None else 'yes' if r.same_scores else 'NO'} | {r.note} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--parallelism", type=int, default=64)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--no-local", action="store_true", help="skip the asyncio executor")
    args = parser.parse_args()
    if not RAY.is_file():
        sys.exit(f"no `ray` command beside {sys.executable}: pip install 'agenteval[ray]'")
    scaling.OUT = OUT  # fixtures under bench/out/ray
    stub = scaling.Stub(args.latency, 3600)
    rows: list[Row] = []
    reference = None
    try:
        evalset = scaling.write_fixtures(stub.base_url, args.cases, args.turns)
        print(f"commit {scaling.git_head()}; {args.cases} cases x {args.turns} turns, {args.latency} s per "
              f"call, P={args.parallelism}; cpus {os.cpu_count()}; load(1m) {os.getloadavg()[0]:.2f}",
              flush=True)
        warm = [scaling.agenteval_script(), "eval", str(OUT / "bench_agent"), f"{evalset}:case_000",
                "--no_history"]
        if not args.no_local:
            timed(warm, OUT / "warmup_local.log")
            t, st, output = run_eval(args, stub, evalset, "asyncio", [], None)
            reference = scores(output)
            rows.append(row(args, "asyncio", None, t, st, output, None, None))
            print(table(rows[-1:]), flush=True)
        for n in args.workers:
            ray("stop", "--force")
            started = time.monotonic()
            up = ray("start", "--head", f"--num-cpus={n}", "--include-dashboard=false",
                     "--disable-usage-stats")
            if up.returncode != 0:
                sys.exit(f"ray start failed: {up.stderr[-2000:]}")
            cluster_start = time.monotonic() - started
            try:
                timed([*warm, "--executor", "ray", "--ray_address", "auto"], OUT / f"warmup_ray{n}.log")
                sampler = RaySampler()
                t, st, output = run_eval(args, stub, evalset, f"ray_{n}", ["--executor", "ray",
                                                                         "--ray_address", "auto"], sampler)
                rows.append(row(args, "ray", n, t, st, output, reference, sampler,
                                f"`ray start` took {cluster_start:.1f} s (not in wall)"))
                print(table(rows[-1:]), flush=True)
            finally:
                ray("stop", "--force")
    finally:
        stub.stop()
    print()
    print(table(rows))
    (OUT / "summary.json").write_text(json.dumps(
        {"cases": args.cases, "turns": args.turns, "latency_s": args.latency, "parallelism": args.parallelism,
         "cpus": os.cpu_count(), "commit": scaling.git_head(), "bound_formula": "calls x latency / P",
         "calls": args.cases * args.turns * 2, "rows": [asdict(r) for r in rows]}, indent=2),
        encoding="utf-8")
    print(f"\nsummary: {OUT / 'summary.json'}")
    if any(r.same_scores is False for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
