"""Opening the store's SQLite databases so that several processes can share them."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from agenteval.errors import DataError


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




@contextmanager
def connect(path: Path, create: bool, prepare: Callable[[sqlite3.Connection], None],
            what: str) -> Iterator[sqlite3.Connection | None]:
    """A connection to the database at `path` (autocommit, WAL, `prepare` run first), or None
    when it does not exist and `create` is false; a database that cannot be used is a
    DataError naming it and `what` it is."""
    if not create and not path.is_file():
        if path.exists():  # a folder there: not "no database yet"
            raise DataError(path, "", f"cannot use {what}: not a file")
        yield None
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with closing(sqlite3.connect(path, timeout=60, isolation_level=None)) as conn:
            use_wal(conn)
            prepare(conn)
            yield conn
    except sqlite3.DatabaseError as e:
        if isinstance(e, sqlite3.IntegrityError):
            raise
        raise DataError(path, "", f"cannot use {what}: {e}") from None


def check_readable(path: Path, what: str) -> None:
    """The DataError `connect` would raise when the database at `path` exists and SQLite cannot
    read its schema (not a database, damaged, busy beyond the timeout), found by reading only:
    no write, no fsync, nothing created."""
    if not path.is_file():
        return
    try:
        with closing(sqlite3.connect(path, timeout=60, isolation_level=None)) as conn:
            conn.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.DatabaseError as e:
        raise DataError(path, "", f"cannot use {what}: {e}") from None


__all__ = ["check_readable", "connect", "hold_wal", "let_wal_go", "use_wal", "wal_holder"]


_held: dict[Path, sqlite3.Connection] = {}  # `hold_wal`'s, by the database's absolute path


def hold_wal(path: Path) -> None:
    """Keeps a connection to the database at `path` open (nothing when there is none, or one is
    kept already) until `let_wal_go`, so that no other connection's close merges its WAL into
    the file: SQLite's last connection to close does, with two syncs. A killed run leaves the
    history's WAL unmerged (its stages: 4 MB at 10,000 trivial cases), and a resume's first
    look-up of the history then merged it before the first case (0.06-0.1 s of wall,
    bench/README.md, session 41). Kept, it is merged by the run's stages as the WAL grows, or
    by the recording's close, beside the run."""
    key = path.absolute()
    if key not in _held and (conn := wal_holder(path)) is not None:
        _held[key] = conn


def wal_holder(path: Path) -> sqlite3.Connection | None:
    """A connection to the database at `path` that has read it, and so holds its WAL: while it
    is open, no other connection's close merges the WAL into the file. None when there is no
    database there, or it cannot be read (its next use names the problem)."""
    if not path.is_file():
        return None
    conn = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
    try:
        use_wal(conn)
        # (A connection holds the WAL's index, and so keeps it, once it has read.)
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.DatabaseError:
        conn.close()
        return None
    return conn


def let_wal_go(path: Path) -> sqlite3.Connection | None:
    """The connection `hold_wal` keeps to the database at `path`, no longer kept (None: none
    is): the caller closes it, where it may wait (its close merges the WAL if it is the last)."""
    return _held.pop(path.absolute(), None)
