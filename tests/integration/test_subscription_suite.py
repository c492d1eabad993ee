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


def _rel_count(sub: str, subscription: str) -> int:
    return _one(
        sub,
        "SELECT count(*) FROM pg_subscription_rel WHERE srsubid IN "
        f"(SELECT oid FROM pg_subscription WHERE subname = '{subscription}')",
    )[0]  # type: ignore[return-value]


def test_025_rep_changes_for_schema(proxy: ProxyServer, pg15: PgCluster) -> None:
    """025_rep_changes_for_schema: FOR TABLES IN SCHEMA — initial sync, inserts, a table
    made in the schema reaching the subscriber only after REFRESH PUBLICATION, SET SCHEMA
    out of it and DROP TABLE taking tables out at the next refresh, and DROP TABLES IN
    SCHEMA in the middle of a transaction publishing the changes before it only. (The
    file's partitioned table is left out: the proxy refuses PARTITION BY with 0A000.)"""
    pub = proxy.dsn()
    sub = new_sub_db(pg15)
    _run(
        pub,
        "CREATE SCHEMA sch1",
        "CREATE TABLE sch1.tab1 AS SELECT generate_series(1, 10) AS a",
        "CREATE TABLE sch1.tab2 AS SELECT generate_series(1, 10) AS a",
        "CREATE PUBLICATION tap_pub_schema FOR TABLES IN SCHEMA sch1",
    )
    _run(sub, "CREATE SCHEMA sch1", "CREATE TABLE sch1.tab1 (a int)", "CREATE TABLE sch1.tab2 (a int)")
    subscribe(sub, proxy, "tap_sub_schema", "tap_pub_schema")
    wait_ready(sub)
    count = "SELECT count(*), min(a), max(a) FROM {}"
    assert _one(sub, count.format("sch1.tab1")) == (10, 1, 10)
    assert _one(sub, count.format("sch1.tab2")) == (10, 1, 10)

    _run(pub, "INSERT INTO sch1.tab1 VALUES (generate_series(11, 20))")
    wait_for_catchup(proxy, "tap_sub_schema")
    assert _one(sub, count.format("sch1.tab1")) == (20, 1, 20)

    _run(pub, "CREATE TABLE sch1.tab3s AS SELECT generate_series(1, 10) AS a")
    _run(sub, "CREATE TABLE sch1.tab3s (a int)")
    wait_for_catchup(proxy, "tap_sub_schema")
    assert _one(sub, "SELECT count(*) FROM sch1.tab3s") == (0,)
    _run(sub, "ALTER SUBSCRIPTION tap_sub_schema REFRESH PUBLICATION")
    wait_ready(sub)
    _run(pub, "INSERT INTO sch1.tab3s VALUES (11)")
    wait_for_catchup(proxy, "tap_sub_schema")
    assert _one(sub, count.format("sch1.tab3s")) == (11, 1, 11)

    _run(pub, "ALTER TABLE sch1.tab3s SET SCHEMA public", "INSERT INTO public.tab3s VALUES (12)")
    wait_for_catchup(proxy, "tap_sub_schema")
    assert _one(sub, count.format("sch1.tab3s")) == (11, 1, 11)
    assert _rel_count(sub, "tap_sub_schema") == 3  # (not yet dropped)
    _run(sub, "ALTER SUBSCRIPTION tap_sub_schema REFRESH PUBLICATION")
    wait_ready(sub)
    assert _rel_count(sub, "tap_sub_schema") == 2

    _run(pub, "DROP TABLE sch1.tab2")
    wait_for_catchup(proxy, "tap_sub_schema")
    assert _rel_count(sub, "tap_sub_schema") == 2
    _run(sub, "ALTER SUBSCRIPTION tap_sub_schema REFRESH PUBLICATION")
    wait_ready(sub)
    assert _rel_count(sub, "tap_sub_schema") == 1

    with psycopg.connect(pub, autocommit=True) as c:  # one simple query: one transaction
        c.execute(
            "INSERT INTO sch1.tab1 VALUES (21); "
            "ALTER PUBLICATION tap_pub_schema DROP TABLES IN SCHEMA sch1; "
            "INSERT INTO sch1.tab1 VALUES (22)"
        )
    wait_for_catchup(proxy, "tap_sub_schema")
    assert _one(sub, count.format("sch1.tab1")) == (21, 1, 21)
    _run(sub, "DROP SUBSCRIPTION tap_sub_schema")


def _sender_pid(proxy: ProxyServer, app: str) -> object:
    row = _one(proxy.dsn(), f"SELECT max(pid) FROM pg_stat_replication WHERE application_name = '{app}'")
    return row[0]


def _restarted(proxy: ProxyServer, app: str, old: object) -> None:
    _wait(lambda: _sender_pid(proxy, app) not in (None, old))


def test_001_rep_changes(proxy: ProxyServer, pg15: PgCluster) -> None:
    """001_rep_changes: initial copy, INSERT/UPDATE/DELETE of a keyed table, an
    insert-only publication, a subscriber table of another column order, REPLICA
    IDENTITY FULL with duplicate rows and text values, the apply worker restarting on a
    new connection string and publication list, ALTER PUBLICATION and REFRESH, RENAME
    of the subscription, and everything dropped with it (slot included)."""
    pub = proxy.dsn()
    sub = new_sub_db(pg15)
    _run(
        pub,
        "CREATE TABLE tab_notrep AS SELECT generate_series(1, 10) AS a",
        "CREATE TABLE tab_ins AS SELECT generate_series(1, 1002) AS a",
        "CREATE TABLE tab_full AS SELECT generate_series(1, 10) AS a",
        "CREATE TABLE tab_full2 (x text)",
        "INSERT INTO tab_full2 VALUES ('a'), ('b'), ('b')",
        "CREATE TABLE tab_rep (a int PRIMARY KEY)",
        "CREATE TABLE tab_mixed (a int PRIMARY KEY, b text)",
        "INSERT INTO tab_mixed (a, b) VALUES (1, 'foo')",
        "CREATE PUBLICATION tap_pub",
        "CREATE PUBLICATION tap_pub_ins_only WITH (publish = insert)",
        "ALTER PUBLICATION tap_pub ADD TABLE tab_rep, tab_full, tab_full2, tab_mixed",
        "ALTER PUBLICATION tap_pub_ins_only ADD TABLE tab_ins",
    )
    _run(
        sub,
        "CREATE TABLE tab_notrep (a int)",
        "CREATE TABLE tab_ins (a int)",
        "CREATE TABLE tab_full (a int)",
        "CREATE TABLE tab_full2 (x text)",
        "CREATE TABLE tab_rep (a int PRIMARY KEY)",
        "CREATE TABLE tab_mixed (c text, b text, a int PRIMARY KEY)",  # (other columns, other order)
    )
    conn = f"host=127.0.0.1 port={proxy.port} user=postgres dbname=postgres"
    _run(sub, f"CREATE SUBSCRIPTION tap_sub CONNECTION '{conn} application_name=tap_sub' PUBLICATION tap_pub, tap_pub_ins_only")
    wait_ready(sub)
    wait_for_catchup(proxy, "tap_sub")
    count = "SELECT count(*), min(a), max(a) FROM {}"
    assert _one(sub, "SELECT count(*) FROM tab_notrep") == (0,)
    assert _one(sub, "SELECT count(*) FROM tab_ins") == (1002,)

    _run(
        pub,
        "INSERT INTO tab_ins SELECT generate_series(1, 50)",
        "DELETE FROM tab_ins WHERE a > 20",
        "UPDATE tab_ins SET a = -a",
        "INSERT INTO tab_rep SELECT generate_series(1, 50)",
        "DELETE FROM tab_rep WHERE a > 20",
        "UPDATE tab_rep SET a = -a",
        "INSERT INTO tab_mixed VALUES (2, 'bar')",
    )
    wait_for_catchup(proxy, "tap_sub")
    assert _one(sub, count.format("tab_ins")) == (1052, 1, 1002)
    assert _one(sub, count.format("tab_rep")) == (20, -20, -1)
    with psycopg.connect(sub) as c:
        assert c.execute("SELECT c, b, a FROM tab_mixed ORDER BY a").fetchall() == [(None, "foo", 1), (None, "bar", 2)]

    _run(pub, "INSERT INTO tab_full SELECT generate_series(1, 10)")
    for t in ("tab_full", "tab_full2", "tab_ins"):
        _run(pub, f"ALTER TABLE {t} REPLICA IDENTITY FULL")
        _run(sub, f"ALTER TABLE {t} REPLICA IDENTITY FULL")
    _run(pub, "UPDATE tab_full SET a = a * a", "UPDATE tab_full2 SET x = 'bb' WHERE x = 'b'")
    wait_for_catchup(proxy, "tap_sub")
    assert _one(sub, count.format("tab_full")) == (20, 1, 100)  # duplicate rows, identity FULL
    with psycopg.connect(sub) as c:
        assert c.execute("SELECT x FROM tab_full2 ORDER BY 1").fetchall() == [("a",), ("bb",), ("bb",)]

    old = _sender_pid(proxy, "tap_sub")
    _run(sub, f"ALTER SUBSCRIPTION tap_sub CONNECTION 'application_name=tap_sub {conn}'")
    _restarted(proxy, "tap_sub", old)
    old = _sender_pid(proxy, "tap_sub")
    _run(sub, "ALTER SUBSCRIPTION tap_sub SET PUBLICATION tap_pub_ins_only WITH (copy_data = false)")
    _restarted(proxy, "tap_sub", old)
    _run(pub, "INSERT INTO tab_ins SELECT generate_series(1001, 1100)", "DELETE FROM tab_rep")
    wait_for_catchup(proxy, "tap_sub")
    assert _one(sub, count.format("tab_ins")) == (1152, 1, 1100)
    assert _one(sub, count.format("tab_rep")) == (20, -20, -1)  # (no longer subscribed)

    _run(
        pub,
        "ALTER PUBLICATION tap_pub_ins_only SET (publish = 'insert, delete')",
        "ALTER PUBLICATION tap_pub_ins_only ADD TABLE tab_full",
        "DELETE FROM tab_ins WHERE a > 0",
    )
    _run(sub, "ALTER SUBSCRIPTION tap_sub REFRESH PUBLICATION WITH (copy_data = false)")
    _run(pub, "INSERT INTO tab_full VALUES (0)")
    wait_for_catchup(proxy, "tap_sub")
    assert _one(sub, count.format("tab_ins")) == (1052, 1, 1002)  # (the publisher's differ)
    assert _one(sub, count.format("tab_full")) == (21, 0, 100)

    old = _sender_pid(proxy, "tap_sub")
    _run(sub, "ALTER SUBSCRIPTION tap_sub RENAME TO tap_sub_renamed")
    _restarted(proxy, "tap_sub", old)
    suboid = _one(sub, "SELECT oid FROM pg_subscription WHERE subname = 'tap_sub_renamed'")[0]
    _run(sub, "DROP SUBSCRIPTION tap_sub_renamed")
    # (pg_subscription and pg_replication_origin are shared by the cluster's databases)
    assert _one(sub, f"SELECT count(*) FROM pg_subscription WHERE oid = {suboid}") == (0,)
    assert _one(sub, "SELECT count(*) FROM pg_subscription_rel") == (0,)
    assert _one(sub, f"SELECT count(*) FROM pg_replication_origin WHERE roname = 'pg_{suboid}'") == (0,)
    _wait(lambda: _one(pub, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'tap_sub'") == (0,))


def _all(dsn: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(dsn, autocommit=True) as c:
        return c.execute(sql).fetchall()


def test_013_partition(proxy: ProxyServer, pg15: PgCluster) -> None:
    """013_partition: a partitioned publisher table (list partitions, one partitioned
    again, a default) replicated to a subscriber whose tables are partitioned otherwise,
    once per partition (sub1, FOR TABLE) and as the root (sub2,
    publish_via_partition_root); inserts, updates that move rows between partitions,
    deletes and TRUNCATE arrive with the tables' contents as the file expects."""
    pub = proxy.dsn()
    _run(
        pub,
        "CREATE TABLE ptab1 (a int PRIMARY KEY, b text) PARTITION BY LIST (a)",
        "CREATE TABLE ptab1_1 PARTITION OF ptab1 FOR VALUES IN (1, 2, 3)",
        "CREATE TABLE ptab1_2 PARTITION OF ptab1 FOR VALUES IN (4, 5, 6) PARTITION BY LIST (a)",
        "CREATE TABLE ptab1_2_1 PARTITION OF ptab1_2 FOR VALUES IN (5)",
        "CREATE TABLE ptab1_2_2 PARTITION OF ptab1_2 FOR VALUES IN (4, 6)",
        "CREATE TABLE ptab1_def PARTITION OF ptab1 DEFAULT",
        "CREATE PUBLICATION pub013 FOR TABLE ptab1",
        "CREATE PUBLICATION pub013_root FOR TABLE ptab1 WITH (publish_via_partition_root = true)",
    )
    sub1, sub2 = new_sub_db(pg15), new_sub_db(pg15)
    # (the subscriber's partitioning differs: each leaf of the publisher a table, or the
    # root a table partitioned by range)
    _run(
        sub1,
        "CREATE TABLE ptab1_1 (a int PRIMARY KEY, b text)",
        "CREATE TABLE ptab1_2_1 (a int PRIMARY KEY, b text)",
        "CREATE TABLE ptab1_2_2 (a int PRIMARY KEY, b text)",
        "CREATE TABLE ptab1_def (a int PRIMARY KEY, b text)",
    )
    _run(
        sub2,
        "CREATE TABLE ptab1 (a int PRIMARY KEY, b text) PARTITION BY RANGE (a)",
        "CREATE TABLE ptab1_low PARTITION OF ptab1 FOR VALUES FROM (MINVALUE) TO (5)",
        "CREATE TABLE ptab1_high PARTITION OF ptab1 FOR VALUES FROM (5) TO (MAXVALUE)",
    )
    _run(pub, "INSERT INTO ptab1 VALUES (1, 'before'), (5, 'before')")
    subscribe(sub1, proxy, "sub013a", "pub013")
    subscribe(sub2, proxy, "sub013b", "pub013_root")
    wait_ready(sub1)
    wait_ready(sub2)

    def leaves(dsn: str) -> list[tuple[object, ...]]:
        return _all(dsn, "SELECT 'ptab1_1', * FROM ptab1_1 UNION ALL SELECT 'ptab1_2_1', * FROM ptab1_2_1 "
                         "UNION ALL SELECT 'ptab1_2_2', * FROM ptab1_2_2 UNION ALL SELECT 'ptab1_def', * FROM ptab1_def ORDER BY 2")

    def check(expected: list[tuple[object, ...]]) -> None:
        wait_for_catchup(proxy, "sub013a")
        wait_for_catchup(proxy, "sub013b")
        assert leaves(pub) == expected
        assert leaves(sub1) == expected
        assert _all(sub2, "SELECT a, b FROM ptab1 ORDER BY a") == [(a, b) for _, a, b in expected]

    check([("ptab1_1", 1, "before"), ("ptab1_2_1", 5, "before")])
    _run(pub, "INSERT INTO ptab1 VALUES (2, 'x'), (6, 'x'), (10, 'x')")
    check([("ptab1_1", 1, "before"), ("ptab1_1", 2, "x"), ("ptab1_2_1", 5, "before"), ("ptab1_2_2", 6, "x"), ("ptab1_def", 10, "x")])
    # (1 → 3 stays in ptab1_1; 2 → 4 moves to ptab1_2_2: a DELETE there, an INSERT here)
    _run(pub, "UPDATE ptab1 SET a = a + 2, b = 'moved' WHERE a IN (1, 2)", "UPDATE ptab1 SET b = 'same' WHERE a = 6")
    check([("ptab1_1", 3, "moved"), ("ptab1_2_2", 4, "moved"), ("ptab1_2_1", 5, "before"), ("ptab1_2_2", 6, "same"), ("ptab1_def", 10, "x")])
    _run(pub, "DELETE FROM ptab1 WHERE a = 10")
    check([("ptab1_1", 3, "moved"), ("ptab1_2_2", 4, "moved"), ("ptab1_2_1", 5, "before"), ("ptab1_2_2", 6, "same")])
    _run(pub, "TRUNCATE ptab1_2")
    wait_for_catchup(proxy, "sub013a")
    wait_for_catchup(proxy, "sub013b")
    assert leaves(sub1) == leaves(pub) == [("ptab1_1", 3, "moved")]  # (sub1 gets each leaf's truncate)
    # (sub2 has the root published: a partition's own truncate is not sent, as in PostgreSQL)
    assert [a for a, _ in _all(sub2, "SELECT a, b FROM ptab1 ORDER BY a")] == [3, 4, 5, 6]
    _run(pub, "INSERT INTO ptab1 VALUES (1, 'after')", "TRUNCATE ptab1")
    wait_for_catchup(proxy, "sub013a")
    wait_for_catchup(proxy, "sub013b")
    assert leaves(sub1) == [] and _all(sub2, "SELECT a, b FROM ptab1 ORDER BY a") == []
    for sub, name in ((sub1, "sub013a"), (sub2, "sub013b")):
        _run(sub, f"DROP SUBSCRIPTION {name}")
