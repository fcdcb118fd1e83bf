"""The journal writer's inserts: a batch's rows several per statement, the run's id bound once a
statement (`?1`), within SQLite's oldest limit on bound values."""

import sqlite3
import sys

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


