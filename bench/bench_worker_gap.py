"""Why a whole `score` run's workers spend more CPU a case than `score_chunk` in a warm loop
(issue 29 item 4, session 31).

    python bench/bench_worker_gap.py run -- EXPECTED --actual ACTUAL --config_file_path CFG
    python bench/bench_worker_gap.py [--n 1000] [--passes 3] [--chunk 250] [--pairs 3] pair -- ...

`run`: the whole `agenteval score ... --parallelism 2` in a child, each worker's `score_chunk`
wrapped (the pool forks its workers from the parent, so the wrapper is theirs): the workers' CPU
and minor page faults inside `score_chunk` against all of their CPU (the rest is the worker's
start and the chunks' hand-over), per case.

`pair`: the same cases scored by `score_chunk` in chunks, one cold pass and then `--passes` warm
ones (CPU µs a case each), by one process alone and then by two at once, `--pairs` times; and,
as a control, a loop that touches almost no memory, alone and two at once. Same code, same
instructions: what moves is how fast the machine runs them when both cores are busy.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# Run as `python -c` in a child: the CLI with `sharded.score_chunk` wrapped.
_RUN = """
import json, os, resource, sys
out = sys.argv[1]
import agenteval.runner.sharded as sharded
inner, acc = sharded.score_chunk, {"cpu": 0.0, "faults": 0, "cases": 0}
def ru():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, r.ru_minflt
def wrapped(first, expected, actual):
    c0, f0 = ru()
    scored = inner(first, expected, actual)
    c1, f1 = ru()
    acc["cpu"] += c1 - c0; acc["faults"] += f1 - f0; acc["cases"] += len(expected)
    with open(f"{out}/w{os.getpid()}.json", "w") as f:
        json.dump(acc, f)
    return scored
sharded.score_chunk = wrapped
def told():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(f"{out}/parent.json", "w") as f:
        json.dump([s.ru_utime + s.ru_stime, c.ru_utime + c.ru_stime, c.ru_minflt], f)
import atexit; atexit.register(told)
sys.argv = ["agenteval", "score", *sys.argv[2:], "--parallelism", "2", "--output", f"{out}/out.json"]
from agenteval.cli.main import main
main()
"""

_SPIN = """
import time
t = time.process_time(); x = 0
for i in range(10_000_000): x += i & 7
print(time.process_time() - t)
"""


def run(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-c", _RUN, tmp, *argv], capture_output=True, check=False)
        parent, children, faults = json.loads((Path(tmp) / "parent.json").read_text())
        workers = [json.loads(p.read_text()) for p in Path(tmp).glob("w*.json")]
    cases = sum(w["cases"] for w in workers)
    inner = sum(w["cpu"] for w in workers)
    us = 1e6 / cases
    print(f"{cases} cases: parent {parent * us:.0f} µs a case; workers {children * us:.0f} "
          f"(in score_chunk {inner * us:.0f}, start and hand-over {(children - inner) * us:.0f}); "
          f"workers' minor faults {faults / cases:.2f} a case "
          f"(in score_chunk {sum(w['faults'] for w in workers) / cases:.2f})")


def passes(argv: list[str], n: int, rounds: int, chunk: int) -> None:
    """In this process (a child of `pair`): setup, a cold pass, `rounds` warm ones; prints µs a case."""
    from profile_score_chunk import started_worker

    _, expected, actual = started_worker(argv, n)
    from agenteval.runner import shard_worker

    out = []
    for _ in range(rounds + 1):
        started = time.process_time()
        for s in range(0, n, chunk):
            shard_worker.score_chunk(s, expected[s:s + chunk], actual[s:s + chunk])
        out.append((time.process_time() - started) / n * 1e6)
    r = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"us": out, "faults": r.ru_minflt}))


def pair(argv: list[str], n: int, rounds: int, chunk: int, pairs: int) -> None:
    me = [sys.executable, __file__, "--n", str(n), "--passes", str(rounds), "--chunk", str(chunk), "passes",
          "--", *argv]

    def together(cmd: list[str], k: int) -> list[str]:
        procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                 for _ in range(k)]
        return [p.communicate()[0].strip().splitlines()[-1] for p in procs]

    def shown(lines: list[str]) -> str:
        return " | ".join("cold {:.0f}, warm {}".format(d["us"][0], " ".join(f"{u:.0f}" for u in d["us"][1:]))
                          for d in map(json.loads, lines))

    spin = [sys.executable, "-c", _SPIN]
    for _ in range(pairs):
        load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
        print(f"load {load}: alone {shown(together(me, 1))}")
        print(f"          two at once {shown(together(me, 2))}")
        print(f"          control loop alone {together(spin, 1)[0][:5]} s, two at once "
              f"{', '.join(s[:5] for s in together(spin, 2))} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["run", "pair", "passes"])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=250)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("score_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    argv = [a for a in args.score_args if a != "--"]
    if args.what == "run":
        run(argv)
    elif args.what == "pair":
        pair(argv, args.n, args.passes, args.chunk, args.pairs)
    else:
        passes(argv, args.n, args.passes, args.chunk)


if __name__ == "__main__":
    main()
