"""Two stored runs' case summaries side by side, a case at a time, from the history database:
what `compare --fail_on case_regression` compares, without holding either run's summaries (a
50,000-case run's are 300,000 models, ≈ 600 MB).

The cases come in the order `reporting.compare.compare` gives them: the candidate's in its case
order, then the baseline's that the candidate lacks, in the baseline's order; each case's
criteria in name order, as `RunStore.summary` reads them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agenteval.schema import CaseSummary
from agenteval.store.db import RunStore
from agenteval.store.lookup import is_path
from agenteval.store.sqlite import connect

Pair = tuple[str, CaseSummary | None, CaseSummary | None]  # eval id, baseline's, candidate's

_FIELDS = ("metric_name", "threshold", "runs", "scored_runs", "passed_runs", "mean", "std", "ci_low",
           "ci_high", "pass_at_k", "pass_pow_k", "eval_status", "reason")
_COLUMNS = ", ".join(f"s.{f}" for f in (*_FIELDS[:-2], "status", "reason"))
# The candidate's cases (?2) in its order, with the baseline's (?1) case of the same eval id.
_CASES = ("SELECT b.eval_id, b.runs, b.status, a.runs, a.status FROM cases b LEFT JOIN cases a "
          "ON a.run_id = ?1 AND a.eval_id = b.eval_id WHERE b.run_id = ?2 ORDER BY b.position, b.eval_id")
# The summaries of run ?3's cases of those eval ids, in the same order.
_METRICS = (f"SELECT b.eval_id, {_COLUMNS} FROM cases b JOIN case_summaries s ON s.run_id = ?3 "
            "AND s.eval_id = b.eval_id WHERE b.run_id = ?2 ORDER BY b.position, b.eval_id, s.metric_name")
_ONLY_A = "NOT EXISTS (SELECT 1 FROM cases b WHERE b.run_id = ?2 AND b.eval_id = a.eval_id)"
_REMOVED = (f"SELECT a.eval_id, a.runs, a.status FROM cases a WHERE a.run_id = ?1 AND {_ONLY_A} "
            "ORDER BY a.position, a.eval_id")
_REMOVED_METRICS = (f"SELECT a.eval_id, {_COLUMNS} FROM cases a JOIN case_summaries s ON s.run_id = a.run_id "
                    f"AND s.eval_id = a.eval_id WHERE a.run_id = ?1 AND {_ONLY_A} "
                    "ORDER BY a.position, a.eval_id, s.metric_name")


class _Grouped:
    """A cursor of (eval_id, *summary fields) rows in case order, taken a case at a time."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self.cursor = cursor
        self.next: Any = cursor.fetchone()

    def take(self, eval_id: str) -> list[dict[str, Any]]:
        out = []
        while self.next is not None and self.next[0] == eval_id:
            out.append(dict(zip(_FIELDS, self.next[1:], strict=True)))
            self.next = self.cursor.fetchone()
        return out


def _summary(eval_id: str, runs: int, status: int, metrics: list[dict[str, Any]]) -> CaseSummary:
    return CaseSummary.model_validate({"eval_id": eval_id, "runs": runs, "final_eval_status": status,
                                       "metrics": metrics})


def case_pairs(store: RunStore, ref_a: str, ref_b: str) -> Iterator[Pair]:
    """(eval id, baseline's summary, candidate's summary) of every case of stored runs `ref_a`
    (baseline) and `ref_b` (candidate) (as `RunStore.resolve` takes them); None where a run
    lacks the case. Read a case at a time."""
    # (resolved first: a database of an older version is brought up to date)
    run_a, run_b = store.resolve(ref_a).run_id, store.resolve(ref_b).run_id
    with connect(store.path, False, lambda conn: None, "the run database") as conn:
        if conn is None:
            return
        ids = (run_a, run_b)
        cases = conn.execute(_CASES, ids)
        after = _Grouped(conn.execute(_METRICS, (*ids, run_b)))
        before = _Grouped(conn.execute(_METRICS, (*ids, run_a)))
        for eval_id, runs, status, runs_a, status_a in cases:
            told = before.take(eval_id)  # (taken whatever, so that the cursor keeps step)
            was = None if runs_a is None else _summary(eval_id, runs_a, status_a, told)
            yield eval_id, was, _summary(eval_id, runs, status, after.take(eval_id))
        removed = _Grouped(conn.execute(_REMOVED_METRICS, ids))
        for eval_id, runs, status in conn.execute(_REMOVED, ids):
            yield eval_id, _summary(eval_id, runs, status, removed.take(eval_id)), None


def stored_pairs(store_a: RunStore, ref_a: str, store_b: RunStore, ref_b: str) -> Iterator[Pair]:
    """`case_pairs` of run `ref_a` of `store_a` (baseline) and run `ref_b` of `store_b`
    (candidate), in the same order: a case at a time when both are in one store; else from
    both runs' summaries, read whole (two agents' histories are two databases)."""
    if store_a.path == store_b.path:
        yield from case_pairs(store_a, ref_a, ref_b)
        return
    before = {c.eval_id: c for c in store_a.summary(ref_a).summary}
    after = store_b.summary(ref_b).summary
    for case in after:
        yield case.eval_id, before.pop(case.eval_id, None), case
    for eval_id, case in before.items():  # (the baseline's the candidate lacks, in its order)
        yield eval_id, case, None


# At most this many eval ids are looked up at once (SQLite's limit of bound values, older builds).
MAX_LOOKUP = 500


def pairs_of(store_a: RunStore, run_a: str, store_b: RunStore, run_b: str, eval_ids: list[str]) -> list[Pair]:
    """(eval id, baseline's summary, candidate's summary) of each of `eval_ids` (at most
    `MAX_LOOKUP`), in their order, of stored runs `run_a` of `store_a` and `run_b` of `store_b`
    (their ids); None where a run lacks the case. Reads those cases alone."""
    if len(eval_ids) > MAX_LOOKUP:
        raise ValueError(f"at most {MAX_LOOKUP} eval ids at once")
    a, b = _summaries_of(store_a, run_a, eval_ids), _summaries_of(store_b, run_b, eval_ids)
    return [(i, a.get(i), b.get(i)) for i in eval_ids]


def _summaries_of(store: RunStore, run_id: str, eval_ids: list[str]) -> dict[str, CaseSummary]:
    marks = ", ".join("?" * len(eval_ids))
    with connect(store.path, False, lambda conn: None, "the run database") as conn:
        if conn is None or not eval_ids:
            return {}
        cases = conn.execute(f"SELECT eval_id, runs, status FROM cases WHERE run_id = ? "
                             f"AND eval_id IN ({marks})", (run_id, *eval_ids)).fetchall()
        metrics = _Grouped(conn.execute(
            f"SELECT s.eval_id, {_COLUMNS} FROM case_summaries s WHERE s.run_id = ? "
            f"AND s.eval_id IN ({marks}) "
            "ORDER BY s.eval_id, s.metric_name", (run_id, *eval_ids)))
        by_id = {}
        for eval_id, runs, status in sorted(cases):
            by_id[eval_id] = _summary(eval_id, runs, status, metrics.take(eval_id))
        return by_id


def summary_pairs(ref_a: str, ref_b: str, root: str | Path) -> Iterator[Pair] | None:
    """The pairs of runs `ref_a` and `ref_b` when both are stored runs of the store at `root`,
    read a case at a time; None for a result file: its summaries are read with its case runs,
    in the one pass `store.lookup.load_runs` makes. (Read again through its case index, two
    50,000-case files' summaries took 4.7x less memory but about 20 s more CPU: bench/README.md,
    session 35.)"""
    if is_path(ref_a) or is_path(ref_b):
        return None
    return case_pairs(RunStore(root), ref_a, ref_b)


__all__ = ["MAX_LOOKUP", "Pair", "case_pairs", "pairs_of", "stored_pairs", "summary_pairs"]
