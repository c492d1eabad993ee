"""PostgreSQL's own subscription tests (``src/test/subscription/t/`` of its source),
re-expressed with the proxy as the publisher and a real PostgreSQL 15 subscriber: each
test follows one file's scenario (what it checks, not its code), and at every step the
subscriber's tables are compared in full with what the file expects and with the
publisher's."""

from __future__ import annotations

import time
from collections.abc import Callable

import psycopg

from tests.integration.test_subscriber import new_sub_db, subscribe, wait_ready
from tests.pgcluster import PgCluster
from tests.proxy import ProxyServer


def _one(dsn: str, sql: str) -> tuple[object, ...]:
    with psycopg.connect(dsn, autocommit=True) as c:
        return c.execute(sql).fetchone()  # type: ignore[return-value]


def _run(dsn: str, *statements: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as c:
        for sql in statements:
            c.execute(sql)


def wait_for_catchup(proxy: ProxyServer, subscription: str, timeout: float = 60) -> None:
    """PostgresNode's wait_for_catchup: the subscription's walsender has the publisher's
    current position replayed (pg_stat_replication, by application_name)."""
    lsn = _one(proxy.dsn(), "SELECT pg_current_wal_lsn()")[0]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = _one(
            proxy.dsn(),
            f"SELECT count(*) FILTER (WHERE replay_lsn >= '{lsn}'::pg_lsn) FROM pg_stat_replication WHERE application_name = '{subscription}'",
        )
        if row[0]:
            return
        time.sleep(0.2)
    raise AssertionError(f"{subscription} did not catch up to {lsn}")


def _wait(check: Callable[[], object], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.2)


def test_010_truncate(proxy: ProxyServer, pg15: PgCluster) -> None:
    """010_truncate: TRUNCATE replicated (and a subscriber's sequence not restarted by it,
    restarted by RESTART IDENTITY), not replicated by a publication without the truncate
    operation until ALTER PUBLICATION adds it, tables connected by a foreign key truncated
    together, a TRUNCATE of published and unpublished tables, and one table in two
    subscriptions."""
    pub = proxy.dsn()
    sub = new_sub_db(pg15)
    for dsn in (pub, sub):
        _run(
            dsn,
            "CREATE TABLE tab1 (a int PRIMARY KEY)",
            "CREATE TABLE tab2 (a int PRIMARY KEY)",
            "CREATE TABLE tab3 (a int PRIMARY KEY)",
            "CREATE TABLE tab4 (x int PRIMARY KEY, y int REFERENCES tab3)",
        )
    _run(sub, "CREATE SEQUENCE seq1 OWNED BY tab1.a", "ALTER SEQUENCE seq1 START 101")
    _run(
        pub,
        "CREATE PUBLICATION pub1 FOR TABLE tab1",
        "CREATE PUBLICATION pub2 FOR TABLE tab2 WITH (publish = insert)",
        "CREATE PUBLICATION pub3 FOR TABLE tab3, tab4",
    )
    subscribe(sub, proxy, "sub1", "pub1")
    subscribe(sub, proxy, "sub2", "pub2")
    subscribe(sub, proxy, "sub3", "pub3")
    wait_ready(sub)
    count = "SELECT count(*), min(a), max(a) FROM {}"

    _run(sub, "INSERT INTO tab1 VALUES (1), (2), (3)")
    wait_for_catchup(proxy, "sub1")
    _run(pub, "TRUNCATE tab1")
    wait_for_catchup(proxy, "sub1")
    assert _one(sub, count.format("tab1")) == (0, None, None)  # truncate replicated
    assert _one(sub, "SELECT nextval('seq1')") == (1,)  # sequence not restarted

    _run(pub, "TRUNCATE tab1 RESTART IDENTITY")
    wait_for_catchup(proxy, "sub1")
    assert _one(sub, "SELECT nextval('seq1')") == (101,)  # truncate restarted identities

    _run(sub, "INSERT INTO tab2 VALUES (1), (2), (3)")
    _run(pub, "TRUNCATE tab2")
    wait_for_catchup(proxy, "sub2")
    assert _one(sub, count.format("tab2")) == (3, 1, 3)  # truncate not replicated
    _run(pub, "ALTER PUBLICATION pub2 SET (publish = 'insert, truncate')")
    _run(pub, "TRUNCATE tab2")
    wait_for_catchup(proxy, "sub2")
    assert _one(sub, count.format("tab2")) == (0, None, None)  # replicated after the change

    # tables connected by a foreign key: the publisher refuses one alone, takes both
    _run(sub, "INSERT INTO tab3 VALUES (1), (2), (3)", "INSERT INTO tab4 VALUES (11, 1), (111, 1), (22, 2)")
    _run(pub, "INSERT INTO tab3 VALUES (7)", "INSERT INTO tab4 VALUES (77, 7)")
    with psycopg.connect(pub, autocommit=True) as c:
        try:
            c.execute("TRUNCATE tab3")
            raise AssertionError("TRUNCATE of a referenced table alone was taken")
        except psycopg.errors.FeatureNotSupported as e:
            assert e.diag.message_detail == 'Table "tab4" references "tab3".'
    _run(pub, "TRUNCATE tab3, tab4")
    wait_for_catchup(proxy, "sub3")
    assert _one(sub, count.format("tab3")) == (0, None, None)
    assert _one(sub, "SELECT count(*), min(x), max(x) FROM tab4") == (0, None, None)

    # TRUNCATE … CASCADE reaches the referencing table, and the subscriber with it
    _run(pub, "INSERT INTO tab3 VALUES (5)", "INSERT INTO tab4 VALUES (55, 5)")
    wait_for_catchup(proxy, "sub3")
    assert _one(sub, "SELECT count(*) FROM tab4") == (1,)
    _run(pub, "TRUNCATE tab3 CASCADE")
    wait_for_catchup(proxy, "sub3")
    assert _one(sub, "SELECT count(*) FROM tab4") == (0,)

    # some of the truncated tables are not published
    _run(sub, "DROP SUBSCRIPTION sub2")
    _run(pub, "DROP PUBLICATION pub2")
    _run(sub, "INSERT INTO tab1 VALUES (1), (2), (3)", "INSERT INTO tab2 VALUES (1), (2), (3)")
    _run(pub, "TRUNCATE tab1, tab2")
    wait_for_catchup(proxy, "sub1")
    assert _one(sub, count.format("tab1")) == (0, None, None)
    assert _one(sub, count.format("tab2")) == (3, 1, 3)

    # one table, two subscriptions
    _run(pub, "CREATE TABLE tab5 (a int)", "CREATE PUBLICATION pub5 FOR TABLE tab5")
    _run(sub, "CREATE TABLE tab5 (a int)")
    subscribe(sub, proxy, "sub5_1", "pub5")
    subscribe(sub, proxy, "sub5_2", "pub5")
    wait_ready(sub)
    _run(pub, "INSERT INTO tab5 VALUES (1), (2), (3)")
    wait_for_catchup(proxy, "sub5_1")
    wait_for_catchup(proxy, "sub5_2")
    assert _one(sub, count.format("tab5")) == (6, 1, 3)
    _run(pub, "TRUNCATE tab5")
    wait_for_catchup(proxy, "sub5_1")
    wait_for_catchup(proxy, "sub5_2")
    assert _one(sub, count.format("tab5")) == (0, None, None)
    assert _one(sub, "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()") == (0,)
    _run(sub, *(f"DROP SUBSCRIPTION {s}" for s in ("sub1", "sub3", "sub5_1", "sub5_2")))
