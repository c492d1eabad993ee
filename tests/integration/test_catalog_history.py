"""Each transaction is decoded with the catalog it was written under (ARCHITECTURE §3): a slot
that lags behind ALTER TABLE, DROP/CREATE TABLE and ALTER PUBLICATION still gets every
transaction with its own Relation and its own columns' values, whatever folds,
checkpoints, garbage collection and restarts of the proxy happened meanwhile — compared
with what PostgreSQL 15 sends for the same statements, and with what a stock subscriber
that was down during the migration ends up with."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import psycopg
import pytest

from tests.integration.test_subscriber import new_sub_db, rows
from tests.pgcluster import PgCluster
from tests.pgcompare import pgoutput_messages, recvlogical, stream_shape
from tests.proxy import ProxyServer
from walsender_proxy.lake import LakeSettings

#: Small changesets and log segments, and a short fold interval: every bulk statement
#: is a changeset file, the log spans many segments, the background folds between statements.
LAKE = LakeSettings(fsync=False, changeset_bytes=2048, segment_size=1 << 16, fold_interval=0.2)
RESTART = "-- restart the proxy"
#: A step is a statement, a transaction (statements run in one), or RESTART (proxy only).
Step = str | tuple[str, ...]


class Proxy:
    """The proxy on one data directory, restarted on demand (a new port each time)."""

    def __init__(self, data: Path, **settings: object) -> None:
        self.data = data
        self.server = ProxyServer(data, lake_settings=LAKE, **settings).start()

    def restart(self, **settings: object) -> None:
        """Stop and start again on the same port (a subscriber's connection string holds it)."""
        port = self.server.port
        self.server.stop()
        self.server = ProxyServer(self.data, lake_settings=LAKE, port=port, **settings).start()

    def dsn(self) -> str:
        return self.server.dsn()

    def close(self) -> None:
        self.server.stop()


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[Proxy]:
    p = Proxy(tmp_path / "proxy")
    yield p
    p.close()


def run(dsn: Callable[[], str], steps: Sequence[Step], restart: Callable[[], None] | None) -> None:
    for step in steps:
        if step == RESTART:
            if restart is not None:
                restart()
            continue
        with psycopg.connect(dsn(), autocommit=True) as c:
            if isinstance(step, tuple):
                with c.transaction():
                    for s in step:
                        c.execute(s)
            else:
                c.execute(step)
        time.sleep(0.05)  # (lets the proxy's background fold run between statements)


def end_lsn(dsn: str) -> str:
    """The insert position: the test cluster runs with synchronous_commit off, so the
    write position may still lie before the last commit."""
    with psycopg.connect(dsn, autocommit=True) as c:
        return str(c.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0])  # type: ignore[index]


def read_slot(dsn: str, slot: str, endpos: str) -> list[tuple[object, ...]]:
    out = recvlogical(
        dsn, slot, "--start", "-f", "-", f"--endpos={endpos}", "--no-loop",
        "-o", "proto_version=1", "-o", "publication_names=p",
    )  # fmt: skip
    return stream_shape(pgoutput_messages(out))


SETUP: list[Step] = [
    "CREATE TABLE t3 (id int PRIMARY KEY, a text)",
    "CREATE PUBLICATION p FOR TABLE t3",
]
MIGRATION: list[Step] = [
    "INSERT INTO t3 VALUES (1, 'before')",
    "INSERT INTO t3 SELECT g, 'bulk ' || g FROM generate_series(100, 400) AS g",
    "UPDATE t3 SET a = 'before, updated' WHERE id = 1",
    "ALTER TABLE t3 ADD COLUMN c int",
    "INSERT INTO t3 VALUES (2, 'mid', 2)",
    "ALTER TABLE t3 ALTER COLUMN a TYPE varchar(100)",  # (the values stay as they are)
    "ALTER TABLE t3 ALTER COLUMN c TYPE bigint USING c * 10",  # (a rewrite: decoded as nothing)
    "INSERT INTO t3 VALUES (10, 'retyped', 10)",
    "UPDATE t3 SET a = 'mid, updated' WHERE id = 2",
    "CHECKPOINT",
    "ALTER TABLE t3 DROP COLUMN a",
    "INSERT INTO t3 VALUES (3, 3)",
    "DELETE FROM t3 WHERE id = 1",
    "VACUUM FULL",
    "ALTER TABLE t3 RENAME COLUMN c TO d",
    "INSERT INTO t3 VALUES (4, 4)",
    "ALTER TABLE t3 RENAME id TO key",  # the key column
    "ALTER TABLE t3 ADD COLUMN a text",  # the dropped name again: its old values stay gone
    "INSERT INTO t3 VALUES (5, 5, 'again')",
    "UPDATE t3 SET d = -key WHERE key BETWEEN 100 AND 400",
    "UPDATE t3 SET key = 44 WHERE key = 4",
    "ALTER TABLE t3 RENAME TO t4",  # the Relation message names the table anew
    "INSERT INTO t4 VALUES (9, 9, 'renamed')",
    "CREATE SCHEMA s9",
    "ALTER TABLE t4 SET SCHEMA s9",
    "UPDATE s9.t4 SET a = 'moved' WHERE key = 9",
    "ALTER TABLE s9.t4 SET SCHEMA public",
    "ALTER TABLE t4 RENAME TO t3",
    RESTART,
    "DROP TABLE t3",
    "CREATE TABLE t3 (id bigint PRIMARY KEY, z text)",
    "ALTER PUBLICATION p ADD TABLE t3",
    "INSERT INTO t3 VALUES (6, 'recreated')",
    "VACUUM",
    (
        "INSERT INTO t3 VALUES (7, 'in one transaction')",
        "ALTER TABLE t3 ADD COLUMN w int",
        "INSERT INTO t3 VALUES (8, 'with w', 8)",
    ),
    "VACUUM FULL",
]


def test_a_lagging_slot_gets_each_transaction_with_its_own_schema(
    proxy: Proxy, pg15: PgCluster
) -> None:
    """pg_recvlogical (pgoutput, protocol 1) reads a slot created before the migration, once
    from a walsender process and once from the server process after another restart: the
    same Relation column lists and tuple values as from PostgreSQL 15."""
    pub = new_sub_db(pg15)
    run(lambda: pub, SETUP, None)
    recvlogical(pub, "lag", "--create-slot", "-P", "pgoutput")
    run(lambda: pub, MIGRATION, None)
    theirs = read_slot(pub, "lag", end_lsn(pub))

    run(proxy.dsn, SETUP, None)
    for slot in ("lag_process", "lag_server"):
        recvlogical(proxy.dsn(), slot, "--create-slot", "-P", "pgoutput")
    run(proxy.dsn, MIGRATION, proxy.restart)
    end = end_lsn(proxy.dsn())
    ours = read_slot(proxy.dsn(), "lag_process", end)
    assert ours == theirs
    proxy.restart(walsender_processes=False)
    assert read_slot(proxy.dsn(), "lag_server", end) == theirs


DOWN_MIGRATION: list[Step] = [
    "INSERT INTO m VALUES (2, 'while down')",
    "ALTER TABLE m ADD COLUMN c int",  # the subscriber's table has it already
    "INSERT INTO m VALUES (3, 'with c', 3)",
    "UPDATE m SET c = 20 WHERE id = 2",
    "CHECKPOINT",
    "ALTER TABLE m DROP COLUMN a",
    "INSERT INTO m VALUES (4, 4)",
    "UPDATE m SET c = 10 WHERE id = 1",
    "DELETE FROM m WHERE id = 3",
    "VACUUM FULL",
    RESTART,
    "INSERT INTO m VALUES (99, 99)",  # the last change: the subscriber has it, it has all
]


def slot_active(dsn: str, slot: str) -> bool:
    with psycopg.connect(dsn) as c:
        got = c.execute("SELECT active FROM pg_replication_slots WHERE slot_name = %s", (slot,)).fetchone()
    return bool(got and got[0])


def wait_for(cond: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def migrate_while_subscriber_is_down(
    pub: Callable[[], str], conninfo: str, sub: str, restart: Callable[[], None] | None
) -> list[tuple]:
    """A PostgreSQL 15 subscriber follows ``m`` live, is disabled while the publisher
    migrates, then enabled again: its table afterwards."""
    run(pub, ["CREATE TABLE m (id int PRIMARY KEY, a text)", "CREATE PUBLICATION pm FOR TABLE m",
              "SELECT pg_create_logical_replication_slot('sm', 'pgoutput')"], None)  # fmt: skip
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("CREATE TABLE m (id int PRIMARY KEY, a text, c int)")
        c.execute(
            f"CREATE SUBSCRIPTION sm CONNECTION '{conninfo}' PUBLICATION pm "
            "WITH (create_slot = false, slot_name = 'sm', copy_data = false)"
        )
    run(pub, ["INSERT INTO m VALUES (1, 'live')"], None)
    wait_for(lambda: len(rows(sub, "m")) == 1, "the live insert")
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("ALTER SUBSCRIPTION sm DISABLE")
    wait_for(lambda: not slot_active(pub(), "sm"), "the subscriber to go")
    run(pub, DOWN_MIGRATION, restart)
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("ALTER SUBSCRIPTION sm ENABLE")
    wait_for(lambda: any(r[0] == 99 for r in rows(sub, "m")), "the subscriber to catch up")
    got = rows(sub, "m")
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("DROP SUBSCRIPTION sm")
    return got


def test_a_subscriber_down_during_a_migration_ends_as_with_postgresql(
    proxy: Proxy, pg15: PgCluster
) -> None:
    """ADD COLUMN (the subscriber's table already has it) and DROP COLUMN while a stock
    PostgreSQL 15 subscriber is disabled: once enabled it gets every transaction with the
    columns it was written with, as from a PostgreSQL 15 publisher."""
    pub = new_sub_db(pg15)
    pub_conninfo = f"host=127.0.0.1 port={pg15.port} user=postgres dbname={pub.split('dbname=')[1]}"
    theirs = migrate_while_subscriber_is_down(lambda: pub, pub_conninfo, new_sub_db(pg15), None)
    assert theirs[:3] == [(1, "live", 10), (2, "while down", 20), (4, None, 4)]  # (the oracle)
    proxy_conninfo = f"host=127.0.0.1 port={proxy.server.port} user=postgres dbname=postgres"
    ours = migrate_while_subscriber_is_down(proxy.dsn, proxy_conninfo, new_sub_db(pg15), proxy.restart)
    assert ours == theirs


def catalog_xmin(dsn: str, slot: str) -> int | None:
    with psycopg.connect(dsn) as c:
        got = c.execute(
            "SELECT catalog_xmin::text FROM pg_replication_slots WHERE slot_name = %s", (slot,)
        ).fetchone()
    assert got is not None
    return None if got[0] is None else int(got[0])


def advance(dsn: str, slot: str) -> None:
    """Confirm ``slot`` up to the end of the log. Twice, around a CHECKPOINT: PostgreSQL
    moves catalog_xmin at the running-transactions record a checkpoint logs."""
    with psycopg.connect(dsn, autocommit=True) as c:
        for sql in ("SELECT pg_replication_slot_advance(%s, pg_current_wal_lsn())", "CHECKPOINT") * 2:
            c.execute(sql, (slot,) if "%s" in sql else None)


def test_catalog_xmin_holds_the_catalog_until_every_slot_confirms_past_it(
    proxy: Proxy, pg15: PgCluster
) -> None:
    """While a slot lags behind ALTER TABLE, pg_replication_slots.catalog_xmin shows its
    hold (as PostgreSQL 15's does) and garbage collection keeps the old catalog version and
    the log; once every slot has confirmed past it, the hold moves on and the next
    collection frees them (no unbounded retention)."""
    steps: list[Step] = [
        "CREATE TABLE h (id int PRIMARY KEY, a text)",
        "CREATE PUBLICATION ph FOR TABLE h",
        "SELECT pg_create_logical_replication_slot('h1', 'pgoutput')",
        "SELECT pg_create_logical_replication_slot('h2', 'pgoutput')",
    ]
    migration: list[Step] = [
        "INSERT INTO h SELECT g, repeat('x', 200) FROM generate_series(1, 2000) AS g",
        "ALTER TABLE h DROP COLUMN a",
        "INSERT INTO h VALUES (0)",
        *["SELECT pg_logical_emit_message(false, 'pad', repeat('x', 40000))"] * 3,  # log segments
        "VACUUM FULL",
    ]
    pub = new_sub_db(pg15)
    for dsn, restart in ((lambda: pub, None), (proxy.dsn, proxy.restart)):
        run(dsn, steps, None)
        before = {s: catalog_xmin(dsn(), s) for s in ("h1", "h2")}
        assert None not in before.values(), before
        run(dsn, [*migration, RESTART, "VACUUM"], restart)
        assert {s: catalog_xmin(dsn(), s) for s in ("h1", "h2")} == before  # held
        advance(dsn(), "h1")
        h1 = catalog_xmin(dsn(), "h1")
        assert h1 is not None and h1 > before["h1"]  # type: ignore[operator]
        assert catalog_xmin(dsn(), "h2") == before["h2"]
    lake = proxy.server.lake
    assert lake is not None
    held_from, changesets = lake.log.oldest_lsn, sorted(lake.changesets.glob("*.parquet"))
    run(proxy.dsn, ["VACUUM"], None)
    assert len(lake.history.versions()) > 1  # h2 still decodes with the old one
    assert (lake.log.oldest_lsn, sorted(lake.changesets.glob("*.parquet"))) == (held_from, changesets)
    assert changesets  # (the 2,000 rows went to one)
    advance(proxy.dsn(), "h2")
    run(proxy.dsn, ["VACUUM"], None)
    assert len(lake.history.versions()) == 1
    assert lake.log.oldest_lsn > held_from
    assert not set(changesets) & set(lake.changesets.glob("*.parquet"))
