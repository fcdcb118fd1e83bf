"""The journal writer's inserts: a batch's rows several per statement, the run's id bound once a
statement (`?1`), within SQLite's oldest limit on bound values."""

import sqlite3
import sys
from pathlib import Path

import pytest

from agenteval.store import journal_writer


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 16, 63, 64, 65, 64 + 16 + 4 + 3, 200])
@pytest.mark.parametrize("shared", [(), ("run",)])
def test_rows_inserted_many_per_statement_are_the_rows_one_per_statement_gives(
        n: int, shared: tuple[str, ...]) -> None:
    """The writer inserts a batch's rows several per statement (`journal_writer._insert`): the
    same rows, in the same order, floats exactly as bound, and a key given twice in one batch
    upserted as consecutive single inserts would; a value `shared` by every row (the run's id,
    `?1`) is in each of them."""


    run = "?1" if shared else "'-'"
    sql = f"INSERT INTO t (r, k, v, x) VALUES ({run}, ?, ?, 'c') ON CONFLICT (k) DO UPDATE SET v = excluded.v"
    rows = [(f"k{(n - i) % max(1, n - 2)}", 0.1 * i + 1e-17 * i)
            for i in range(n)]  # two keys twice
    tables = []
    one_by_one = sql.replace("?1", "?")
    for insert in (lambda c, s, r: journal_writer._insert(c, s, r, shared),
                   lambda c, s, r: c.executemany(one_by_one, [(*shared, *row) for row in r])):
        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE TABLE t (r TEXT, k TEXT PRIMARY KEY, v REAL, x TEXT)")
        insert(conn, sql, rows)
        tables.append(conn.execute("SELECT rowid, r, k, v, x FROM t ORDER BY rowid").fetchall())
        conn.close()
    assert tables[0] == tables[1] and len(tables[0]) == len({k for k, _ in rows})
    assert {v for *_, v, _ in tables[0]} <= {v for _, v in rows}
    assert {r for _, r, *_ in tables[0]} <= {shared[0] if shared else "-"}


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Connection.setlimit is Python 3.11's")
def test_rows_inserted_many_per_statement_stay_within_sqlites_oldest_variable_limit() -> None:
    """A statement binds at most 999 values (SQLite before 3.32, which some Pythons link): the
    verdicts' 17 columns would bind 1,088 at 64 rows a statement."""


    columns = [f"c{i}" for i in range(17)]
    conn = sqlite3.connect(":memory:")
    conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
    conn.execute(f"CREATE TABLE t ({', '.join(columns)})")
    sql = f"INSERT INTO t ({', '.join(columns)}) VALUES ({', '.join('?' * 17)})"
    rows = [tuple(range(i, i + 17)) for i in range(200)]
    journal_writer._insert(conn, sql, rows)
    # (The run's id shared, `?1`: 16 values a row and one a statement, 1,025 at 64 rows.)
    journal_writer._insert(conn, sql.replace("(?", "(?1", 1), [r[1:] for r in rows], ("run",))
    assert conn.execute("SELECT * FROM t ORDER BY rowid").fetchall() == rows + [("run", *r[1:]) for r in rows]
    conn.close()




def test_the_runs_update_time_is_set_by_a_flush_not_by_every_timed_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit the flush window makes sets the run's `updated` at most once per `STAMP_SECONDS`
    (a statement and a WAL page each time); a commit a `flush` asks for always sets it."""
    import contextlib
    import time

    from agenteval.store.journal import Journal

    monkeypatch.setattr(journal_writer, "FLUSH_SECONDS", 0.01)
    monkeypatch.setattr(journal_writer, "COMMIT_ROWS", 1)  # (a commit at every batch)
    monkeypatch.setattr(journal_writer, "STAMP_SECONDS", 3600.0, raising=False)
    root = tmp_path
    path = root / "journal.sqlite"
    writer = journal_writer.Writer(path, Journal._prepare, "r", root / "r.rows")
    writer.do(lambda conn: conn.execute(
        "INSERT INTO journal_runs VALUES ('r', 0, 0, 'running', 0, '', '', 1, '{}')"))

    def row(i: int) -> journal_writer.Row:
        return ("r", "s", f"c{i}", 0, 1, 0, b'{\n  "eval_id": "c%d"\n}' % i, "")

    def read(sql: str) -> float:
        with contextlib.closing(sqlite3.connect(path)) as conn:
            return float(conn.execute(sql).fetchone()[0])

    def committed(n: int) -> None:  # (the flush window's own commit, not a flush's)
        for _ in range(2000):
            with contextlib.suppress(sqlite3.OperationalError):  # (no table yet)
                if read("SELECT count(*) FROM journal_cases") == n:
                    return
            time.sleep(0.005)
        raise AssertionError(f"{n} rows not committed")

    writer.put([row(0)])
    committed(1)
    assert read("SELECT updated FROM journal_runs") > 0  # (the writer's first commit sets it)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE journal_runs SET updated = 0")
        conn.commit()
    writer.put([row(1)])
    committed(2)
    assert read("SELECT updated FROM journal_runs") == 0
    writer.put([row(2)])
    writer.flush()
    assert read("SELECT updated FROM journal_runs") > 0
    writer.close()
