"""Two stored runs compared case by case in SQLite, and their cases' summaries read by eval id.

`coded_cases` gives every case of the two runs, in the order `reporting.compare.compare` gives
them (the candidate's in its case order, then the baseline's that the candidate lacks, in the
baseline's order), with its verdict on either side and a code a criterion that the caller's SQL
rule gives (`reporting.compare.CRITERION_CODE`): one query, whose 50,000 rows are all that
reach Python for two 50,000-case runs (their summaries are 600,000 rows). `pairs_of` reads the
summaries of the cases to show, by eval id (each case's criteria in name order, as
`RunStore.summary` reads them).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from agenteval.schema import CaseSummary, EvalStatus
from agenteval.store.db import RunStore
from agenteval.store.sqlite import connect

Pair = tuple[str, CaseSummary | None, CaseSummary | None]  # eval id, baseline's, candidate's

_FIELDS = ("metric_name", "threshold", "runs", "scored_runs", "passed_runs", "mean", "std", "ci_low",
           "ci_high", "pass_at_k", "pass_pow_k", "eval_status", "reason")
_COLUMNS = ", ".join(f"s.{f}" for f in (*_FIELDS[:-2], "status", "reason"))


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


Coded = tuple[str, int | None, int | None, str]
"""A case of two runs compared in SQLite: its eval id, its verdict in the baseline and in the
candidate (an `EvalStatus` value; None where a run lacks the case), and a code a criterion."""

# Each gating criterion of a case on either side (informational ones are not compared), as
# columns `was`/`now` (1: that side has it), `was_status`, `was_mean`, `now_status`, `now_mean`,
# grouped once by case and criterion (both runs' rows in one sort: joining the two sides row by
# row made SQLite scan one side per row of the other).
_SIDES = ("SELECT 0 AS side, eval_id, metric_name, status, mean FROM {a}.case_summaries "
          "WHERE run_id = :run_a AND status != {informational} UNION ALL "
          "SELECT 1, eval_id, metric_name, status, mean FROM main.case_summaries "
          "WHERE run_id = :run_b AND status != {informational}")
_CRITERIA = ("SELECT eval_id, sum(side = 0) AS was, sum(side = 1) AS now, "
             "max(CASE WHEN side = 0 THEN status END) AS was_status, "
             "max(CASE WHEN side = 0 THEN mean END) AS was_mean, "
             "max(CASE WHEN side = 1 THEN status END) AS now_status, "
             "max(CASE WHEN side = 1 THEN mean END) AS now_mean FROM sides GROUP BY eval_id, metric_name")
_CODED = ("WITH sides AS ({sides}), criteria AS ({criteria}), "
          "codes AS (SELECT eval_id, group_concat({code}, '') AS codes FROM criteria GROUP BY eval_id) "
          "SELECT 0, b.position, b.eval_id, a.status, b.status, codes.codes FROM main.cases b "
          "LEFT JOIN {a}.cases a ON a.run_id = :run_a AND a.eval_id = b.eval_id "
          "LEFT JOIN codes ON codes.eval_id = b.eval_id WHERE b.run_id = :run_b "
          "UNION ALL "
          "SELECT 1, a.position, a.eval_id, a.status, NULL, codes.codes FROM {a}.cases a "
          "LEFT JOIN codes ON codes.eval_id = a.eval_id WHERE a.run_id = :run_a AND NOT EXISTS "
          "(SELECT 1 FROM main.cases b WHERE b.run_id = :run_b AND b.eval_id = a.eval_id) "
          "ORDER BY 1, 2, 3")
_INFORMATIONAL = int(EvalStatus.INFORMATIONAL)


def coded_cases(store_a: RunStore, run_a: str, store_b: RunStore, run_b: str, code: str,
                params: dict[str, object]) -> list[Coded]:
    """Every case of stored run `run_a` of `store_a` (baseline) and `run_b` of `store_b`
    (candidate) (their ids), in `compare`'s order (see the module docstring), with the
    one-character code the SQL expression `code` (its parameters `params`) gives each criterion
    gating in either run (over the columns `was`, `now`, `was_status`, `was_mean`, `now_status`,
    `now_mean`: see `_SIDES`), in no order. Computed by SQLite in one query (two stores'
    databases attached to one connection): only these rows reach Python."""
    with connect(store_b.path, False, lambda conn: None, "the run database") as conn:
        if conn is None:
            return []
        schema = "main"
        if store_a.path != store_b.path:
            if not store_a.path.is_file():
                return []
            conn.execute("ATTACH DATABASE ? AS baseline", (str(store_a.path),))
            schema = "baseline"
        sides = _SIDES.format(a=schema, informational=_INFORMATIONAL)
        query = _CODED.format(sides=sides, criteria=_CRITERIA, code=code, a=schema)
        rows = conn.execute(query, {**params, "run_a": run_a, "run_b": run_b})
        return [(eval_id, was, now, codes or "") for _, _, eval_id, was, now, codes in rows]


# At most this many eval ids are looked up at once (SQLite's limit of bound values, older builds).
MAX_LOOKUP = 500


def pairs_of(store_a: RunStore, run_a: str, store_b: RunStore, run_b: str, eval_ids: list[str]) -> list[Pair]:
    """(eval id, baseline's summary, candidate's summary) of each of `eval_ids`, in their order,
    of stored runs `run_a` of `store_a` and `run_b` of `store_b` (their ids); None where a run
    lacks the case. Reads those cases alone (`MAX_LOOKUP` at a time)."""
    a: dict[str, CaseSummary] = {}
    b: dict[str, CaseSummary] = {}
    for k in range(0, len(eval_ids), MAX_LOOKUP):
        chunk = eval_ids[k:k + MAX_LOOKUP]
        a.update(_summaries_of(store_a, run_a, chunk))
        b.update(_summaries_of(store_b, run_b, chunk))
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


__all__ = ["MAX_LOOKUP", "Coded", "Pair", "coded_cases", "pairs_of"]
