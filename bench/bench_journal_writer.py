"""The journal writer thread's work, replayed in process: what it holds the GIL for, per batch.

    python bench/bench_journal_parts.py capture --cases 5000      # once (bench/out/journal_parts/)
    PYTHONPATH=TREE/src python bench/bench_journal_writer.py [--repeat 15] [--part all|none]

The captured run's case runs and verdicts are made into the writer's batches as a run makes them
(`Journal.append`'s and `append_verdict`'s rows, in the order told; a batch closes at
`FLUSH_CASES` case runs; every case run settled without a digest, as nearly all are in a real
run), once, before anything is timed. Each round then writes every batch with `Writer._write`
(and commits as `Writer._loop` does: every `COMMIT_ROWS` rows and verdicts since session 39, a
commit a batch before) into a fresh journal (prepared as the writer prepares it, the run's row
in) and rows file, on this thread: its thread CPU per round (median, min-max) and per case.
`--part none` makes the batches and the fresh journals and writes nothing: under `valgrind
--tool=callgrind` (on the interpreter's own binary), `all` minus `none` is the writer's
instructions, load-proof, and `callgrind_annotate --inclusive=yes` of `all` splits them
(`sqlite3_step`, `crc32_z`, binding).
The captured objects are frozen out of the cyclic collector's passes (`gc.freeze`).
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import shutil
import sqlite3
import statistics
import time
import types
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
CAPTURED = BENCH_DIR / "out" / "journal_parts" / "told.pkl"
OUT = BENCH_DIR / "out" / "journal_writer"


def batches(told: list[tuple[Any, ...]]) -> tuple[str, list[tuple[list[Any], list[Any]]], int]:
    """The run id, the writer's batches (case-run rows, verdict rows) and the number of cases."""
    from agenteval.store import journal_writer
    from agenteval.store.journal import _rows
    from agenteval.store.kept import verdict_row

    run_id, out, rows, verdicts, cases = "", [], [], [], 0
    for call in told:
        if call[0] == "start":
            run_id = call[1].run_id
        elif call[0] == "run":
            rows += [(*r[:7], "") for r in _rows(run_id, [call[2]], call[1])]
        else:
            verdicts.append(verdict_row(run_id, call[1], call[2]))
            cases += 1
        if len(rows) >= journal_writer.FLUSH_CASES:
            out.append((rows, verdicts))
            rows, verdicts = [], []
    if rows or verdicts:
        out.append((rows, verdicts))
    return run_id, out, cases


def fresh(root: Path, run_id: str) -> sqlite3.Connection:
    """A new journal at `root`, prepared as the writer's connection is, holding the run's row."""
    from agenteval.store import journal_writer
    from agenteval.store.journal import Journal
    from agenteval.store.sqlite import use_wal

    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    conn = sqlite3.connect(root / "journal.sqlite", timeout=60, isolation_level=None)
    use_wal(conn)
    Journal._prepare(conn)
    conn.execute(f"PRAGMA wal_autocheckpoint = {journal_writer.WAL_PAGES}")
    conn.execute("INSERT INTO journal_runs VALUES (?, 0, 0, 'running', 0, '', '', 0, '{}')", (run_id,))
    return conn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--part", choices=["all", "none"], default="all")
    args = ap.parse_args()
    from agenteval.store import journal_writer
    from agenteval.store.journal_rows import RowsWriter
    from agenteval.store.journal_writer import Writer

    told = pickle.loads(CAPTURED.read_bytes())
    run_id, made, cases = batches(told)
    del told
    gc.collect()
    gc.freeze()
    spent = []
    for _ in range(args.repeat):
        root = OUT / f"round_{os.getpid()}"
        conn = fresh(root, run_id)
        writer = types.SimpleNamespace(_stale=False, run_id=run_id, _rows=RowsWriter(root / "run.rows"),
                                       _stamped=0.0)
        t = time.thread_time()
        if args.part == "all" and hasattr(journal_writer, "COMMIT_ROWS"):  # (commits every COMMIT_ROWS)
            n, pending = 0, journal_writer._Pending()
            for rows, verdicts in made:
                n = Writer._write(writer, conn, rows, verdicts, n, pending)  # type: ignore[arg-type]
                if pending.count >= journal_writer.COMMIT_ROWS:
                    Writer._commit(writer, conn, pending, False)  # type: ignore[arg-type]
            Writer._commit(writer, conn, pending, True)  # type: ignore[arg-type]
        elif args.part == "all":  # (a tree before session 39: a commit a batch)
            n = 0
            for rows, verdicts in made:
                n = Writer._write(writer, conn, rows, verdicts, n)  # type: ignore[arg-type,call-arg]
        spent.append(time.thread_time() - t)
        writer._rows.close()
        conn.close()
    shutil.rmtree(OUT / f"round_{os.getpid()}", ignore_errors=True)
    median = statistics.median(spent)
    print(f"{os.environ.get('PYTHONPATH', '')}: {len(made)} batches, {cases} cases; "
          f"writer thread CPU {median * 1e3:.1f} ms a run ({min(spent) * 1e3:.1f}-{max(spent) * 1e3:.1f}), "
          f"{median / max(cases, 1) * 1e6:.1f} µs a case, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
