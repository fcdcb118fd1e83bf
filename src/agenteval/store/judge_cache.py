"""An on-disk cache of judge replies in SQLite, shared by runs that use the same store."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from agenteval.errors import DataError
from agenteval.store.sqlite import use_wal

T = TypeVar("T")


class JudgeCacheDB:
    """Key → reply text. Safe to share between the tasks of one process (one connection, a lock)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def check(self) -> None:
        """A DataError naming the file when an existing cache cannot be used (not a database,
        unreadable): called before a judged run, so that no case is judged against it."""
        if self.path.exists():
            self._guard(lambda: self._db.execute("SELECT count(*) FROM judge_cache LIMIT 1").fetchone())

    @property
    def _db(self) -> sqlite3.Connection:
        # Opened on first use, so a run that never asks a judge leaves no file behind.
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False)
            try:
                use_wal(conn)
                conn.execute("CREATE TABLE IF NOT EXISTS judge_cache "
                             "(key TEXT PRIMARY KEY, reply TEXT NOT NULL)")
                conn.commit()
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def _guard(self, op: Callable[[], T]) -> T:
        """`op()` under the lock; a database error is a DataError naming the file."""
        with self._lock:
            try:
                return op()
            except (sqlite3.DatabaseError, OSError) as e:
                raise DataError(self.path, "", f"cannot use the judge cache: {e} (remove the file "
                                "to start a new cache, or run with --no_cache)") from None

    def get(self, key: str) -> str | None:
        row = self._guard(lambda: self._db.execute(
            "SELECT reply FROM judge_cache WHERE key = ?", (key,)).fetchone())
        return None if row is None else str(row[0])

    def put(self, key: str, value: str) -> None:
        def op() -> None:
            self._db.execute("INSERT OR REPLACE INTO judge_cache (key, reply) VALUES (?, ?)", (key, value))
            self._db.commit()
        self._guard(op)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def judge_cache_path(root: str | Path) -> Path:
    """Where a store root keeps its judge cache."""
    return Path(root) / ".agenteval" / "judge_cache.sqlite"
