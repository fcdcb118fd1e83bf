"""What recording traces costs, and how fast traces from other frameworks are read.

    python bench/bench_traces.py [--cases 100] [--turns 3] [--latency 0.2] [--parallelism 32]
                                 [--repeat 3] [--ingest-copies 2000]

1. Overhead: `agenteval eval` of the stub agent of `bench_scaling.py` (one tool call and one
   answer per turn, `--latency` s per model call) three ways, interleaved, `--repeat` rounds:
   `--no_traces`, traces recorded (the default), and traces recorded and exported over OTLP/HTTP
   to a receiver in this process that decodes every request. Wall time and CPU of the process
   (os.wait4); median of the rounds.
2. Size: bytes of the result document per invocation with and without traces.
3. Ingest: the OpenAI Agents SDK fixture (tests/fixtures/traces) copied `--ingest-copies` times
   with fresh ids and session ids into one OTLP/JSON file, read and matched against an eval set of
   as many cases: spans per second.
4. Ingest per framework: each fixture of `FRAMEWORKS` (ADK with parallel calls and its merged
   span, the OpenAI Agents SDK's several runs in one trace, pydantic-ai, LangGraph, ADK's legacy
   spans) copied to about as many spans, read and made invocations: spans per second.

Results: a markdown table on stdout and bench/out/traces/summary.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(ROOT))

from bench_scaling import OUT as SCALING_OUT  # noqa: E402
from bench_scaling import Stub, agenteval_script, child_env, timed, write_fixtures  # noqa: E402

OUT = BENCH_DIR / "out" / "traces"
FIXTURE = ROOT / "tests" / "fixtures" / "traces" / "openai_agents.otlp.json"


class Receiver:
    """An OTLP/HTTP receiver on 127.0.0.1 that decodes each request as a collector would."""

    def __init__(self) -> None:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

        self.spans = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = trace_service_pb2.ExportTraceServiceRequest()
                request.ParseFromString(self.rfile.read(int(self.headers["content-length"])))
                receiver.spans += sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans)
                body = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()


def overhead(args: argparse.Namespace) -> dict[str, Any]:
    stub = Stub(args.latency, 3600)
    receiver = Receiver()
    try:
        evalset = write_fixtures(stub.base_url, args.cases, args.turns)
        OUT.mkdir(parents=True, exist_ok=True)
        variants = {"no traces": ["--no_traces"], "traces": [],
                    "traces + OTLP export": ["--otlp_endpoint", receiver.url]}
        runs: dict[str, list[tuple[float, float]]] = {k: [] for k in variants}
        sizes: dict[str, int] = {}
        base = [agenteval_script(), "eval", str(SCALING_OUT / "bench_agent"), str(evalset),
                "--parallelism", str(args.parallelism), "--no_history"]
        warm = timed([*base[:3], f"{evalset}:case_000", "--no_history", "-o", str(OUT / "warm.json")],
                     child_env(), OUT / "warm.log")
        print(f"warm-up {warm.wall_s:.2f}s (exit {warm.exit_code})")
        for round_ in range(args.repeat):
            for name, flags in variants.items():
                output = OUT / f"{name.replace(' ', '_').replace('+', 'and')}.json"
                t = timed([*base, "-o", str(output), *flags], child_env(), OUT / "run.log")
                if t.exit_code not in (0, 1):
                    sys.exit(f"{name}: exit {t.exit_code}, see {OUT / 'run.log'}")
                runs[name].append((t.wall_s, t.cpu_s))
                sizes[name] = output.stat().st_size
                print(f"  round {round_ + 1} {name}: {t.wall_s:.2f}s wall, {t.cpu_s:.2f}s CPU")
        invocations = args.cases * args.turns
        critical = -(-args.cases // args.parallelism) * args.turns * 2 * args.latency
        base_wall = statistics.median(w for w, _ in runs["no traces"])
        base_cpu = statistics.median(c for _, c in runs["no traces"])
        rows = {}
        for name, values in runs.items():
            wall = statistics.median(w for w, _ in values)
            cpu = statistics.median(c for _, c in values)
            rows[name] = {"wall_s": wall, "cpu_s": cpu, "wall_overhead_pct": 100 * (wall / base_wall - 1),
                          "cpu_overhead_pct": 100 * (cpu / base_cpu - 1),
                          "bytes_per_invocation": sizes[name] / invocations}
        return {"cases": args.cases, "turns": args.turns, "latency": args.latency,
                "parallelism": args.parallelism, "bound_s": critical, "rows": rows,
                "spans_received": receiver.spans}
    finally:
        stub.stop()
        receiver.server.shutdown()


_SESSION_KEYS = ("session.id", "gen_ai.conversation.id", "gcp.vertex.agent.session_id")


def copied_spans(spans: list[dict[str, Any]], copies: int) -> list[dict[str, Any]]:
    """`spans` repeated `copies` times, copy n with fresh trace and span ids and its session ids
    suffixed `-n`, so each copy reads as a conversation of its own."""
    out = []
    for n in range(copies):
        suffix = f"{n:012x}"
        for s in spans:
            copy = json.loads(json.dumps(s))
            copy["traceId"] = s["traceId"][:20] + suffix
            copy["spanId"] = s["spanId"][:4] + suffix
            if "parentSpanId" in copy:
                copy["parentSpanId"] = s["parentSpanId"][:4] + suffix
            for a in copy.get("attributes", []):
                if a["key"] in _SESSION_KEYS:
                    a["value"] = {"stringValue": f"{a['value']['stringValue']}-{n}"}
            out.append(copy)
    return out


def ingest(copies: int) -> dict[str, Any]:
    from agenteval.schema import Content, EvalCase, EvalSet, Invocation
    from agenteval.tracing.ingest import read_traces

    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    out_spans = copied_spans(spans, copies)
    cases = []
    for n in range(copies):
        for sid, turns in (("weather-paris-rome", ["What's the weather in Paris?", "And in Rome?"]),
                           ("weather-oslo", ["Is it cold in Oslo?"])):
            cases.append(EvalCase(eval_id=f"{sid}-{n}", conversation=[
                Invocation(user_content=Content.from_text(t, role="user")) for t in turns]))
    data["resourceSpans"][0]["scopeSpans"][0]["spans"] = out_spans
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "ingest.otlp.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    expected = EvalSet(eval_set_id="ingest", eval_cases=cases)
    started = time.perf_counter()
    conversations = read_traces(path)
    actual, traces = conversations.match(expected)
    seconds = time.perf_counter() - started
    assert len(actual.eval_cases) == len(cases) == len(traces)
    return {"spans": len(out_spans), "bytes": path.stat().st_size, "seconds": seconds,
            "spans_per_s": len(out_spans) / seconds, "conversations": len(cases)}


FRAMEWORKS = ("adk_parallel", "openai_agents_group", "pydantic_ai", "langgraph", "adk_legacy")


def ingest_framework(name: str, target_spans: int) -> dict[str, Any]:
    """One fixture copied to about `target_spans` spans (fresh ids and session ids) into one file, read, and
    every conversation made invocations (what `score --actual` and `eval_set from_trace` do
    before matching): spans per second. Read with the parallel calls, merged spans and the
    several-turn trace of the issue-26 fixtures."""
    from agenteval.tracing.ingest import read_traces

    data = json.loads((FIXTURE.parent / f"{name}.otlp.json").read_text(encoding="utf-8"))
    copies = max(1, target_spans // sum(len(ss["spans"]) for rs in data["resourceSpans"]
                                        for ss in rs["scopeSpans"]))
    out: list[dict[str, Any]] = []
    for rs in data["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            copied = copied_spans(ss["spans"], copies)
            ss["spans"] = copied
            out += copied
    path = OUT / f"ingest_{name}.otlp.json"
    OUT.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    started = time.perf_counter()
    conversations = read_traces(path)
    turns = sum(len(conversations.invocations(key)) for key in conversations.conversations)
    seconds = time.perf_counter() - started
    return {"fixture": name, "spans": len(out), "turns": turns, "seconds": seconds,
            "spans_per_s": len(out) / seconds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--parallelism", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ingest-copies", type=int, default=2000)
    ap.add_argument("--skip-overhead", action="store_true")
    args = ap.parse_args()
    summary: dict[str, Any] = {}
    if not args.skip_overhead:
        summary["overhead"] = overhead(args)
        o = summary["overhead"]
        print(f"\n{o['cases']} cases x {o['turns']} turns, {o['latency']} s per call, parallelism "
              f"{o['parallelism']} (bound {o['bound_s']:.1f} s); {o['spans_received']} spans received\n")
        print("| variant | wall s | CPU s | wall vs no traces | CPU vs no traces | bytes / invocation |")
        print("|---|---|---|---|---|---|")
        for name, r in o["rows"].items():
            print(f"| {name} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['wall_overhead_pct']:+.1f}% | "
                  f"{r['cpu_overhead_pct']:+.1f}% | {r['bytes_per_invocation']:.0f} |")
    summary["ingest"] = i = ingest(args.ingest_copies)
    print(f"\ningest: {i['spans']} spans ({i['bytes'] / 1e6:.1f} MB, {i['conversations']} conversations) "
          f"read and matched in {i['seconds']:.2f} s = {i['spans_per_s']:.0f} spans/s")
    summary["frameworks"] = []
    print("\n| fixture | spans | turns | s | spans / s |\n|---|---|---|---|---|")
    for name in FRAMEWORKS:
        f = ingest_framework(name, i["spans"])  # as many spans as the ingest above
        summary["frameworks"].append(f)
        print(f"| {f['fixture']} | {f['spans']} | {f['turns']} | {f['seconds']:.2f} | "
              f"{f['spans_per_s']:.0f} |")
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
