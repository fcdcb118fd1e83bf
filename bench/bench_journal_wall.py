"""Where the journal's cost in WALL time goes: `eval` of the trivial set timed phase by phase.

    python bench/bench_journal_wall.py [--cases 5000] [--repeat 3] [--src DIR ...]

Each tree (`--src`, default this checkout's `src/`) runs `agenteval eval` of `bench_journal.py`'s
trivial agent and set (`--cases` cases, parallelism 8) with the run history and journal on and
with `--no_history`, each in a fresh child process whose CLI is wrapped (the wrappers cost the
same on both sides) to mark the phases of a run: start-up (to the run's start), the run's cases
(to `runner.run._end`), the journal's last flush (`_end`), the documents completed
(`Written.on_document`), the console report (to `finish`'s first step), the recording
(`commands._record`) and the exit (the journal closed). At each mark the child reads the wall
clock, its own thread's CPU (the event loop's: the run is `asyncio.run` on the main thread) and the
process's CPU (the rest is the other threads': the journal's writer, the judge's threads if any);
also the wall time of the journal's `begin` (`Journaled.on_start`) and how often the main thread
waited (its voluntary context switches: for the GIL, for a lock, for I/O), and each other thread's
CPU by name (the thread's own clock as it ends, or /proc's count for those still running at exit).
Runs alternate A on, A off, B on, B off, ... with the first tree alternating by round; the
per-phase medians are printed per tree and mode, and on − off per phase (wall, main-thread CPU,
other threads' CPU), with the 1-minute load before each round. Outputs under bench/out/journal_wall/.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
from bench_journal import compiled, write_set  # noqa: E402
from bench_journal_instructions import AGENT  # noqa: E402

OUT = BENCH_DIR / "out" / "journal_wall"
PHASES = ("start-up", "cases", "flush", "documents", "report", "record", "exit")
MARKS = ("run", "end", "ended", "documented", "finish", "recorded", "closed")

# The child: marks taken by wrappers around the CLI's own functions (no change to the tree).
CHILD = r'''
import json, os, sys, threading, time
marks = [("begin", time.perf_counter(), time.thread_time(), time.process_time())]
threads = {}  # CPU seconds by thread name (numbers stripped), of the threads that ended
ended = set()
_thread_run = threading.Thread._bootstrap_inner  # (every thread's, subclasses' own `run` too)
def short(name):
    return "agenteval-journal" if name.startswith("agenteval-journal-") else name.rstrip("_0123456789-")
def thread_run(self):
    try:
        _thread_run(self)
    finally:
        threads[short(self.name)] = threads.get(short(self.name), 0.0) + time.thread_time()
        ended.add(threading.get_native_id())  # (its OS thread may outlive this line a little)
threading.Thread._bootstrap_inner = thread_run
def live_threads():
    """The CPU of the threads still running (but the main one), from /proc, by name."""
    ticks = os.sysconf("SC_CLK_TCK")
    python = {t.native_id: t.name for t in threading.enumerate()}
    for tid in os.listdir("/proc/self/task"):
        if int(tid) == threading.main_thread().native_id or int(tid) in ended:
            continue
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                comm, fields = f.read().split("(", 1)[1].rsplit(")", 1)
        except OSError:
            continue
        fields = fields.split()
        # (threads not started by Python, e.g. a native library's pool, by their OS name)
        name = (short(python[int(tid)]) if int(tid) in python else f"native {comm}") + " (live)"
        threads[name] = threads.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / ticks
def mark(name):
    marks.append((name, time.perf_counter(), time.thread_time(), time.process_time()))
import agenteval.cli.run as cli_run, agenteval.cli.commands as commands, agenteval.runner.run
runner_run = sys.modules["agenteval.runner.run"]  # (the package's `run` is the function)
import agenteval.cli.teardown as teardown
from agenteval.runner.driver import Written
from agenteval.cli.main import main
run, end, on_document = cli_run.run, runner_run._end, Written.on_document
finish, record = cli_run.finish, commands._record
def run_(*a, **k):
    mark("run")
    return run(*a, **k)
def end_(*a, **k):
    mark("end")
    end(*a, **k)
    mark("ended")
def on_document_(self, d):
    on_document(self, d)
    mark("documented")
def finish_(*a, **k):
    mark("finish")
    return finish(*a, **k)
def record_(*a, **k):
    r = record(*a, **k)
    mark("recorded")
    return r
cli_run.run, runner_run._end, Written.on_document = run_, end_, on_document_
cli_run.finish, commands._record = finish_, record_
from agenteval.runner.driver import Journaled
on_start = Journaled.on_start
def on_start_(self, header, total):
    mark("journal begin")
    on_start(self, header, total)
    mark("journal begun")
Journaled.on_start = on_start_
exit_fast = teardown.exit_fast
def exit_(code):
    mark("closed")
    with open("/proc/thread-self/status") as f:  # (the main thread's: times it waited, e.g. for the GIL)
        waits = [int(l.split(":")[1]) for l in f if l.startswith("voluntary_ctxt_switches")]
    marks.append(("waits", *waits, 0, 0))
    live_threads()
    marks.append(("threads", threads, 0, 0))
    with open(os.environ["BENCH_MARKS"], "w") as f:
        json.dump(marks, f)
    exit_fast(code)
teardown.exit_fast = exit_
sys.argv = ["agenteval", *sys.argv[1:]]
main()
'''


def child(src: str, history: bool, evalset: Path, tag: str) -> dict[str, Any]:
    agent = OUT / f"agent_{tag}"
    shutil.rmtree(agent, ignore_errors=True)
    agent.mkdir(parents=True)
    (agent / "__init__.py").write_text(AGENT)
    marks = OUT / f"marks_{tag}.json"
    marks.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": src, "BENCH_MARKS": str(marks)}
    cmd = [sys.executable, "-c", CHILD, "eval", str(agent), str(evalset), "--parallelism", "8",
           "--output", str(OUT / f"out_{tag}.json"), *([] if history else ["--no_history"])]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert os.waitstatus_to_exitcode(status) in (0, 1) and marks.exists(), err[-2000:]
    got = {name: (wall, main, cpu) for name, wall, main, cpu in json.loads(marks.read_text())}
    row: dict[str, Any] = {"cpu": usage.ru_utime + usage.ru_stime, "waits": got["waits"][0],
                           "threads": got["threads"][0]}
    if "journal begun" in got:  # (the journal's `begin`, on the event loop's thread)
        b0, b1 = got["journal begin"], got["journal begun"]
        row["begin"] = {"wall": b1[0] - b0[0], "main": b1[1] - b0[1]}
    previous = "begin"
    for phase, name in zip(PHASES, MARKS, strict=True):
        if name not in got:  # (--no_history records nothing: the phase is empty)
            got[name] = got[previous]
        w0, m0, c0 = got[previous]
        w1, m1, c1 = got[name]
        row[phase] = {"wall": w1 - w0, "main": m1 - m0, "other": (c1 - c0) - (m1 - m0)}
        previous = name
    row["total"] = {"wall": got["closed"][0] - got["begin"][0], "main": got["closed"][1] - got["begin"][1],
                    "other": (got["closed"][2] - got["begin"][2]) - (got["closed"][1] - got["begin"][1])}
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--src", action="append", default=None, help="a tree's src/ (repeat for several)")
    args = ap.parse_args()
    srcs = args.src or [str(BENCH_DIR.parent / "src")]
    compiled(*srcs)
    OUT.mkdir(parents=True, exist_ok=True)
    evalset = OUT / "set.evalset.json"
    write_set(evalset, range(args.cases))
    runs: dict[str, list[dict[str, Any]]] = {f"{i} {m}": [] for i in range(len(srcs)) for m in ("on", "off")}
    loads = []
    for r in range(args.repeat):
        loads.append(os.getloadavg()[0])
        order = list(range(len(srcs)))
        order = order[r % len(order):] + order[:r % len(order)]  # the first tree alternates
        for i in order:
            for mode in ("on", "off") if r % 2 == 0 else ("off", "on"):
                runs[f"{i} {mode}"].append(child(srcs[i], mode == "on", evalset, f"{i}_{mode}"))
    loads.append(os.getloadavg()[0])
    (OUT / "summary.json").write_text(json.dumps({"srcs": srcs, "loads": loads, "runs": runs}, indent=1))
    print(f"{args.cases} cases, {args.repeat} rounds, load {' '.join(f'{x:.1f}' for x in loads)}")
    for i, src in enumerate(srcs):
        print(f"tree {i}: {src}")
        print(f"  {'phase':<10} {'on wall':>8} {'off wall':>8} {'Δ wall':>8} {'Δ main':>8} {'Δ other':>8}"
              f" {'on other':>8}   (medians, s; Δ: on − off pair by pair)")
        for phase in (*PHASES, "total"):
            on, off = runs[f"{i} on"], runs[f"{i} off"]

            def med(rows: list[dict[str, Any]], of: str, phase: str = phase) -> float:
                return statistics.median(x[phase][of] for x in rows)

            def delta(of: str, phase: str = phase, on: list[Any] = on, off: list[Any] = off) -> float:
                return statistics.median(a[phase][of] - b[phase][of] for a, b in zip(on, off, strict=True))

            print(f"  {phase:<10} {med(on, 'wall'):8.3f} {med(off, 'wall'):8.3f} {delta('wall'):+8.3f} "
                  f"{delta('main'):+8.3f} {delta('other'):+8.3f} {med(on, 'other'):8.3f}")
        begin = [x["begin"]["wall"] for x in on]
        print(f"  the journal's begin on the event loop (on): wall median "
              f"{statistics.median(begin) * 1e3:.1f} ms "
              f"({min(begin) * 1e3:.1f}-{max(begin) * 1e3:.1f}); the main thread's waits (voluntary context "
              f"switches) on {statistics.median(x['waits'] for x in on):.0f}, off "
              f"{statistics.median(x['waits'] for x in off):.0f}")
        names = sorted({n for x in on + off for n in x["threads"]})
        print("  other threads' CPU by name (medians, s; on / off): " + "; ".join(
            f"{n} {statistics.median(x['threads'].get(n, 0.0) for x in on):.3f} / "
            f"{statistics.median(x['threads'].get(n, 0.0) for x in off):.3f}" for n in names))
        ratios = [a["total"]["wall"] / b["total"]["wall"] for a, b in zip(on, off, strict=True)]
        cpu = [a["cpu"] / b["cpu"] for a, b in zip(on, off, strict=True)]
        print(f"  on/off wall pair by pair: median {statistics.median(ratios):.3f} "
              f"({min(ratios):.3f}-{max(ratios):.3f}); CPU {statistics.median(cpu):.3f} "
              f"({min(cpu):.3f}-{max(cpu):.3f})")


if __name__ == "__main__":
    main()
