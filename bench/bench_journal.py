"""What journaling costs: committing every case result of a 10,000-case run, one transaction each.

    python bench/bench_journal.py [--result bench/out/e2e_agenteval.json]

Reads a result document (default: the one `bench_e2e.py` writes for the 10,000-case corpus),
then appends each case result to a fresh journal as `agenteval eval` does when a case finishes
(`Journal.append`: serialise, INSERT, commit; WAL, synchronous=NORMAL), and reads them all back as
`--resume` does. Prints seconds in all and per case.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / "src"))

from agenteval.schema import RunSpec  # noqa: E402
from agenteval.store import load_result  # noqa: E402
from agenteval.store.journal import Journal  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--result", type=Path, default=BENCH_DIR / "out" / "e2e_agenteval.json")
    args = ap.parse_args()
    result = load_result(args.result)
    cases = result.eval_case_results
    with tempfile.TemporaryDirectory() as root:
        journal = Journal(root)
        journal.begin(RunSpec(run_id="bench", command="eval"), "fingerprint", len(cases))
        started = time.perf_counter()
        for case in cases:
            journal.append("bench", result.eval_set_id, case)
        append_s = time.perf_counter() - started
        started = time.perf_counter()
        back = journal.results("bench")
        read_s = time.perf_counter() - started
        size = journal.path.stat().st_size + sum(p.stat().st_size for p in Path(root).rglob("*-wal"))
    assert len(back) == len(cases)
    print(f"{len(cases)} case results: appended in {append_s:.2f} s ({1000 * append_s / len(cases):.2f} ms "
          f"each), read back in {read_s:.2f} s; journal {size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
