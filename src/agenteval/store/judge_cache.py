"""An on-disk cache of judge replies in SQLite, shared by runs that use the same store."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from agenteval.store.sqlite import use_wal


class JudgeCacheDB:
    """Key → reply text. Safe to share between the tasks of one process (one connection, a lock)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    @property
    def _db(self) -> sqlite3.Connection:
        # Opened on first use, so a run that never asks a judge leaves no file behind.
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, check_same_thread=False)
            use_wal(self._conn)
            self._conn.execute("CREATE TABLE IF NOT EXISTS judge_cache "
                               "(key TEXT PRIMARY KEY, reply TEXT NOT NULL)")
            self._conn.commit()
        return self._conn

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT reply FROM judge_cache WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, value: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO judge_cache (key, reply) VALUES (?, ?)", (key, value))
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def judge_cache_path(root: str | Path) -> Path:
    """Where a store root keeps its judge cache."""
    return Path(root) / ".agenteval" / "judge_cache.sqlite"
