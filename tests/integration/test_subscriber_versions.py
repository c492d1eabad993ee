"""Stock subscribers of PostgreSQL 14 to 18 against the proxy claiming each
``server_version`` it supports (15, 16, 17). A subscriber chooses its protocol, its queries
and its options from the publisher's version: against a 15 it runs protocol 3 (2 for 14)
and ``streaming 'on'``; against 16 and 17, a 16+ subscriber lists tables with
``pg_get_publication_tables(VARIADIC …)`` in a ``(f(…)).*`` SELECT list, runs protocol 4
and, asked for ``streaming = parallel`` (18's default), applies streamed transactions in
parallel. Each pair runs the initial copy, then inserts, updates, deletes, a transaction
bigger than the proxy's logical_decoding_work_mem streamed in progress with a savepoint
rolled back to, and a truncate, compared row for row. A subscription with
``two_phase = true`` prepares what the proxy prepares.

Servers of each major: :func:`tests.pgcluster.major_cluster`."""

from __future__ import annotations

import time
from collections.abc import Iterator

import psycopg
import pytest

from tests.pgcluster import MAJORS, PgCluster, major_cluster
from tests.proxy import ProxyServer

#: the versions the proxy is tested claiming
CLAIMS = ("15.18", "16.10", "17.6")


@pytest.fixture(scope="module", params=CLAIMS, ids=lambda v: f"claims{v.split('.')[0]}")
def publisher(request: pytest.FixtureRequest) -> Iterator[ProxyServer]:
    """The proxy, claiming one ``server_version``."""
    with ProxyServer(server_version=request.param) as p:
        yield p


@pytest.fixture(scope="module", params=MAJORS, ids=lambda m: f"pg{m}")
def subscriber(request: pytest.FixtureRequest) -> Iterator[PgCluster]:
    with major_cluster(request.param, {"logical_decoding_work_mem": "64kB", "max_prepared_transactions": "10"}) as pg:
        yield pg


def _major(pg: PgCluster | ProxyServer) -> int:
    with psycopg.connect(pg.dsn()) as c:
        return int(c.execute("SHOW server_version_num").fetchone()[0]) // 10000


def _rows(dsn: str, table: str) -> list[tuple]:
    with psycopg.connect(dsn) as c:
        return c.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()


def _wait_identical(proxy: str, sub: str, table: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while (ours := _rows(proxy, table)) != (theirs := _rows(sub, table)):
        assert time.monotonic() < deadline, f"{table}: proxy {len(ours)} rows, subscriber {len(theirs)}"
        time.sleep(0.1)


def _published(publisher: ProxyServer, table: str, pub: str, first: str) -> str:
    """``table (id int PRIMARY KEY, t text)`` on the proxy with the row (1, ``first``),
    published as ``pub``; its DDL, for the subscriber."""
    ddl = f"CREATE TABLE {table} (id int PRIMARY KEY, t text)"
    with psycopg.connect(publisher.dsn(), autocommit=True) as c:
        c.execute(ddl)
        c.execute(f"INSERT INTO {table} VALUES (1, '{first}')")
        c.execute(f"CREATE PUBLICATION {pub} FOR TABLE {table}")
    return ddl


def _subscribe(subscriber: PgCluster, publisher: ProxyServer, ddl: str, sub: str, pub: str, options: str) -> None:
    """The table made on the subscriber, then a subscription ``WITH (options)`` to it."""
    with psycopg.connect(subscriber.dsn(), autocommit=True) as c:
        c.execute(ddl)
        c.execute(
            f"CREATE SUBSCRIPTION {sub} CONNECTION 'host=127.0.0.1 port={publisher.port} user=postgres dbname=postgres' "
            f"PUBLICATION {pub} WITH ({options})"
        )


def test_a_subscriber_syncs_and_streams(publisher: ProxyServer, subscriber: PgCluster) -> None:
    claim, major = _major(publisher), _major(subscriber)
    table, pub, sub = f"v{claim}_{major}", f"pv{claim}_{major}", f"sv{claim}_{major}"
    parallel = claim >= 16 and major >= 16  # (else 'on': 14 and 15 know no parallel, a 15 publisher neither)
    ddl = f"CREATE TABLE {table} (id int PRIMARY KEY, n bigint, t text, ts timestamptz, ok boolean, amount numeric(12,2))"
    with psycopg.connect(publisher.dsn(), autocommit=True) as c:
        # Walsenders stream what passes 64kB (their limit is read at START_REPLICATION).
        c.execute("ALTER SYSTEM SET logical_decoding_work_mem = '64kB'")
        c.execute("SELECT pg_reload_conf()")
        c.execute(ddl)
        c.execute(
            f"INSERT INTO {table} SELECT g, g * 1000, 'row ' || g, '2026-01-01 00:00:00+00'::timestamptz + g * interval '1 minute', "
            f"g % 2 = 0, g * 1.25 FROM generate_series(1, 2000) g"
        )
        c.execute(f"CREATE PUBLICATION {pub} FOR TABLE {table}")
    _subscribe(subscriber, publisher, ddl, sub, pub, f"streaming = {'parallel' if major >= 16 else 'on'}")
    _wait_identical(publisher.dsn(), subscriber.dsn(), table)
    with psycopg.connect(publisher.dsn(), autocommit=True) as c:
        c.execute(f"UPDATE {table} SET t = 'updated', amount = amount * 2 WHERE id % 7 = 0")
        c.execute(f"DELETE FROM {table} WHERE id % 11 = 0")
        with c.transaction():  # streamed in progress: several blocks, one savepoint rolled back
            for lo in range(2001, 4000, 500):
                c.execute(f"INSERT INTO {table} SELECT g, g, repeat('x', 200), now(), true, 0 FROM generate_series({lo}, {lo + 499}) g")
                if lo == 3001:
                    c.execute("SAVEPOINT s")
            c.execute(f"UPDATE {table} SET n = -n WHERE id > 3000")
            c.execute("ROLLBACK TO SAVEPOINT s")
            c.execute(f"DELETE FROM {table} WHERE id BETWEEN 2001 AND 2100")
    _wait_identical(publisher.dsn(), subscriber.dsn(), table)
    with psycopg.connect(publisher.dsn(), autocommit=True) as c:
        c.execute(f"TRUNCATE {table}")
        c.execute(f"INSERT INTO {table} VALUES (1, 1, 'after truncate', now(), false, 1.5)")
    _wait_identical(publisher.dsn(), subscriber.dsn(), table)
    with psycopg.connect(publisher.dsn()) as c:
        senders = c.execute(f"SELECT state FROM pg_stat_replication WHERE application_name = '{sub}'").fetchall()
        started = c.execute(
            f"SELECT query FROM pg_stat_activity WHERE backend_type = 'walsender' AND application_name = '{sub}'"
        ).fetchone()
        if claim >= 17:  # (PostgreSQL 17's column: NULL while the slot is streamed from)
            assert c.execute(f"SELECT active, inactive_since FROM pg_replication_slots WHERE slot_name = '{sub}'").fetchone() == (True, None)
    assert senders == [("streaming",)]
    # What the subscriber asked for, chosen from the claimed version (worker.c).
    assert started is not None
    proto = 4 if claim >= 16 and major >= 16 else 3 if major >= 15 else 2
    assert f"proto_version '{proto}'" in started[0]
    assert f"streaming '{'parallel' if parallel else 'on'}'" in started[0]
    assert ("origin 'any'" in started[0]) == (claim >= 16 and major >= 16)
    with psycopg.connect(subscriber.dsn(), autocommit=True) as c:
        c.execute(f"DROP SUBSCRIPTION {sub}")
    with psycopg.connect(publisher.dsn(), autocommit=True) as c:
        assert c.execute(f"SELECT count(*) FROM pg_replication_slots WHERE slot_name = '{sub}'").fetchone() == (0,)
        c.execute("ALTER SYSTEM RESET logical_decoding_work_mem")
        c.execute("SELECT pg_reload_conf()")


def test_a_two_phase_subscriber_prepares_and_finishes(publisher: ProxyServer, subscriber: PgCluster) -> None:
    """``two_phase = true``: pending until the table is synced, then enabled (protocol 3 or
    4, ``two_phase 'on'``); a PREPARE on the proxy shows in the subscriber's
    pg_prepared_xacts with its rows invisible, COMMIT PREPARED and ROLLBACK PREPARED finish
    it. (PostgreSQL 14 subscribers have no two_phase.)"""
    claim, major = _major(publisher), _major(subscriber)
    if major < 15:
        pytest.skip("PostgreSQL 14 has no two_phase subscriptions")
    table, pub, sub = f"tp{claim}_{major}", f"ptp{claim}_{major}", f"stp{claim}_{major}"
    ddl = _published(publisher, table, pub, "one")
    _subscribe(subscriber, publisher, ddl, sub, pub, "two_phase = true")

    def one(sql: str) -> object:
        with psycopg.connect(subscriber.dsn()) as c:
            row = c.execute(sql).fetchone()
            return row[0] if row else None

    def wait(check: object) -> None:
        deadline = time.monotonic() + 60
        while not check():  # type: ignore[operator]
            assert time.monotonic() < deadline, "timed out"
            time.sleep(0.1)

    wait(lambda: one(f"SELECT subtwophasestate FROM pg_subscription WHERE subname = '{sub}'") == "e")
    _wait_identical(publisher.dsn(), subscriber.dsn(), table)
    visible = 1
    for i, (gid, end) in enumerate([(f"g{claim}_{major}_commit", "COMMIT PREPARED"), (f"g{claim}_{major}_rollback", "ROLLBACK PREPARED")]):
        with psycopg.connect(publisher.dsn(), autocommit=True) as c:
            c.execute("BEGIN")
            c.execute(f"INSERT INTO {table} VALUES ({10 + i}, '{gid}')")
            c.execute(f"PREPARE TRANSACTION '{gid}'")
        wait(lambda: one("SELECT count(*) FROM pg_prepared_xacts") == 1)
        assert one(f"SELECT count(*) FROM {table}") == visible  # (prepared: not visible yet)
        with psycopg.connect(publisher.dsn(), autocommit=True) as c:
            c.execute(f"{end} '{gid}'")
        wait(lambda: one("SELECT count(*) FROM pg_prepared_xacts") == 0)
        visible += end == "COMMIT PREPARED"
        _wait_identical(publisher.dsn(), subscriber.dsn(), table)
        assert one(f"SELECT count(*) FROM {table}") == visible
    with psycopg.connect(subscriber.dsn(), autocommit=True) as c:
        c.execute(f"DROP SUBSCRIPTION {sub}")


def test_a_subscription_with_origin_none_leaves_out_what_came_from_elsewhere(publisher: ProxyServer, subscriber: PgCluster) -> None:
    """``origin = none`` (16+ subscribers, sent to a publisher claiming 16+): a commit made
    under a replication origin on the proxy is not applied, a local one is; and the
    subscriber's check of the copied tables' origins (check_publications_origin) runs."""
    claim, major = _major(publisher), _major(subscriber)
    if claim < 16 or major < 16:
        pytest.skip("origin is a subscription option of 16, sent to publishers of 16 and later")
    table, pub, sub = f"o{claim}_{major}", f"po{claim}_{major}", f"so{claim}_{major}"
    ddl = _published(publisher, table, pub, "before")
    with psycopg.connect(publisher.dsn(), autocommit=True) as c:
        c.execute(f"SELECT pg_replication_origin_create('elsewhere_{claim}_{major}')")
    _subscribe(subscriber, publisher, ddl, sub, pub, "origin = none")
    _wait_identical(publisher.dsn(), subscriber.dsn(), table)
    with psycopg.connect(publisher.dsn(), autocommit=True) as c:
        c.execute(f"SELECT pg_replication_origin_session_setup('elsewhere_{claim}_{major}')")
        c.execute(f"INSERT INTO {table} VALUES (2, 'from elsewhere')")
        c.execute("SELECT pg_replication_origin_session_reset()")
        c.execute(f"INSERT INTO {table} VALUES (3, 'local')")
    deadline = time.monotonic() + 60
    while _rows(subscriber.dsn(), table) != [(1, "before"), (3, "local")]:
        assert time.monotonic() < deadline, _rows(subscriber.dsn(), table)
        time.sleep(0.1)
    with psycopg.connect(subscriber.dsn(), autocommit=True) as c:
        c.execute(f"DROP SUBSCRIPTION {sub}")
