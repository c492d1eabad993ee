"""Point statements by primary key over the wire (psycopg 3, prepared after the first runs):
INSERT … VALUES, SELECT/UPDATE/DELETE … WHERE pk = $1 take paths without DuckDB
(walsender_proxy/sql/engine.py); their answers must be the DuckDB path's, which the same
statements spelled so that no fast path applies (``WHERE pk + 0 = $1``) still take."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.proxy import ProxyServer

TS = dt.datetime(2024, 2, 29, 12, 30, tzinfo=dt.UTC)



@pytest.fixture
def conn(proxy: ProxyServer) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(proxy.dsn(), autocommit=True, prepare_threshold=1) as c:
        yield c


def fresh(conn: psycopg.Connection[Any], name: str, ddl: str) -> None:
    conn.execute(f"DROP TABLE IF EXISTS {name}")
    conn.execute(f"CREATE TABLE {name} {ddl}")


def test_fast_and_slow_paths_agree_for_every_cached_type(conn: psycopg.Connection[Any]) -> None:
    fresh(
        conn,
        "ty",
        "(id bigint PRIMARY KEY, i2 smallint, i4 int, f4 real, f8 double precision, b boolean, "
        "tx text, vc varchar(10), d date, ts timestamp, tz timestamptz, by bytea)",
    )
    row = (1, -2, 3, 1.5, -2.25, True, "héllo", "short", dt.date(2024, 2, 29), TS.replace(tzinfo=None), TS, b"\x00\xff")
    conn.execute("INSERT INTO ty VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", row)
    conn.execute("INSERT INTO ty (id) VALUES (%s)", (2,))  # NULLs
    for binary in (False, True):
        for k in (1, 2, 3):
            for _ in range(3):  # prepared: the later runs take the fast path
                fast = conn.execute("SELECT * FROM ty WHERE id = %s", (k,), binary=binary)
                slow = conn.execute("SELECT * FROM ty WHERE id + 0 = %s", (k,), binary=binary)
                assert [d[:2] for d in fast.description] == [d[:2] for d in slow.description]
                assert fast.fetchall() == slow.fetchall()
            got = conn.execute("SELECT tx, id AS ident, d FROM ty WHERE ty.id = %s", (k,), binary=binary)
            want = conn.execute("SELECT tx, id AS ident, d FROM ty WHERE id + 0 = %s", (k,), binary=binary)
            assert [d.name for d in got.description] == ["tx", "ident", "d"]
            assert got.fetchall() == want.fetchall()
    assert conn.execute("SELECT * FROM ty WHERE id = 1").fetchone() == row  # literal key


def test_update_and_delete_by_key(conn: psycopg.Connection[Any]) -> None:
    fresh(conn, "u", "(id bigint PRIMARY KEY, a int NOT NULL, t text)")
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO u VALUES (%s, %s, %s)", [(i, i, f"r{i}") for i in range(10)])
    for _ in range(5):
        assert conn.execute("UPDATE u SET a = a + 1 WHERE id = %s", (3,)).rowcount == 1
    assert conn.execute("UPDATE u SET a = a * 2, t = %s WHERE id = %s", ("x", 4)).rowcount == 1
    assert conn.execute("UPDATE u SET a = 1 WHERE id = %s", (99,)).rowcount == 0
    assert conn.execute("DELETE FROM u WHERE id = %s", (5,)).rowcount == 1
    assert conn.execute("DELETE FROM u WHERE id = %s", (5,)).rowcount == 0
    rows = conn.execute("SELECT id, a, t FROM u ORDER BY id").fetchall()
    assert rows[3] == (3, 8, "r3") and rows[4] == (4, 8, "x") and 5 not in [r[0] for r in rows]
    with pytest.raises(psycopg.errors.NumericValueOutOfRange):
        conn.execute("UPDATE u SET a = a + 2147483647 WHERE id = %s", (3,))
    with pytest.raises(psycopg.errors.NotNullViolation):
        conn.execute("UPDATE u SET a = NULL WHERE id = %s", (3,))
    with pytest.raises(psycopg.errors.UniqueViolation) as ei:
        conn.execute("UPDATE u SET id = 4 WHERE id = %s", (3,))
    assert ei.value.diag.message_detail == "Key (id)=(4) already exists."
    assert conn.execute("UPDATE u SET a = 0 WHERE id = %s RETURNING a, t", (3,)).fetchall() == [(0, "r3")]
    assert conn.execute("SELECT a FROM u WHERE id = %s", (3,)).fetchone() == (0,)


def test_snapshots_and_own_writes(proxy: ProxyServer, conn: psycopg.Connection[Any]) -> None:
    fresh(conn, "s", "(id int PRIMARY KEY, v text)")
    conn.execute("INSERT INTO s VALUES (1, 'old'), (2, 'two')")
    with psycopg.connect(proxy.dsn(), prepare_threshold=1, autocommit=True) as rr:
        rr.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        assert rr.execute("SELECT v FROM s WHERE id = %s", (1,)).fetchone() == ("old",)
        conn.execute("UPDATE s SET v = 'new' WHERE id = %s", (1,))
        conn.execute("DELETE FROM s WHERE id = %s", (2,))
        conn.execute("INSERT INTO s VALUES (%s, %s)", (3, "three"))
        for _ in range(3):  # its snapshot, not the newest state
            assert rr.execute("SELECT v FROM s WHERE id = %s", (1,)).fetchone() == ("old",)
            assert rr.execute("SELECT v FROM s WHERE id = %s", (2,)).fetchone() == ("two",)
            assert rr.execute("SELECT v FROM s WHERE id = %s", (3,)).fetchone() is None
        with pytest.raises(psycopg.errors.SerializationFailure):
            rr.execute("UPDATE s SET v = 'mine' WHERE id = %s", (1,))
        rr.execute("ROLLBACK")
    with psycopg.connect(proxy.dsn(), prepare_threshold=1) as w:
        w.execute("UPDATE s SET v = %s WHERE id = %s", ("pending", 1))
        assert w.execute("SELECT v FROM s WHERE id = %s", (1,)).fetchone() == ("pending",)
        w.execute("DELETE FROM s WHERE id = %s", (3,))
        assert w.execute("SELECT v FROM s WHERE id = %s", (3,)).fetchone() is None
        # another session still sees the committed state, and cannot write the held row
        assert conn.execute("SELECT v FROM s WHERE id = %s", (1,)).fetchone() == ("new",)
        with pytest.raises(psycopg.errors.SerializationFailure):
            conn.execute("UPDATE s SET v = 'other' WHERE id = %s", (1,))
        with pytest.raises(psycopg.errors.SerializationFailure):
            conn.execute("DELETE FROM s WHERE id = %s", (3,))
        w.commit()
    assert conn.execute("SELECT id, v FROM s ORDER BY id").fetchall() == [(1, "pending")]


def test_insert_values_fast_path_keeps_errors_and_conversions(conn: psycopg.Connection[Any]) -> None:
    fresh(conn, "iv", "(id int PRIMARY KEY, d date, n numeric(6,2), a int[], t varchar(3))")
    conn.execute("INSERT INTO iv VALUES (%s, %s, %s, %s, %s)", (1, dt.date(2024, 1, 2), None, [1, 2], "abc"))
    conn.execute("INSERT INTO iv VALUES (2, '2024-01-03', '1.5', '{3,4}', 'x')")  # untyped literals
    conn.execute("INSERT INTO iv (id) VALUES (%s)", (3,))
    conn.execute("INSERT INTO iv VALUES (%s)", (4,))
    with pytest.raises(psycopg.errors.UniqueViolation) as ei:
        conn.execute("INSERT INTO iv (id) VALUES (%s)", (1,))
    assert str(ei.value).startswith('duplicate key value violates unique constraint "iv_pkey"')
    with pytest.raises(psycopg.errors.StringDataRightTruncation):
        conn.execute("INSERT INTO iv (id, t) VALUES (%s, %s)", (5, "toolong"))
    with pytest.raises(psycopg.Error):
        conn.execute("INSERT INTO iv (id) VALUES (%s)", (3_000_000_000,))
    with pytest.raises(psycopg.errors.NotNullViolation):
        conn.execute("INSERT INTO iv (id) VALUES (%s)", (None,))
    assert conn.execute("SELECT id, d, n, a, t FROM iv ORDER BY id").fetchall() == [
        (1, dt.date(2024, 1, 2), None, [1, 2], "abc"),
        (2, dt.date(2024, 1, 3), pytest.approx(1.5), [3, 4], "x"),
        (3, None, None, None, None),
        (4, None, None, None, None),
    ]


def test_concurrent_inserts_of_one_key_from_many_sessions(proxy: ProxyServer) -> None:
    import threading

    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        fresh(c, "ck", "(id bigint PRIMARY KEY, who int)")
    outcomes: list[str] = []

    def worker(who: int) -> None:
        with psycopg.connect(proxy.dsn(), autocommit=True) as c:
            for k in range(50):
                try:
                    c.execute("INSERT INTO ck VALUES (%s, %s)", (k, who))
                    outcomes.append("ok")
                except psycopg.errors.UniqueViolation:
                    outcomes.append("dup")

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("ok") == 50 and outcomes.count("dup") == 150
    with psycopg.connect(proxy.dsn()) as c:
        assert c.execute("SELECT count(*), count(DISTINCT id) FROM ck").fetchone() == (50, 50)
