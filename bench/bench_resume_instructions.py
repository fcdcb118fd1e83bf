"""A `--resume`'s reading of its kept cases, and a whole resume, counted in instructions.

    python bench/bench_resume_instructions.py [--src DIR ...] [--what reader resume] [--time N]

Uses `bench_resume_budget.py`'s killed run (10,000 trivial cases, 100 left; made first if
missing). For each tree (`--src`, each compiled to bytecode first; default: this checkout's):

* `reader`: `JournalReader.kept_cases` over the run's 9,900 kept cases, in eval-set order, by
  blocks of 256 as `runner.evaluate` asks (the cyclic GC paused, as there);
* `resume`: one in-process resume of a fresh copy of the run (`agenteval.cli.main.main`, its
  end made a no-op as `bench_resume_budget.py` does), all threads.

Each is run under `valgrind --tool=cachegrind --cache-sim=no` on the interpreter's own binary,
once doing the work and once only the imports and set-up; the difference is printed (threads
run one at a time under valgrind, so the counts hold at any load, where CPU seconds do not).
`--time N` instead prints the reader's thread CPU, best and median of N passes in process.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
import bench_journal as bj  # noqa: E402
import bench_resume_budget as budget  # noqa: E402
import instructions  # noqa: E402

OUT = budget.OUT


def reader_pass(work: bool = True) -> float:
    """One pass of the reader over the killed run's kept cases (none without `work`: only what
    comes before it); its thread CPU."""
    from agenteval.store.journal import Journal
    from agenteval.store.journal_reader import JournalReader

    root = OUT / "killed"
    journal = Journal(root)
    run = journal.runs()[0].run_id
    keys = sorted(journal.finished_keys(run))
    set_id, ids = keys[0][0], [k[1] for k in keys]
    reader = JournalReader(journal.path, root)
    if not work:
        return 0.0
    gc.disable()
    t = time.thread_time()
    kept = 0
    for i in range(0, len(ids), 256):
        kept += sum(c is not None for c in reader.kept_cases(run, set_id, ids[i:i + 256], 1, "mean"))
    spent = time.thread_time() - t
    gc.enable()
    reader.close()
    assert kept == len(ids), (kept, len(ids))
    return spent


def resume_once(tag: str, work: bool) -> None:
    """A resume of a fresh copy of the killed run (`work`), or only the copy."""
    import agenteval.cli.teardown as teardown
    from agenteval.cli.main import main

    teardown.end = lambda: None  # (in process: `eval` would end the process)
    copy, out = OUT / f"ir_{tag}", OUT / f"ir_{tag}.json"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(OUT / "killed", copy)
    out.unlink(missing_ok=True)
    if work:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            main(["eval", str(copy), str(OUT / "resume.evalset.json"), "--resume", "latest",
                  "--output", str(out)])
    shutil.rmtree(copy, ignore_errors=True)
    out.unlink(missing_ok=True)


def counted(src: str, what: str, work: bool) -> int:
    """Instructions of this script run as `--child` under cachegrind with `src` first on the path."""
    return instructions.count([sys.executable, __file__, "--child", what, "work" if work else "base"], src)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", nargs="+", default=[str(BENCH_DIR.parent / "src")])
    ap.add_argument("--what", nargs="+", choices=["reader", "resume"], default=["reader", "resume"])
    ap.add_argument("--time", type=int, default=0, help="time the reader N times in process instead")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        what, mode = args.child
        import agenteval.cli.main
        import agenteval.store.journal_reader  # noqa: F401 (imported in both modes)
        if what == "reader":
            reader_pass(mode == "work")
        else:
            resume_once(str(os.getpid()), mode == "work")
        return
    if not (OUT / "killed").is_dir():
        bj.OUT = OUT
        budget.setup(10_000, 0.01)
    bj.compiled(*args.src)
    for src in args.src:
        if args.time:
            code = (f"import sys; sys.argv = ['x']; sys.path.insert(0, {str(BENCH_DIR)!r}); "
                    "import bench_resume_instructions as b; "
                    f"print(*(round(b.reader_pass(), 4) for _ in range({args.time})))")
            got = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": src},
                                 capture_output=True, text=True, check=True).stdout.split()
            times = [float(t) for t in got]
            print(f"{src}: reader thread CPU best {min(times):.4f} s, median "
                  f"{statistics.median(times):.4f} s (load {os.getloadavg()[0]:.1f})", flush=True)
            continue
        for what in args.what:
            work, base = counted(src, what, True), counted(src, what, False)
            print(f"{src}: {what} {(work - base) / 1e6:,.0f} M instructions "
                  f"({work / 1e6:,.0f} M - {base / 1e6:,.0f} M)", flush=True)


if __name__ == "__main__":
    main()
