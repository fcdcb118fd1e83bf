"""Two runs' case summaries side by side, a case at a time, from the history database
(`case_pairs`) or from two result files through their case indexes (`file_pairs`): what
`compare --fail_on case_regression` compares, without holding either run's summaries (a
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

from agenteval.errors import DataError
from agenteval.schema import CaseSummary
from agenteval.store.case_index import CaseIndex, Unindexed, case_index
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


def file_pairs(path_a: str | Path, path_b: str | Path) -> Iterator[Pair]:
    """`case_pairs` of two result files, their summaries read by their case indexes
    (`store.case_index`; a document's last summary of an eval id, as a dict of its cases keeps
    it). `store.case_index.Unindexed` (at once) when either has no index."""
    return _file_pairs(case_index(path_a), case_index(path_b))


def _file_pairs(a: CaseIndex, b: CaseIndex) -> Iterator[Pair]:
    before = {s.eval_id: s for s in a.summaries}
    after = {s.eval_id: s for s in b.summaries}
    with open(a.path, "rb") as fa, open(b.path, "rb") as fb:
        for eval_id in dict.fromkeys([*after, *before]):
            yield eval_id, a.summary_at(fa, before.get(eval_id)), b.summary_at(fb, after.get(eval_id))


def summary_pairs(ref_a: str, ref_b: str, root: str | Path) -> Iterator[Pair] | None:
    """The pairs of runs `ref_a` and `ref_b` (two stored runs of the store at `root`, or two
    result files), read a case at a time; None when they cannot be read so (a file against a
    stored run, a file without a case index, a missing file): read their summaries whole then,
    which says what is wrong, if anything."""
    if not is_path(ref_a) and not is_path(ref_b):
        return case_pairs(RunStore(root), ref_a, ref_b)
    if not (is_path(ref_a) and is_path(ref_b) and Path(ref_a).is_file() and Path(ref_b).is_file()):
        return None
    try:
        return file_pairs(ref_a, ref_b)
    except (Unindexed, DataError):
        return None


__all__ = ["Pair", "case_pairs", "file_pairs", "summary_pairs"]
