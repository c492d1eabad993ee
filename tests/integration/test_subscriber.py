"""A stock PostgreSQL 15 subscriber against the proxy: initial copy, then the live stream,
then a table added to the publication — compared row for row, not by counts."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator

import psycopg
import pytest

from tests.pgcluster import PgCluster
from tests.proxy import ProxyServer

_n = itertools.count(1)


@pytest.fixture(scope="module")
def proxy() -> Iterator[ProxyServer]:
    with ProxyServer(wal_sender_timeout=60.0) as p:
        yield p


def rows(dsn: str, table: str, key: str = "id") -> list[tuple]:
    with psycopg.connect(dsn) as c:
        return c.execute(f"SELECT * FROM {table} ORDER BY {key}").fetchall()


def wait_identical(proxy_dsn: str, sub_dsn: str, tables: list[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        diffs = [t for t in tables if rows(proxy_dsn, t) != rows(sub_dsn, t)]
        if not diffs:
            return
        if time.monotonic() > deadline:
            t = diffs[0]
            raise AssertionError(f"{t} differs:\nproxy: {rows(proxy_dsn, t)[:5]}\nsub:   {rows(sub_dsn, t)[:5]}")
        time.sleep(0.3)


def wait_ready(sub_dsn: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with psycopg.connect(sub_dsn) as c:
            states = [r[0] for r in c.execute("SELECT srsubstate FROM pg_subscription_rel").fetchall()]
        if states and all(s == "r" for s in states):
            return
        time.sleep(0.3)
    raise AssertionError(f"tables not ready: {states}")


DDL = """
CREATE TABLE t1 (id int PRIMARY KEY, v text, n numeric(10,2), ts timestamptz, tags text[], b bytea, j jsonb);
CREATE TABLE t2 (id bigint PRIMARY KEY, flag boolean, d date);
"""


def test_seed_self_test(proxy: ProxyServer, pg15: PgCluster) -> None:
    """Seed 000 §4.8: copy, writes, a table added with REFRESH PUBLICATION, more writes."""
    db = f"sub{next(_n)}"
    pg15.psql(f"CREATE DATABASE {db}")
    sub = pg15.dsn(db)
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(DDL)
        c.execute("CREATE TABLE t3 (id int PRIMARY KEY, v text)")
        c.execute(
            "INSERT INTO t1 SELECT i, 'v' || i, i / 4.0, '2024-01-01'::timestamptz + i * interval '1 hour', "
            "ARRAY['a', 'b'], '\\x00ff'::bytea, '{\"k\": 1}'::jsonb FROM generate_series(1, 500) AS g(i)"
        )
        c.execute("INSERT INTO t2 SELECT i, i % 2 = 0, (DATE '2024-01-01' + i * interval '1 day')::date FROM generate_series(1, 300) AS g(i)")
        c.execute("INSERT INTO t3 VALUES (1, 'late')")
        c.execute("CREATE PUBLICATION p FOR TABLE t1, t2")
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute(DDL)
        c.execute("CREATE TABLE t3 (id int PRIMARY KEY, v text)")
        c.execute(f"CREATE SUBSCRIPTION s CONNECTION 'host=127.0.0.1 port={proxy.port} user=postgres dbname=postgres' PUBLICATION p")
    wait_ready(sub)
    wait_identical(proxy.dsn(), sub, ["t1", "t2"])

    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("INSERT INTO t1 (id, v) VALUES (1001, 'new'), (1002, 'newer')")
        c.execute("UPDATE t1 SET v = 'changed', n = n + 1 WHERE id <= 10")
        c.execute("DELETE FROM t2 WHERE id > 250")
        with c.transaction():
            c.execute("INSERT INTO t2 VALUES (9999, true, '2030-01-01')")
            c.execute("UPDATE t2 SET flag = NOT flag WHERE id = 1")
    wait_identical(proxy.dsn(), sub, ["t1", "t2"])

    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("ALTER PUBLICATION p ADD TABLE t3")
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("ALTER SUBSCRIPTION s REFRESH PUBLICATION")
    wait_ready(sub)
    wait_identical(proxy.dsn(), sub, ["t1", "t2", "t3"])

    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("INSERT INTO t3 VALUES (2, 'after refresh')")
        c.execute("INSERT INTO t1 (id, v) VALUES (2001, 'x')")
    wait_identical(proxy.dsn(), sub, ["t1", "t2", "t3"])

    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("DROP SUBSCRIPTION s")
    with psycopg.connect(proxy.dsn()) as c:
        left = c.execute("SELECT slot_name FROM pg_replication_slots").fetchall()
    assert left == [], left
