"""Where the journal's and history's extra CPU goes in `eval`: each step's thread CPU, on vs off.

    python bench/bench_journal_budget.py [--cases 5000] [--pairs 4] [--src DIR]
                                         [--what-if no-metric-rows]

Runs `agenteval eval AGENT SET --parallelism 8` of `bench_journal.py`'s trivial agent and eval
set in child processes, `--pairs` times with the history and journal on and with `--no_history`
(interleaved), each child timing what the journal and the history add with `time.thread_time`
around the functions that do it (the thread's user + system CPU; the writer's whole thread is
timed) and the cyclic collector's passes (`gc.callbacks`); process CPU comes from `os.wait4`.
Prints, per step, the median over the pairs, and how much of the on - off difference the steps
explain (the rest: what the steps make slower elsewhere, e.g. the writer thread taking the GIL
from the event loop, and noise). `--what-if no-metric-rows` prototypes the history's rows
packed away: each verdict's metric and summary rows are dropped before they are queued (the
history then has none: for measuring only). `--src` runs another checkout's `src/`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
OUT = BENCH_DIR / "out" / "journal_budget"

# (label, module, owner attribute path, function): what the child times.
STEPS = [
    ("queue a case run (Journal.append)", "agenteval.store.journal", "Journal", "append"),
    ("  its placed JSON (shared with the document)", "agenteval.store.journal", "", "placed_json"),
    ("  digests", "agenteval.store.journal_writer", "", "digest_json"),
    ("  digests", "agenteval.store.journal", "", "digest_json"),  # (made here before session 15)
    ("queue a verdict (Journal.append_verdict)", "agenteval.store.journal", "Journal", "append_verdict"),
    ("  verdict_row", "agenteval.store.journal", "", "verdict_row"),
    ("record at the end (record_streamed)", "agenteval.store.record", "", "record_streamed"),
    ("  the copy (RunStore.record_copied)", "agenteval.store.db", "RunStore", "record_copied"),
    ("  forget the run (Journal.forget)", "agenteval.store.journal", "Journal", "forget"),
    ("writer thread, whole", "agenteval.store.journal_writer", "Writer", "_loop"),
    ("  SQLite transactions (_commit)", "agenteval.store.journal_writer", "", "_commit"),
    ("  frames (key, CRC-32)", "agenteval.store.journal_writer", "", "frame"),
    ("  rows file writes", "agenteval.store.journal_writer", "RowsWriter", "append"),
]
HISTORY_COPY = "the history's copy of the document (its writes)"
TOP = ("queue a case run (Journal.append)", "queue a verdict (Journal.append_verdict)",
       "record at the end (record_streamed)", "writer thread, whole", HISTORY_COPY)


def child(out_file: str, what_if: str, args: list[str]) -> None:
    """Times the steps in this process, runs `agenteval` with `args`, writes the times."""
    import functools
    import gc
    import importlib
    import resource

    times: dict[str, float] = {}
    calls: dict[str, int] = {}

    def timed(label: str, f: Any) -> Any:
        @functools.wraps(f)
        def w(*a: Any, **k: Any) -> Any:
            t0 = time.thread_time()
            try:
                return f(*a, **k)
            finally:
                times[label] = times.get(label, 0.0) + time.thread_time() - t0
                calls[label] = calls.get(label, 0) + 1
        return w

    if what_if == "no-metric-rows":
        journal = importlib.import_module("agenteval.store.journal")
        made = journal.verdict_row
        journal.verdict_row = lambda *a, **k: (*made(*a, **k)[:-2], [], [])
    for label, module, owner, name in STEPS:
        mod = importlib.import_module(module)
        where = getattr(mod, owner) if owner else mod
        if hasattr(where, name):
            setattr(where, name, timed(label, getattr(where, name)))
    targets = importlib.import_module("agenteval.datasets.targets")
    write = targets.TargetWriter.write

    def write_timed(self: Any, chunk: bytes) -> None:
        if "eval_history" not in str(self.path):
            return write(self, chunk)
        t0 = time.thread_time()
        try:
            return write(self, chunk)
        finally:
            times[HISTORY_COPY] = times.get(HISTORY_COPY, 0.0) + time.thread_time() - t0

    targets.TargetWriter.write = write_timed
    started = [0.0]

    def collected(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.thread_time()
        else:
            times["cyclic GC"] = times.get("cyclic GC", 0.0) + time.thread_time() - started[0]
            calls["cyclic GC"] = calls.get("cyclic GC", 0) + 1

    gc.callbacks.append(collected)

    def dump() -> None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        Path(out_file).write_text(json.dumps({"times": times, "calls": calls, "nvcsw": usage.ru_nvcsw}))

    teardown = importlib.import_module("agenteval.cli.teardown")
    exit_fast = teardown.exit_fast

    def exit_dumped(code: int) -> None:
        dump()
        exit_fast(code)

    teardown.exit_fast = exit_dumped
    import atexit
    atexit.register(dump)
    from agenteval.cli.main import main
    sys.argv = ["agenteval", *args]
    main()


def run(cases: int, pairs: int, src: str, what_if: str) -> dict[str, Any]:
    sys.path.insert(0, str(BENCH_DIR))
    import bench_journal

    OUT.mkdir(parents=True, exist_ok=True)
    evalset = OUT / "set.json"
    bench_journal.write_set(evalset, range(cases))
    rounds: dict[str, list[dict[str, Any]]] = {"on": [], "off": []}
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    for _ in range(pairs):
        for mode in rounds:
            agent = OUT / "agent"
            shutil.rmtree(agent, ignore_errors=True)
            agent.mkdir(parents=True)
            (agent / "__init__.py").write_text(bench_journal.AGENT)
            steps = OUT / f"steps_{mode}.json"
            steps.unlink(missing_ok=True)
            cmd = [sys.executable, __file__, "--child", str(steps), "--what-if", what_if, "--", "eval",
                   str(agent), str(evalset), "--parallelism", "8", "--output", str(OUT / "out.json"),
                   *(["--no_history"] if mode == "off" else [])]
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
            _, status, usage = os.wait4(proc.pid, 0)
            assert proc.stderr is not None
            err = proc.stderr.read().decode()
            assert os.waitstatus_to_exitcode(status) in (0, 1), err[-800:]
            r = json.loads(steps.read_text())
            r["cpu"] = usage.ru_utime + usage.ru_stime
            rounds[mode].append(r)
    return rounds


def report(rounds: dict[str, list[dict[str, Any]]]) -> None:
    on, off = rounds["on"], rounds["off"]

    def med(values: list[float]) -> float:
        return statistics.median(values)

    diff = [a["cpu"] - b["cpu"] for a, b in zip(on, off, strict=True)]
    print(f"process CPU: on {med([r['cpu'] for r in on]):.3f} s, off {med([r['cpu'] for r in off]):.3f} s; "
          f"on - off {med(diff):+.3f} s (pairs {', '.join(f'{d:+.2f}' for d in diff)})")
    labels = [*dict.fromkeys(s[0] for s in STEPS), HISTORY_COPY]
    for label in labels:
        values = [r["times"].get(label, 0.0) for r in on]
        counts = med([r["calls"].get(label, 0) for r in on])
        print(f"  {label:52s} {med(values):.3f} s ({counts:.0f} calls)")
    gc_diff = [a["times"].get("cyclic GC", 0.0) - b["times"].get("cyclic GC", 0.0)
               for a, b in zip(on, off, strict=True)]
    print(f"  {'cyclic GC, on - off':52s} {med(gc_diff):+.3f} s")
    placed = "  its placed JSON (shared with the document)"
    explained = [sum(r["times"].get(t, 0.0) for t in TOP) - r["times"].get(placed, 0.0) + g
                 for r, g in zip(on, gc_diff, strict=True)]
    print(f"  {'the steps (less the shared placed JSON), with GC':52s} {med(explained):.3f} s; "
          f"unexplained (on - off - steps, pair by pair) "
          f"{med([d - e for d, e in zip(diff, explained, strict=True)]):+.3f} s")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        rest = sys.argv.index("--")
        child(sys.argv[2], sys.argv[sys.argv.index("--what-if") + 1], sys.argv[rest + 1:])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--src", default=str(BENCH_DIR.parent / "src"))
    ap.add_argument("--what-if", default="none", choices=["none", "no-metric-rows"])
    args = ap.parse_args()
    rounds = run(args.cases, args.pairs, args.src, args.what_if)
    (OUT / "summary.json").write_text(json.dumps(rounds, indent=1))
    print(f"{args.cases} cases, {args.pairs} pairs, src {args.src}, what-if {args.what_if}, "
          f"load {os.getloadavg()[0]:.1f}")
    report(rounds)


if __name__ == "__main__":
    main()
