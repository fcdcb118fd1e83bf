"""Instructions a case of `agenteval score`, counted by valgrind (cachegrind, no cache model).

    python bench/bench_score_instructions.py --tree /tmp/before/src --tree /tmp/after/src \
        [--n 1000] [--base 10] [--out /tmp/score_ir]

On a shared machine the CPU seconds of two trees wander by ±15% pair to pair; the number of
instructions a process executes does not depend on the load (it ignores cache misses and
stalls, so it is a proxy of CPU time, not a measure of it). For each tree (a `src` directory,
given as PYTHONPATH), the whole `agenteval score --parallelism 1` process is run under
`valgrind --tool=cachegrind --cache-sim=no` on a corpus of `--n` cases and one of `--base` cases
(`gen_corpus.py`, seed 0, the default criteria), and the instructions a case are
(I(n) - I(base)) / (n - base): start-up and imports cancel. Prints one JSON line per tree and
the ratio of each tree to the first. valgrind makes a run about 50 times slower: 1,000 cases
take a few minutes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
import instructions  # noqa: E402

CONFIG = {"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0, "per_agent": False},
                       "response_match_score": 0.8}}


def _corpus(out: Path, n: int) -> Path:
    where = out / f"c{n}"
    if not (where / "actual.evalset.json").exists():
        subprocess.run([sys.executable, str(BENCH_DIR / "gen_corpus.py"), "--n", str(n), "--out", str(where)],
                       check=True, stdout=subprocess.DEVNULL)
    (where / "config_default.json").write_text(json.dumps(CONFIG) + "\n")
    return where


def _instructions(tree: str, corpus: Path, output: Path) -> int:
    argv = [sys.executable, "-m", "agenteval", "score", str(corpus / "expected.evalset.json"),
            "--actual", str(corpus / "actual.evalset.json"), "--config_file_path",
            str(corpus / "config_default.json"), "--parallelism", "1", "--output", str(output)]
    return instructions.count(argv, tree, exits=(0, 1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", action="append", required=True, help="a src directory (repeat)")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--base", type=int, default=10)
    parser.add_argument("--out", type=Path, default=Path("/tmp/score_ir"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    big, small = _corpus(args.out, args.n), _corpus(args.out, args.base)
    first = None
    for k, tree in enumerate(args.tree):
        i_n = _instructions(tree, big, args.out / f"doc_{k}_{args.n}.json")
        i_base = _instructions(tree, small, args.out / f"doc_{k}_{args.base}.json")
        per_case = (i_n - i_base) / (args.n - args.base)
        first = first or per_case
        print(json.dumps({"tree": tree, "instructions": i_n, "base_instructions": i_base,
                          "per_case": round(per_case), "ratio_to_first": round(per_case / first, 4)}),
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
