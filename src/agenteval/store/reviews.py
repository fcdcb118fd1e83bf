"""Human reviews of a run's verdicts, kept with the run in the history database (`reviews`).

A review is a person's agree / disagree, with a comment, on one case run's verdict (`target`
"": the case's verdict) or on one judged criterion of it (`target`: the criterion's name, e.g.
`safety_v1`; "the judge was wrong" is `disagree`), or on that criterion's verdict on one turn
(`safety_v1@1`: the invocation at index 1) or on one rubric of one turn
(`rubric_based_tool_use_quality_v1@0/r1`); see `ReviewTarget`. There is one review per (run,
case, run index, target); reviewing again replaces it. Reviews are keyed by the run's document id and
are kept when the run is recorded again (no foreign key: a replaced run keeps its reviews); a
review is saved only while its run is recorded, and goes when the run is deleted.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agenteval.errors import DataError
from agenteval.store.db import UnknownRun, history_db_path
from agenteval.store.sqlite import connect

Agreement = Literal["agree", "disagree"]
MAX_COMMENT = 4000

_TABLE = """CREATE TABLE IF NOT EXISTS reviews (
    run_id TEXT NOT NULL, eval_id TEXT NOT NULL, run_index INTEGER NOT NULL, target TEXT NOT NULL,
    agreement TEXT NOT NULL CHECK (agreement IN ('agree', 'disagree')), comment TEXT NOT NULL,
    reviewer TEXT, created REAL NOT NULL,
    PRIMARY KEY (run_id, eval_id, run_index, target)) WITHOUT ROWID"""


def _prepare(conn: sqlite3.Connection) -> None:
    conn.execute(_TABLE)


@dataclass(frozen=True)
class ReviewTarget:
    """What a review's `target` names: the case's verdict (`criterion` ""), a criterion's
    verdict, its verdict on one invocation (`invocation`, 0-based), or one rubric's (`item`)."""

    criterion: str
    invocation: int | None = None
    item: str | None = None

    def __str__(self) -> str:
        text = self.criterion
        if self.invocation is not None:
            text += f"@{self.invocation}"
            if self.item is not None:
                text += f"/{self.item}"
        return text

    @staticmethod
    def parse(target: str) -> ReviewTarget:
        """`criterion`, `criterion@<invocation>` or `criterion@<invocation>/<rubric id>` (criterion
        names have no `@`); DataError naming the field `target` when malformed."""
        criterion, at, rest = target.partition("@")
        if not at:
            return ReviewTarget(criterion)
        index, slash, item = rest.partition("/")
        if not criterion or not index.isdigit() or (slash and not item):
            raise DataError(None, "target", f"expected criterion, criterion@<turn index> or "
                            f"criterion@<turn index>/<rubric id>, got {target!r}")
        return ReviewTarget(criterion, int(index), item if slash else None)


@dataclass(frozen=True)
class Review:
    """One person's review of one verdict (see the module docstring)."""

    run_id: str
    eval_id: str
    run_index: int
    target: str
    agreement: Agreement
    comment: str = ""
    reviewer: str | None = None
    created: float = 0.0


class ReviewStore:
    """The reviews of one store root (beside its run database)."""

    def __init__(self, root: str | Path) -> None:
        self.path = history_db_path(root)

    @contextmanager
    def _conn(self, create: bool) -> Iterator[sqlite3.Connection | None]:
        with connect(self.path, create, _prepare, "the run database") as conn:
            yield conn

    def save(self, review: Review) -> Review:
        """Stores `review` (replacing the one on the same verdict) and returns it as stored.
        `UnknownRun` naming the run when the run history does not hold it: the run's presence
        is checked in the statement that inserts, so a review saved while its run is deleted
        (`store.deletion`, which deletes the run's reviews with it) is either deleted with the
        run or refused, never kept without it."""
        if review.agreement not in ("agree", "disagree"):
            raise DataError(None, "agreement", f"expected 'agree' or 'disagree', got {review.agreement!r}")
        if len(review.comment) > MAX_COMMENT:
            raise DataError(None, "comment", f"longer than {MAX_COMMENT} characters")
        stored = Review(review.run_id, review.eval_id, review.run_index, review.target, review.agreement,
                        review.comment, review.reviewer, time.time())
        saved = False
        with self._conn(False) as conn:
            # (a database without a `runs` table has recorded no run)
            if conn is not None and conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                                                 "AND name = 'runs'").fetchone():
                saved = conn.execute(
                    "INSERT OR REPLACE INTO reviews SELECT ?, ?, ?, ?, ?, ?, ?, ? "
                    "WHERE EXISTS (SELECT 1 FROM runs WHERE run_id = ?)",
                    (stored.run_id, stored.eval_id, stored.run_index, stored.target, stored.agreement,
                     stored.comment, stored.reviewer, stored.created, stored.run_id)).rowcount > 0
        if not saved:
            raise UnknownRun(self.path, "run_id", f"no run {review.run_id!r} in the run history "
                             "(deleted?): the review was not saved")
        return stored

    def delete(self, run_id: str, eval_id: str, run_index: int, target: str) -> bool:
        """Removes one review; whether there was one."""
        with self._conn(False) as conn:
            if conn is None:
                return False
            cur = conn.execute("DELETE FROM reviews WHERE run_id = ? AND eval_id = ? AND run_index = ? "
                               "AND target = ?", (run_id, eval_id, run_index, target))
            return cur.rowcount > 0

    def reviews(self, run_id: str | None = None, eval_id: str | None = None) -> list[Review]:
        """The reviews of one run (or every run), of one case if given, oldest first."""
        where, args = [], []
        if run_id is not None:
            where.append("run_id = ?")
            args.append(run_id)
        if eval_id is not None:
            where.append("eval_id = ?")
            args.append(eval_id)
        sql = ("SELECT * FROM reviews" + (" WHERE " + " AND ".join(where) if where else "")
               + " ORDER BY created")
        with self._conn(False) as conn:
            if conn is None:
                return []
            return [Review(*row) for row in conn.execute(sql, args)]


__all__ = ["MAX_COMMENT", "Agreement", "Review", "ReviewStore", "ReviewTarget"]
