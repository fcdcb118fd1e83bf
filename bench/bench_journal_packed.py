"""A verdict's metric rows packed into one JSON text, priced and checked (issue 29 item 2, session 26).

    python bench/bench_journal_packed.py [--repeat 5] [--edges 300000]

Reads the metric rows of the journal `bench_journal_parts.py capture` saved (bench/out/journal_parts/
snapshot: 5,000 verdicts, 30,000 metric rows) and, in process, thread CPU per round:
- the writer's side: the rows inserted as the journal's writer does now (`journal_writer._insert`
  of `INSERT_METRIC`, batches of 64 verdicts, one transaction each), against one JSON text per
  verdict, either of exact integer ratios (`[run, name, n, d, n, d, status]`: a double is n / d
  with d a power of two, which SQLite computes exactly) or of the floats as text (`orjson`);
- the history copy's side: `INSERT ... SELECT` of them into a table keyed as `case_metrics`,
  from the rows as now against `json_each` of the texts; the copies are checked equal (values
  and types).
Then SQLite's text-to-double conversion against Python's (`repr`, read back exactly) on values
whose shortest repr lies close to the edge of its rounding interval (where a conversion that
rounds twice goes wrong), through `json_each` and through `CAST(... AS REAL)`.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sqlite3
import statistics
import struct
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import orjson

from agenteval.store import journal_writer

SNAP = Path(__file__).resolve().parent / "out" / "journal_parts" / "snapshot" / ".agenteval" / \
    "journal.sqlite"
RUN = "r"
_METRICS = ("CREATE TABLE journal_metrics (run_id TEXT NOT NULL, told INTEGER NOT NULL, run_index INTEGER "
            "NOT NULL, metric_name TEXT NOT NULL, score REAL, threshold REAL, status INTEGER NOT NULL)")
_HISTORY = ("CREATE TABLE case_metrics (run_id TEXT NOT NULL, eval_id TEXT NOT NULL, "
            "run_index INTEGER NOT NULL, metric_name TEXT NOT NULL, score REAL, threshold REAL, "
            "status INTEGER NOT NULL, "
            "PRIMARY KEY (run_id, eval_id, run_index, metric_name)) WITHOUT ROWID")
COPY = {
    "rows": "SELECT 'doc', 'c' || told, run_index, metric_name, score, threshold, status "
            "FROM j.journal_metrics",
    "ratios": "SELECT 'doc', 'c' || p.told, e.value ->> 0, e.value ->> 1, "
              "(e.value ->> 2) * 1.0 / (e.value ->> 3), (e.value ->> 4) * 1.0 / (e.value ->> 5), "
              "e.value ->> 6 "
              "FROM j.packed p, json_each(p.metrics) e",
    "text": "SELECT 'doc', 'c' || p.told, e.value ->> 0, e.value ->> 1, e.value ->> 2, e.value ->> 3, "
            "e.value ->> 4 FROM j.packed p, json_each(p.metrics) e",
}


def ratios(metrics: list[tuple[Any, ...]]) -> str | None:
    """The verdict's metrics as exact integer ratios (None: a value that does not fit)."""
    out = []
    for i, name, score, bar, status in metrics:
        s = (None, None) if score is None else score.as_integer_ratio()
        b = (None, None) if bar is None else bar.as_integer_ratio()
        if max(s[1] or 1, b[1] or 1) > 1 << 62 or max(abs(s[0] or 0), abs(b[0] or 0)) >= 1 << 63:
            return None
        out.append((i, name, *s, *b, status))
    return orjson.dumps(out).decode()


def write(how: str, verdicts: list[list[tuple[Any, ...]]], path: Path) -> float:
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(_METRICS)
    conn.execute("CREATE TABLE packed (run_id TEXT NOT NULL, told INTEGER NOT NULL, metrics TEXT)")
    started = time.thread_time()
    for b in range(0, len(verdicts), 64):
        batch = verdicts[b:b + 64]
        conn.execute("BEGIN IMMEDIATE")
        if how == "rows":  # (what `Writer._write` builds)
            journal_writer._insert(conn, journal_writer.INSERT_METRIC, [
                (RUN, b + k, i, name, "" if score is None else score, "" if bar is None else bar, status)
                for k, v in enumerate(batch) for i, name, score, bar, status in v])
        else:
            encode = ratios if how == "ratios" else (lambda v: orjson.dumps(v).decode())
            journal_writer._insert(conn, "INSERT INTO packed VALUES (?, ?, ?)",
                                   [(RUN, b + k, encode(v)) for k, v in enumerate(batch)])
        conn.execute("COMMIT")
    spent = time.thread_time() - started
    conn.close()
    return spent


def copy(how: str, journal: Path, folder: Path) -> tuple[float, list[tuple[Any, ...]]]:
    history = folder / "history.sqlite"
    history.unlink(missing_ok=True)
    conn = sqlite3.connect(history, isolation_level=None)
    conn.execute(_HISTORY)
    conn.execute("ATTACH ? AS j", (str(journal),))
    started = time.thread_time()
    conn.execute("BEGIN")
    conn.execute(f"INSERT INTO case_metrics {COPY[how]}")
    conn.execute("COMMIT")
    spent = time.thread_time() - started
    rows = conn.execute("SELECT * FROM case_metrics ORDER BY eval_id, run_index, metric_name").fetchall()
    conn.close()
    return spent, rows


def edges(n: int, seed: int = 1) -> list[tuple[float, str]]:
    """Doubles (every exponent, and scores in [0, 1)) whose repr lies more than 0.45 of a unit in
    the last place from them: near the edge of the interval that rounds to them."""
    rng = random.Random(seed)
    found = []
    for _ in range(n):
        if rng.random() < 0.5:
            x = rng.random()
        else:
            x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if not math.isfinite(x) or x == 0:
            continue
        r = repr(x)
        ulp = Fraction(math.nextafter(x, math.inf)) - Fraction(x)
        if abs(Fraction(r) - Fraction(x)) / ulp > Fraction(45, 100):
            found.append((x, r))
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--edges", type=int, default=300_000, help="random doubles drawn for the edge check")
    args = ap.parse_args()
    if not SNAP.is_file():
        sys.exit(f"{SNAP}: run `bench_journal_parts.py capture --cases 5000` first")
    with sqlite3.connect(SNAP) as snap:
        found: dict[int, list[tuple[Any, ...]]] = {}
        for told, *metric in snap.execute("SELECT told, run_index, metric_name, score, threshold, status "
                                          "FROM journal_metrics ORDER BY rowid"):
            found.setdefault(told, []).append(tuple(metric))
    verdicts = [found[t] for t in sorted(found)]
    spent: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for _ in range(args.repeat):
            copies = {}
            for how in COPY:
                spent.setdefault(f"write {how}", []).append(write(how, verdicts, folder / f"{how}.sqlite"))
                took, copies[how] = copy(how, folder / f"{how}.sqlite", folder)
                spent.setdefault(f"copy {how}", []).append(took)
            for how, rows in copies.items():
                same = rows == copies["rows"] and all(type(a) is type(b) for x, y in zip(rows, copies["rows"],
                                                                                      strict=True)
                                                      for a, b in zip(x, y, strict=True))
                assert same, f"the copy of {how} differs from the rows'"
    print(f"{len(verdicts)} verdicts, {sum(map(len, verdicts))} metric rows, {args.repeat} rounds, "
          f"load {os.getloadavg()[0]:.1f}: thread CPU, median (min), ms")
    for what, times in spent.items():
        print(f"  {what:14s} {statistics.median(times) * 1000:7.1f} ({min(times) * 1000:.1f})")
    values = edges(args.edges)
    conn = sqlite3.connect(":memory:")
    wrong = {"json_each": 0, "CAST": 0}
    for x, r in values:
        (j,) = conn.execute("SELECT value FROM json_each(?)", (f"[{r}]",)).fetchone()
        (c,) = conn.execute("SELECT CAST(? AS REAL)", (r,)).fetchone()
        wrong["json_each"] += j != x
        wrong["CAST"] += c != x
    print(f"SQLite {sqlite3.sqlite_version}: of {len(values)} edge doubles' reprs, read back other than "
          f"Python's double: json_each {wrong['json_each']}, CAST {wrong['CAST']}")


if __name__ == "__main__":
    main()
