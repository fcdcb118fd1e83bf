"""Where a `--resume` of a large run spends its CPU, step by step, in one process.

    python bench/bench_resume_budget.py [--cases 10000] [--left 0.01] [--repeat 2] [--setup]

Makes (once, or again with `--setup`) `bench_journal.py`'s killed run: `--cases` trivial cases,
SIGKILLed with `--left` of them still to run, kept under bench/out/resume_budget/killed. Then,
`--repeat` times, resumes a fresh copy of it in this process (`agenteval.cli.main.main`, after
the imports) with each step below wrapped in a `time.thread_time` counter, and prints each
step's thread CPU, the process's CPU (user + system) for the resume, split into the main
thread's and the other threads' (on a 2-core machine the main thread's CPU bounds the wall from
below when the rest runs beside it), the main thread's context switches (voluntary: it waited,
for the GIL, a lock or I/O; involuntary: it was preempted, the machine's load), the minor page
faults, the wall, and a wall timeline
(each step's first start and last end, from the resume's start). Steps nest (the reader
runs inside `run_evaluation`), and a generator's step counts only its own `next` calls. Run it
with `PYTHONPATH=<a tree's src>` to budget another tree (compiled to bytecode first:
`python -m compileall -q <src>`).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import inspect
import io
import os
import resource
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_journal as bj

OUT = bj.BENCH_DIR / "out" / "resume_budget"

STEPS = [  # label, module, class ("" for a function of the module), function
    ("reader: JournalReader.kept_cases", "agenteval.store.journal_reader", "JournalReader", "kept_cases"),
    ("sinks: Sinks.on_kept_block", "agenteval.runner.driver", "Sinks", "on_kept_block"),
    ("  the document: Written.on_kept_block", "agenteval.runner.driver", "Written", "on_kept_block"),
    ("    its writes: TargetWriter.write", "agenteval.datasets.targets", "TargetWriter", "write"),
    ("  the totals: Totals.on_kept_block", "agenteval.runner.driver", "Totals", "on_kept_block"),
    ("the document's commit: Written.on_document", "agenteval.runner.driver", "Written", "on_document"),
    ("reading the set: StreamedCases.cases", "agenteval.runner.selection", "StreamedCases", "cases"),
    ("the run: run_evaluation (all of the above but the commit)", "agenteval.runner.run", "",
     "run_evaluation"),
    ("recording: RunStore.record_copied", "agenteval.store.db", "RunStore", "record_copied"),
    ("  copy_cases", "agenteval.store.db", "", "copy_cases"),
    ("the journal: finished_keys", "agenteval.store.journal", "Journal", "finished_keys"),
    ("the journal: forget", "agenteval.store.journal", "Journal", "forget"),
    ("the command: cli.run._eval (all but argument parsing)", "agenteval.cli.run", "", "_eval"),
    ("  claim_resume", "agenteval.cli.run", "", "claim_resume"),
    ("  prepare", "agenteval.cli.run", "", "prepare"),
    ("  select", "agenteval.cli.run", "", "select"),
    ("  load_root_agent", "agenteval.cli.run", "", "load_root_agent"),
    ("  run (runner.run.run)", "agenteval.cli.run", "", "run"),
    ("  finish (reports, recording)", "agenteval.cli.run", "", "finish"),
    ("the history's early copy: kept_copy.start", "agenteval.runner.evaluate", "", "start_copy"),
    ("the document: DocumentWriter.commit", "agenteval.store.output", "DocumentWriter", "commit"),
    ("recording: RunStore.record_streamed", "agenteval.store.db", "RunStore", "record_streamed"),
]


def setup(cases: int, left: float) -> None:
    bj.OUT = OUT
    OUT.mkdir(parents=True, exist_ok=True)
    bj.write_set(OUT / "resume.evalset.json", range(cases))
    agent = bj.fresh_agent("killed")
    env = {**os.environ, "BENCH_KILL_AT": str(int(cases * (1 - left)))}
    src = os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] or str(bj.BENCH_DIR.parent / "src")
    r = bj.timed([bj.script(), "eval", str(agent), str(OUT / "resume.evalset.json"), "--parallelism", "1",
                  "--output", str(OUT / "never.json")], env, src=src)
    assert r["exit"] == -9, r
    bj.drop_killed_document()


SPANS: dict[str, list[float]] = {}  # label: [first start, last end] by the wall, from the resume's start
_T0 = [0.0]


def _span(label: str, start: float) -> None:
    end = time.perf_counter() - _T0[0]
    span = SPANS.setdefault(label, [start - _T0[0], end])
    span[1] = end


def _counted(f: Callable[..., Any], label: str, acc: dict[str, float]) -> Callable[..., Any]:
    if inspect.isgeneratorfunction(f):
        @functools.wraps(f)
        def gen(*a: Any, **k: Any) -> Any:
            it = f(*a, **k)
            while True:
                t, w = time.thread_time(), time.perf_counter()
                try:
                    v = next(it)
                except StopIteration:
                    acc[label] += time.thread_time() - t
                    _span(label, w)
                    return
                acc[label] += time.thread_time() - t
                _span(label, w)
                yield v
        return gen
    if inspect.iscoroutinefunction(f):
        @functools.wraps(f)
        async def coro(*a: Any, **k: Any) -> Any:
            t, w = time.thread_time(), time.perf_counter()  # (the run's coroutine runs on this thread)
            try:
                return await f(*a, **k)
            finally:
                acc[label] += time.thread_time() - t
                _span(label, w)
        return coro

    @functools.wraps(f)
    def plain(*a: Any, **k: Any) -> Any:
        t, w = time.thread_time(), time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            acc[label] += time.thread_time() - t
            _span(label, w)
    return plain


def counted_steps() -> dict[str, float]:
    """Wraps every step of `STEPS` that this tree has; their thread CPU is added up in the dict."""
    acc: dict[str, float] = {}
    for label, module, owner, name in STEPS:
        m = importlib.import_module(module)
        o = getattr(m, owner) if owner else m
        f = getattr(o, name, None)
        if f is not None:
            acc[label] = 0.0
            setattr(o, name, _counted(f, label, acc))
    return acc


def _switches() -> tuple[int, int]:
    """The calling thread's voluntary and involuntary context switches so far (Linux; else 0)."""
    who = getattr(resource, "RUSAGE_THREAD", None)
    if who is None:
        return 0, 0
    r = resource.getrusage(who)
    return r.ru_nvcsw, r.ru_nivcsw


def resume_once(acc: dict[str, float]) -> dict[str, float]:
    from agenteval.cli.main import main

    copy = OUT / "resumed"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(OUT / "killed", copy)
    (OUT / "resumed.json").unlink(missing_ok=True)  # (replacing an earlier 140 MB output costs too)
    for k in acc:
        acc[k] = 0.0
    argv = ["eval", str(copy), str(OUT / "resume.evalset.json"), "--resume", "latest",
            "--output", str(OUT / "resumed.json")]
    SPANS.clear()
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.process_time()
    s0 = _switches()
    w0, m0 = time.perf_counter(), time.thread_time()
    _T0[0] = w0
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main(argv)
    main_thread = time.thread_time() - m0
    s1 = _switches()
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = time.process_time() - t0
    return {"process CPU (the resume, after the imports)": cpu,
            "  user": r1.ru_utime - r0.ru_utime, "  system": r1.ru_stime - r0.ru_stime,
            "  minor page faults (thousands)": (r1.ru_minflt - r0.ru_minflt) / 1000,
            "  the main thread (the run's event loop and the recording)": main_thread,
            "    its waits (voluntary switches)": s1[0] - s0[0],
            "    its preemptions (involuntary switches: the load)": s1[1] - s0[1],
            "  other threads (the journal's writer, the document's writes)": cpu - main_thread,
            "wall (under load: waits for a core too)": time.perf_counter() - w0, **acc}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--left", type=float, default=0.01)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--setup", action="store_true", help="make the killed run again")
    args = ap.parse_args()
    bj.OUT = OUT
    if args.setup or not (OUT / "killed").is_dir():
        setup(args.cases, args.left)
    t = time.process_time()
    import agenteval.cli.main
    import agenteval.cli.run
    import agenteval.store.record
    imports = time.process_time() - t
    acc = counted_steps()
    import agenteval
    import agenteval.cli.teardown as teardown

    # In process, the resumes go on: `eval` would end the process at its end (cli.teardown.end).
    teardown.end = lambda: None

    print(f"agenteval from {Path(agenteval.__file__).parent}; imports {imports:.3f} s CPU")
    runs, spans = [], []
    for _ in range(args.repeat):
        runs.append(resume_once(acc))
        spans.append(dict(SPANS))
    for label in runs[0]:
        print(f"{label:60s} " + " ".join(f"{r[label]:.3f}" if isinstance(r[label], float) else str(r[label])
                                         for r in runs))
    print("wall timeline (s from the resume's start: each step's first start - last end)")
    for label in spans[-1]:
        print(f"{label:60s} " + " ".join(f"{s[label][0]:.3f}-{s[label][1]:.3f}" if label in s else "-"
                                         for s in spans))
    print(f"1-minute load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
