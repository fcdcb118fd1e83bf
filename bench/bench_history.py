"""Overhead of the run history (SQLite) and the file reports on a large scored run.

Steps: make sure the seeded corpus exists (`gen_corpus.py`, 10,000 cases by default), score it
once with `agenteval score EXPECTED --actual ACTUAL --config_file_path config_default.json
--output bench/out/history/result.json` (skipped when that file is newer than the corpus), load
the result document, then time in this process, `--repeat` times each (median reported):

* `save_result` — writing the document into `<root>/.agenteval/eval_history` (what `--history`
  adds to `score` on top of `--output`);
* `RunStore.record` into a fresh store (one transaction: runs, cases, case_metrics,
  metric_summaries rows), then `list_runs()` and `resolve("latest")` on it;
* `RunStore.summary` (verdicts and criterion summaries from the database, no JSON);
* `junit_xml`, `html_report` (default caps), `markdown_summary`, and `compare` of the result
  with a copy whose scores were lowered (then recorded too, as the latest run);

and once, as processes: `agenteval runs`, `runs show latest`, `compare previous latest` (both
from the database) and `report latest --format html -o F` (loads the JSON document). Sizes of
the database and of every report are recorded. Results go to bench/out/history/summary.json.
Until cli/main.py registers the history commands, the processes run them through
`python -c` with the same group.

Usage:
    python bench/bench_history.py [--n 10000] [--seed 0] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from gen_corpus import DEFAULT_OUT, ensure_corpus  # noqa: E402

from agenteval.reporting.compare import compare  # noqa: E402
from agenteval.reporting.html import html_report  # noqa: E402
from agenteval.reporting.junit import junit_xml  # noqa: E402
from agenteval.reporting.markdown import markdown_summary  # noqa: E402
from agenteval.schema import EvalSetResult, EvalStatus  # noqa: E402
from agenteval.store import RunStore, load_result, save_result  # noqa: E402


def agenteval_script() -> str:
    beside = Path(sys.executable).parent / "agenteval"
    return str(beside) if beside.is_file() else (shutil.which("agenteval") or "agenteval")


def timed(fn: Callable[[], Any], repeat: int) -> tuple[dict[str, float], Any]:
    """Median wall and CPU seconds over `repeat` calls, and the last call's value. CPU time is
    reported too because wall time is unreliable on a machine shared with other jobs."""
    wall, cpu, value = [], [], None
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        value = fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return {"seconds": statistics.median(wall), "cpu_seconds": statistics.median(cpu)}, value


def score(out: Path, n: int, seed: int) -> tuple[Path, float | None]:
    exp, act = ensure_corpus(out, n, seed)
    result = out / "history" / "result.json"
    if result.is_file() and result.stat().st_mtime > max(exp.stat().st_mtime, act.stat().st_mtime):
        return result, None
    result.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    proc = subprocess.run([agenteval_script(), "score", str(exp), "--actual", str(act),
                           "--config_file_path", str(out / "config_default.json"), "--output", str(result)],
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        sys.exit(f"agenteval score failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return result, time.perf_counter() - start


def lowered(result: EvalSetResult) -> EvalSetResult:
    """A copy with every gating summary mean lowered by 0.02 (a candidate that regressed)."""
    worse = result.model_copy(deep=True)
    worse.eval_set_result_id += "_worse"
    for s in worse.summary:
        for m in s.metrics:
            if m.mean is not None and m.eval_status != EvalStatus.INFORMATIONAL:
                m.mean -= 0.02
    return worse


def history_command() -> list[str]:
    """`agenteval` when it has the history commands, else the same commands run directly."""
    script = agenteval_script()
    if subprocess.run([script, "runs", "--help"], capture_output=True).returncode == 0:
        return [script]
    return [sys.executable, "-c", "import sys; from agenteval.cli.main import cli; "
            "from agenteval.cli.history import COMMANDS; [cli.add_command(c) for c in COMMANDS]; "
            "cli.main(args=sys.argv[1:], prog_name='agenteval')"]


def run_process(args: list[str], ok: tuple[int, ...] = ()) -> dict[str, float]:
    """Wall seconds and the child's CPU seconds (user + system) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, *ok):
        sys.exit(f"{args[-6:]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"seconds": wall, "cpu_seconds": cpu}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args()

    path, score_seconds = score(args.out, args.n, args.seed)
    log(f"scored: {path}" + (f" in {score_seconds:.1f} s" if score_seconds else " (reused)"))
    load, result = timed(lambda: load_result(path), 1)
    load_s = load["seconds"]
    log(f"loaded in {load_s:.1f} s")
    cases = len({c.eval_id for c in result.eval_case_results})
    invocations = sum(len(c.eval_metric_result_per_invocation) for c in result.eval_case_results)
    rows: dict[str, dict[str, Any]] = {}
    work = Path(tempfile.mkdtemp(prefix="bench_history_"))
    try:
        roots = iter(work / f"root{i}" for i in range(10 * args.repeat))

        def save() -> Path:
            return save_result(next(roots), result)

        rows["save_result (JSON into eval_history)"] = timed(save, args.repeat)[0]
        log("save_result done")
        stores: list[RunStore] = []

        def record() -> str:
            store = RunStore(next(roots))
            stores.append(store)
            return store.record(result, path, {"command": "score", "agent": "bench"})

        rows["RunStore.record"] = {**timed(record, args.repeat)[0], "bytes": stores[-1].path.stat().st_size}
        store = stores[-1]
        log("record done")
        rows["RunStore.list_runs"] = timed(store.list_runs, args.repeat)[0]
        rows["RunStore.resolve('latest')"] = timed(lambda: store.resolve("latest"), args.repeat)[0]
        rows["RunStore.summary('latest')"] = timed(lambda: store.summary("latest"), args.repeat)[0]
        for name, render in (("junit_xml", junit_xml), ("html_report", html_report),
                             ("markdown_summary", markdown_summary)):
            times, text = timed(lambda render=render: render([result]), args.repeat)
            rows[name] = {**times, "bytes": len(text.encode("utf-8"))}
            log(f"{name} done")
        worse = lowered(result)
        times, comparison = timed(lambda: compare(result, worse, 0.01), args.repeat)
        rows["compare (vs lowered copy)"] = {**times, "regressions": len(comparison.regressions)}
        worse.creation_timestamp = result.creation_timestamp + 1
        store.record(worse, path)  # the store now holds previous (result) and latest (worse)
        script = history_command()
        root = str(store.root)
        rows["process: agenteval runs"] = run_process([*script, "runs", "--root", root])
        rows["process: agenteval runs show latest"] = run_process([*script, "runs", "--root", root,
                                                                   "show", "latest"])
        rows["process: agenteval compare previous latest"] = run_process(
            [*script, "compare", "previous", "latest", "--root", root], ok=(1,))
        html_out = work / "report.html"
        report_args = ["report", "latest", "--root", str(store.root), "--format", "html", "-o", str(html_out)]
        rows["process: agenteval report latest --format html"] = run_process([*script, *report_args])
    finally:
        shutil.rmtree(work, ignore_errors=True)

    summary = {"cases": cases, "invocations": invocations, "result_bytes": path.stat().st_size,
               "score_seconds": score_seconds, "load_result": load,
               "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
               "python": sys.version.split()[0], "repeat": args.repeat, "rows": rows}
    (path.parent / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    scored = f", agenteval score {score_seconds:.1f} s" if score_seconds else ""
    print(f"{cases} cases, {invocations} invocations; result document {path.stat().st_size / 1e6:.1f} MB, "
          f"load_result {load_s:.2f} s (CPU {load['cpu_seconds']:.2f} s){scored}")
    print("| step | wall s | CPU s | size |\n|---|---:|---:|---:|")
    for name, row in rows.items():
        size = f"{row['bytes'] / 1e6:.2f} MB" if "bytes" in row else ""
        print(f"| {name} | {row['seconds']:.3f} | {row['cpu_seconds']:.3f} | {size} |")


if __name__ == "__main__":
    main()
