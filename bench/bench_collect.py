"""The live receiver, `agenteval collect`, measured from outside (issue 26, "Measure").

    python bench/bench_collect.py [--spans 100000] [--batch 500] [--quiet 1.0] [--rounds 5]

Each part runs `agenteval collect` in a process of its own (port 0, a temporary working
directory for its run history) and talks to it over HTTP from this process, as an exporter would:

1. **Throughput.** `--spans` spans in batches of `--batch` (each span with the attributes of a
   GenAI chat span: operation, model, token counts, a session id; 10 spans a trace, never
   ending, so nothing is scored), as OTLP/protobuf and as OTLP/JSON, bodies encoded before the
   clock starts: spans per second from the first request to the last reply.
2. **Latency.** `--rounds` times, the ADK fixture (tests/fixtures/traces/adk.otlp.json: two
   conversations) posted against its eval set with `--quiet_seconds --quiet`: the time from the
   reply to that request (its last span held) to the line saying its conversation was recorded,
   and that time minus the quiet period (what scoring and recording cost). Deterministic
   criteria (the eval set's defaults): no judge.
3. **Memory.** The receiver's RSS (VmRSS, and the peak VmHWM, from /proc) at start and after
   `--spans` spans that never complete (held up to the default cap of 100,000 spans).

Results: a markdown table on stdout and bench/out/collect/summary.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
OUT = BENCH_DIR / "out" / "collect"
TRACES = ROOT / "tests" / "fixtures" / "traces"
SPANS_PER_TRACE = 10


def _attrs(i: int) -> dict[str, Any]:
    return {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
            "gen_ai.usage.input_tokens": 120 + i % 7, "gen_ai.usage.output_tokens": 30,
            "session.id": f"session-{i // SPANS_PER_TRACE}"}


def protobuf_batches(total: int, batch: int) -> list[bytes]:
    """`total` spans as serialized ExportTraceServiceRequests of `batch` spans."""
    out = []
    for start in range(0, total, batch):
        spans = []
        for i in range(start, min(total, start + batch)):
            trace, k = divmod(i, SPANS_PER_TRACE)
            attributes = [KeyValue(key=key, value=AnyValue(string_value=v) if isinstance(v, str) else
                                   AnyValue(int_value=v)) for key, v in _attrs(i).items()]
            spans.append(Span(trace_id=(trace + 1).to_bytes(16, "big"), span_id=(k + 1).to_bytes(8, "big"),
                              parent_span_id=k.to_bytes(8, "big") if k else b"", name="chat m",
                              start_time_unix_nano=1_700_000_000_000_000_000 + i, attributes=attributes))
        scope = ScopeSpans(spans=spans)
        request = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[scope])])
        out.append(request.SerializeToString())
    return out


def json_batches(total: int, batch: int) -> list[bytes]:
    """The same spans as OTLP/JSON documents."""
    out = []
    for start in range(0, total, batch):
        spans = []
        for i in range(start, min(total, start + batch)):
            trace, k = divmod(i, SPANS_PER_TRACE)
            attributes = [{"key": key, "value": {"stringValue": v} if isinstance(v, str)
                           else {"intValue": str(v)}} for key, v in _attrs(i).items()]
            span = {"traceId": f"{trace + 1:032x}", "spanId": f"{k + 1:016x}", "name": "chat m",
                    "startTimeUnixNano": str(1_700_000_000_000_000_000 + i), "attributes": attributes}
            if k:
                span["parentSpanId"] = f"{k:016x}"
            spans.append(span)
        out.append(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode())
    return out


class Collect:
    """`agenteval collect` in a process of its own, in a temporary directory."""

    def __init__(self, *args: str) -> None:
        self.dir = tempfile.TemporaryDirectory()
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        command = [sys.executable, "-m", "agenteval", "collect", "--port", "0", "--no_grpc", *args]
        self.proc = subprocess.Popen(command,
                                     cwd=self.dir.name, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, env=env)
        assert self.proc.stdout is not None
        banner = self.proc.stdout.readline()
        found = re.search(r":(\d+)/v1/traces", banner)
        if not found:
            raise SystemExit(f"agenteval collect did not start: {banner!r}")
        self.url = f"http://127.0.0.1:{found.group(1)}/v1/traces"

    def memory(self) -> dict[str, float]:
        """VmRSS and VmHWM in MiB."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return {k: int(re.search(rf"{k}:\s+(\d+)", status).group(1)) / 1024  # type: ignore[union-attr]
                for k in ("VmRSS", "VmHWM")}

    def line(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline()

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.dir.cleanup()


def post_all(url: str, bodies: list[bytes], content_type: str) -> float:
    with httpx.Client(timeout=120) as client:
        started = time.perf_counter()
        for body in bodies:
            reply = client.post(url, content=body, headers={"Content-Type": content_type})
            if reply.status_code != 200:
                raise SystemExit(f"{reply.status_code}: {reply.text[:300]}")
        return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--quiet", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"spans": args.spans, "batch": args.batch}
    never = ("--quiet_seconds", "3600")
    for kind, make, content_type in (("protobuf", protobuf_batches, "application/x-protobuf"),
                                     ("json", json_batches, "application/json")):
        bodies = make(args.spans, args.batch)
        collect = Collect(*never)
        try:
            start_memory = collect.memory()
            seconds = post_all(collect.url, bodies, content_type)
            summary[kind] = {"seconds": round(seconds, 2), "spans_per_second": round(args.spans / seconds),
                             "mib_at_start": start_memory, "mib_after": collect.memory(),
                             "body_mib": round(sum(map(len, bodies)) / 2**20, 1)}
        finally:
            collect.close()
    collect = Collect("--quiet_seconds", str(args.quiet), "--eval_set", str(TRACES / "expected.evalset.json"))
    latencies: list[float] = []
    try:
        body = (TRACES / "adk.otlp.json").read_bytes()
        for _ in range(args.rounds):
            reply = httpx.post(collect.url, content=body, headers={"Content-Type": "application/json"})
            held = time.perf_counter()
            assert reply.status_code == 200, reply.text
            lines = [collect.line(), collect.line()]
            assert all(line.startswith("passed") for line in lines), lines
            latencies.append(time.perf_counter() - held)
    finally:
        collect.close()
    summary["latency"] = {"quiet_seconds": args.quiet, "seconds": [round(x, 3) for x in latencies],
                          "median": round(statistics.median(latencies), 3),
                          "median_beyond_quiet": round(statistics.median(latencies) - args.quiet, 3)}
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2))
    print(f"| what | {args.spans:,} spans in batches of {args.batch} |\n|---|---|")
    for kind in ("protobuf", "json"):
        k = summary[kind]
        print(f"| {kind}: spans/s through the receiver | {k['spans_per_second']:,} ({k['seconds']} s, "
              f"{k['body_mib']} MiB of bodies) |")
        print(f"| {kind}: receiver RSS start → after (peak) | {k['mib_at_start']['VmRSS']:.0f} → "
              f"{k['mib_after']['VmRSS']:.0f} MiB ({k['mib_after']['VmHWM']:.0f}) |")
    lat = summary["latency"]
    print(f"| last span → stored result (quiet {args.quiet:g} s), median of {args.rounds} | "
          f"{lat['median']} s "
          f"({lat['median_beyond_quiet']} s beyond the quiet period) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
