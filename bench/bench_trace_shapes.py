"""`agenteval score EXPECTED --actual X.otlp.json` on traces of two shapes (issue 21, item 3).

    python bench/bench_trace_shapes.py [--extra 2000 4000 8000 100000] [--before COMMIT]
                                       [--timeout 120] [--repeat 3] [--reports]

The OpenAI Agents SDK fixture (tests/fixtures/traces/openai_agents.otlp.json: 24 spans, two
cases) with `--extra` plain spans added under its first `weather_agent` span, either side by
side ("wide": one parent, N children) or each the parent of the next ("deep": a chain N
parents deep). Each file is scored in a fresh process (`python -c` running agenteval's CLI,
PYTHONPATH set to the source tree): wall seconds and peak RSS from os.wait4, the median seconds
of `--repeat` and the largest peak (this process stays at ~20 MB, the floor of the peaks). A
process past `--timeout` s is killed and reported as such. Every finished run must exit 0 with
the scores of the 24-span trace (the extra spans carry no calls), else this exits 1.

`--before COMMIT` also times the src/ of COMMIT (extracted with `git archive` into
bench/out/trace_shapes/before/), interleaved with the working tree's, run by run. `--reports`
adds `--html F --print_detailed_results` (the trace views) to every run.

Results: a markdown table on stdout and bench/out/trace_shapes/summary.json.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tarfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
OUT = BENCH_DIR / "out" / "trace_shapes"
FIXTURES = ROOT / "tests" / "fixtures" / "traces"
EXPECTED = FIXTURES / "expected.evalset.json"
AGENT = "ba6d1683ab388fbd"  # the first weather_agent span of the fixture
CLI = "import sys; from agenteval.cli.main import cli; sys.argv[0] = 'agenteval'; cli()"


def make_trace(shape: str, extra: int) -> Path:
    """The fixture with `extra` spans under one span, side by side or chained; cached in OUT.
    Written by a process of its own: Linux carries a parent's peak RSS into its children's
    (through fork and exec), so this process must stay small for the peaks to mean anything."""
    path = OUT / f"{shape}_{extra}.otlp.json"
    if not path.exists():
        subprocess.run([sys.executable, __file__, "--make", shape, str(extra), str(path)], check=True)
    return path


def write_trace(shape: str, extra: int, path: Path) -> None:
    data = json.loads((FIXTURES / "openai_agents.otlp.json").read_text())
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    agent = next(s for s in spans if s["spanId"] == AGENT)
    t0, parent = int(agent["startTimeUnixNano"]), AGENT
    for i in range(extra):
        span_id = f"{i + 1:016x}"
        spans.append({"traceId": agent["traceId"], "spanId": span_id, "parentSpanId": parent,
                      "name": f"step {i}", "kind": 1, "startTimeUnixNano": str(t0 + 1 + i),
                      "endTimeUnixNano": str(t0 + 2 + i), "status": {},
                      "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "CHAIN"}}]})
        if shape == "deep":
            parent = span_id
    path.write_text(json.dumps(data))


def extract(commit: str) -> Path:
    """src/ of `commit`, extracted once."""
    sha = subprocess.run(["git", "rev-parse", commit], cwd=ROOT, check=True, capture_output=True,
                         text=True).stdout.strip()
    target = OUT / "before" / sha[:12]
    if not (target / "src" / "agenteval").exists():
        archive = subprocess.run(["git", "archive", sha, "src"], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(target, filter="data")
    return target / "src"


SCORES = ("import json, sys; doc = json.load(open(sys.argv[1])); print(json.dumps({c['eval_id']: "
          "{m['metric_name']: m['score'] for m in c['overall_eval_metric_results']} "
          "for c in doc['eval_case_results']}))")


def scores(result: Path) -> dict[str, dict[str, Any]]:
    """Each case's overall scores, read by another process (see `make_trace`)."""
    out = subprocess.run([sys.executable, "-c", SCORES, str(result)], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)  # type: ignore[no-any-return]


def run(src: Path, trace: Path, tag: str, timeout: float, reports: bool) -> dict[str, Any]:
    """One `agenteval score` of `trace` with the agenteval of `src`: seconds, peak MB, exit, scores."""
    result = OUT / f"result_{tag}.json"
    result.unlink(missing_ok=True)
    cmd = [sys.executable, "-c", CLI, "score", str(EXPECTED), "--actual", str(trace), "-o", str(result)]
    if reports:
        cmd += ["--html", str(OUT / f"report_{tag}.html"), "--print_detailed_results"]
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "200"}
    with open(OUT / f"log_{tag}.txt", "wb") as log:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=OUT, stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
        killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                killed = True
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        seconds = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    return {"seconds": None if killed else seconds, "killed_after": seconds if killed else None,
            "peak_mb": usage.ru_maxrss / 1024, "exit": code,
            "scores": scores(result) if code == 0 and result.exists() else None}


def cell(runs: list[dict[str, Any]], timeout: float) -> str:
    done = [r["seconds"] for r in runs if r["seconds"] is not None]
    if not done:
        return f"> {timeout:.0f} s (killed)"
    text = f"{statistics.median(done):.2f} s, {max(r['peak_mb'] for r in runs):.0f} MB"
    return text if len(done) == len(runs) else text + f" ({len(runs) - len(done)} killed)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--extra", type=int, nargs="+", default=[2000, 4000, 8000, 100_000])
    ap.add_argument("--before", metavar="COMMIT", help="also time this commit's src/")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--reports", action="store_true", help="add --html and --print_detailed_results")
    ap.add_argument("--make", nargs=3, metavar=("SHAPE", "EXTRA", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.make:
        write_trace(args.make[0], int(args.make[1]), Path(args.make[2]))
        return
    OUT.mkdir(parents=True, exist_ok=True)
    trees = {"after": ROOT / "src"}
    if args.before:
        trees = {"before": extract(args.before), **trees}
    reference = run(ROOT / "src", FIXTURES / "openai_agents.otlp.json", "reference", args.timeout, False)
    rows, wrong = [], []
    for shape in ("wide", "deep"):
        for extra in args.extra:
            trace = make_trace(shape, extra)
            got: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
            for _ in range(args.repeat):
                for name, src in trees.items():  # interleaved
                    if got[name] and all(r["killed_after"] for r in got[name]):
                        continue  # once killed, not run again
                    r = run(src, trace, f"{shape}_{extra}_{name}", args.timeout, args.reports)
                    got[name].append(r)
                    if r["seconds"] is not None and r["scores"] != reference["scores"]:
                        wrong.append(f"{shape} {extra} {name}: exit {r['exit']}, scores {r['scores']}")
            rows.append({"shape": shape, "extra": extra, **got})
            print(f"{shape} {extra}: " + "; ".join(f"{n} {cell(got[n], args.timeout)}" for n in trees),
                  file=sys.stderr)
    print(f"| shape | extra spans | {' | '.join(trees)} |")
    print("|---|---|" + "---|" * len(trees))
    for row in rows:
        print(f"| {row['shape']} | {row['extra']:,} | "
              + " | ".join(cell(row[n], args.timeout) for n in trees) + " |")
    summary = {"rows": rows, "trees": {k: str(v) for k, v in trees.items()}, "reports": args.reports,
               "load": os.getloadavg(), "reference": reference}
    (OUT / "summary.json").write_text(json.dumps(summary, indent=1))
    if wrong:
        print("\n".join(["scores differ from the 24-span trace:", *wrong]), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
