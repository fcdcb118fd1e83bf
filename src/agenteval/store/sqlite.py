"""Opening the store's SQLite databases so that several processes can share them."""

from __future__ import annotations

import sqlite3
import time


def use_wal(conn: sqlite3.Connection, busy_seconds: float = 60.0) -> None:
    """Waits up to `busy_seconds` for a busy database, and puts it in WAL mode (readers never
    block the writer) only when it is not already: switching the mode does not wait for a busy
    database, it fails, so a process that finds another switching it tries again."""
    conn.execute(f"PRAGMA busy_timeout = {int(busy_seconds * 1000)}")
    for attempt in range(50):
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError:
            if attempt == 49:
                raise
            time.sleep(0.1)


__all__ = ["use_wal"]
