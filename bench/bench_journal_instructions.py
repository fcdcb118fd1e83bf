"""What the run journal costs in instructions: a load-proof count (session 18's method).

    python bench/bench_journal_instructions.py [--cases 1000] [--src DIR ...] [--runs 1] [--annotate N]

Each tree's `agenteval eval` of `bench_journal.py`'s trivial agent and set (`--cases` cases,
parallelism 8), journal + history on and `--no_history`, is run under `valgrind --tool=cachegrind
--cache-sim=no` on the interpreter's own binary (not a shim: valgrind would count the shell), and
the instructions executed by the whole process are printed per tree: on, off, on − off. Threads
run one at a time under valgrind, so the counts hold at any load (CPU seconds do not, on a shared
machine); they still vary a little run to run (batch boundaries and digests follow thread timing).
`--annotate N` also prints the N C functions whose counts grew most on − off (`cg_annotate`).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
import instructions  # noqa: E402
from bench_journal import compiled, write_set  # noqa: E402

OUT = BENCH_DIR / "out" / "journal_ir"
AGENT = "def root_agent(text):\n    return 'answer to ' + text\n"


def python_binary() -> str:
    """The interpreter's real binary (sys.executable may be a shim script)."""
    return os.path.realpath(sys.executable)


def counted(src: str, history: bool, evalset: Path, tag: str) -> tuple[int, Path]:
    """Instructions of one `eval` under cachegrind, and its output file."""
    tag = f"{tag}_{os.getpid()}"  # (several runs of this script may run at once)
    agent = OUT / f"agent_{tag}"
    shutil.rmtree(agent, ignore_errors=True)
    agent.mkdir(parents=True)
    (agent / "__init__.py").write_text(AGENT)
    out = OUT / f"cg_{tag}.out"
    script = shutil.which("agenteval") or str(Path(sys.executable).parent / "agenteval")
    argv = [python_binary(), script, "eval", str(agent), str(evalset), "--parallelism", "8",
            "--output", str(OUT / f"{tag}.json"), *([] if history else ["--no_history"])]
    found = instructions.count(argv, src, out=str(out), exits=(0, 1))
    shutil.rmtree(agent, ignore_errors=True)
    (OUT / f"{tag}.json").unlink(missing_ok=True)
    return found, out


def functions(out: Path) -> dict[str, int]:
    """Instructions by C function (`cg_annotate`'s table)."""
    text = subprocess.run(["cg_annotate", "--auto=no", str(out)], capture_output=True, text=True).stdout
    by: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S.*)$", line)
        if m:
            by[m.group(2)] = by.get(m.group(2), 0) + int(m.group(1).replace(",", ""))
    return by


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--src", nargs="+", default=[str(BENCH_DIR.parent / "src")])
    ap.add_argument("--runs", type=int, default=1, help="on/off runs per tree")
    ap.add_argument("--annotate", type=int, default=0)
    args = ap.parse_args()
    compiled(*args.src)
    OUT.mkdir(parents=True, exist_ok=True)
    evalset = OUT / f"set_{os.getpid()}.evalset.json"
    write_set(evalset, range(args.cases))
    for i, src in enumerate(args.src):
        for run in range(args.runs):
            on, on_out = counted(src, True, evalset, f"t{i}_on")
            off, off_out = counted(src, False, evalset, f"t{i}_off")
            print(f"{src} run {run + 1}: on {on / 1e6:,.0f} M, off {off / 1e6:,.0f} M, on - off "
                  f"{(on - off) / 1e6:+,.0f} M ({(on - off) / args.cases / 1e3:.0f} k per case), "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
            if args.annotate:
                a, b = functions(on_out), functions(off_out)
                grew = sorted(((a.get(k, 0) - b.get(k, 0), k) for k in set(a) | set(b)), reverse=True)
                for d, k in grew[:args.annotate]:
                    print(f"    {d / 1e6:+8.1f} M  {k[:110]}")


if __name__ == "__main__":
    main()
