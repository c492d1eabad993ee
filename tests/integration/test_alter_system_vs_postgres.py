"""ALTER SYSTEM, pg_reload_conf() and postgresql.auto.conf, side by side with a PostgreSQL 15
cluster of this module's own (ALTER SYSTEM would change the shared one's settings): the
statements' answers and errors, the file written, what a reload changes for sessions and
for a running stream, and what a restart applies."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator

import psycopg
import psycopg2
import psycopg2.extras
import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import Client, same_answers
from tests.proxy import ProxyProcess, ProxyServer

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def pg() -> Iterator[PgCluster]:
    cluster = PgCluster().start()
    try:
        yield cluster
    finally:
        cluster.stop(remove_later=True)


@pytest.fixture(scope="module")
def proxy() -> Iterator[ProxyServer]:
    with ProxyServer(walsender_processes=False) as p:
        yield p


def _reset(*dsns: str) -> None:
    for dsn in dsns:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("ALTER SYSTEM RESET ALL")
            c.execute("SELECT pg_reload_conf()")


def _settled(dsn: str, sql: str, want: object, tries: int = 50) -> object:
    """PostgreSQL applies a reload when its backends get the signal: ask until it did."""
    got = None
    for _ in range(tries):
        with psycopg.connect(dsn, autocommit=True) as c:
            got = c.execute(sql).fetchone()
        if got == want:
            return got
        time.sleep(0.1)
    return got


STATEMENTS = [
    "ALTER SYSTEM SET logical_decoding_work_mem = '128kB'",
    "SHOW logical_decoding_work_mem",  # (nothing applies before a reload)
    "SELECT setting, source, sourcefile IS NULL FROM pg_settings WHERE name IN ('logical_decoding_work_mem', 'wal_sender_timeout', 'authentication_timeout') ORDER BY name",
    "ALTER SYSTEM SET nosuch = 1",
    "ALTER SYSTEM SET foo.bar = 1",
    "ALTER SYSTEM SET logical_decoding_work_mem = '1kB'",
    "ALTER SYSTEM SET logical_decoding_work_mem = 'abc'",
    "ALTER SYSTEM SET enable_seqscan = maybe",
    "ALTER SYSTEM SET statement_timeout = -1",
    "ALTER SYSTEM SET server_version = '1'",
    "ALTER SYSTEM SET data_directory = '/x'",
    "ALTER SYSTEM SET transaction_isolation = 'serializable'",
    "ALTER SYSTEM SET role = 'x'",
    "ALTER SYSTEM SET work_mem = E'1\\nMB'",
    "ALTER SYSTEM SET work_mem = 1024, 2",
    "ALTER SYSTEM SET TimeZone = 'Mars/Base'",
    "ALTER SYSTEM SET TimeZone TO DEFAULT",
    "ALTER SYSTEM RESET nosuch",
    "ALTER SYSTEM RESET work_mem",
    "BEGIN",
    "ALTER SYSTEM SET work_mem = '8MB'",
    "ROLLBACK",
    "SELECT pg_reload_conf()",
    "CREATE ROLE alter_system_plain LOGIN",
    "SET ROLE alter_system_plain",
    "ALTER SYSTEM SET work_mem = '8MB'",
    "ALTER SYSTEM RESET ALL",
    "SELECT pg_reload_conf()",
    "SELECT count(*) FROM pg_file_settings",
    "RESET ROLE",
    "DROP ROLE alter_system_plain",
]


def test_alter_system_answers_as_postgres(proxy: ProxyServer, pg: PgCluster) -> None:
    try:
        same_answers(proxy.dsn(), pg.dsn(), STATEMENTS).close()
    finally:
        _reset(proxy.dsn(), pg.dsn())


def test_the_file_is_written_as_postgres_writes_it(proxy: ProxyServer, pg: PgCluster) -> None:
    statements = [
        "ALTER SYSTEM SET search_path = a, \"B c\"",
        "ALTER SYSTEM SET DateStyle = 'ISO, DMY'",
        "ALTER SYSTEM SET work_mem = '8MB'",
        "ALTER SYSTEM SET application_name = 'it''s a \\ test'",
        "ALTER SYSTEM SET statement_timeout = 5000",
        "ALTER SYSTEM SET wal_sender_timeout = '1min'",
        "ALTER SYSTEM SET enable_seqscan = off",
        "ALTER SYSTEM SET work_mem = '16MB'",  # (replaced where it stands)
        "ALTER SYSTEM SET search_path TO DEFAULT",
        "ALTER SYSTEM SET max_wal_senders = 12",
    ]
    try:
        for dsn in (proxy.dsn(), pg.dsn()):
            with psycopg.connect(dsn, autocommit=True) as c:
                for sql in statements:
                    c.execute(sql)
        ours = (proxy.dir / "postgresql.auto.conf").read_text()
        theirs = pg.psql("SELECT pg_read_file('postgresql.auto.conf')", dbname="postgres")
        assert ours.strip() == theirs.strip()
        for dsn in (proxy.dsn(), pg.dsn()):
            with psycopg.connect(dsn, autocommit=True) as c:
                c.execute("SELECT pg_reload_conf()")
        query = (
            "SELECT sourceline, name, setting, applied, error FROM pg_file_settings"
            " WHERE sourcefile LIKE '%auto.conf' ORDER BY sourceline"
        )
        want = _settled(pg.dsn(), "SELECT pending_restart FROM pg_settings WHERE name = 'max_wal_senders'", (True,))
        assert want == (True,)
        same_answers(proxy.dsn(), pg.dsn(), [
            query,
            "SELECT name, setting, source, sourceline, pending_restart FROM pg_settings"
            " WHERE name IN ('work_mem', 'DateStyle', 'statement_timeout', 'application_name') ORDER BY name",
            "SELECT pending_restart FROM pg_settings WHERE name = 'max_wal_senders'",
            "SHOW work_mem",
            "SHOW application_name",
        ]).close()  # fmt: skip
    finally:
        _reset(proxy.dsn(), pg.dsn())


def _session_view(dsn: str, **startup: str) -> Iterator[tuple[str, ...]]:
    """A session opened before the reload: what it shows after it (and its TimeZone as the
    client last heard it, from ParameterStatus)."""
    with psycopg.connect(dsn, autocommit=True, **startup) as early:
        early.execute("SET statement_timeout = '7s'")
        loaded = early.execute("SELECT pg_conf_load_time()").fetchone()
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("ALTER SYSTEM SET work_mem = '8MB'")
            c.execute("ALTER SYSTEM SET statement_timeout = '9s'")
            c.execute("ALTER SYSTEM SET TimeZone = 'America/New_York'")
            c.execute("SELECT pg_reload_conf()")
        for _ in range(100):  # (until this backend has applied the reload: PostgreSQL's is a signal)
            if early.execute("SELECT pg_conf_load_time()").fetchone() != loaded:
                break
            time.sleep(0.05)
        shown = tuple(early.execute("SELECT current_setting('work_mem'), current_setting('TimeZone')").fetchone() or ())
        yield (
            *shown,
            early.execute("SHOW statement_timeout").fetchone()[0],  # type: ignore[index]
            early.execute("RESET statement_timeout") and early.execute("SHOW statement_timeout").fetchone()[0],  # type: ignore[index]
            early.info.parameter_status("TimeZone") or "",
        )
        with psycopg.connect(dsn, autocommit=True) as late:
            yield tuple(late.execute("SELECT current_setting('work_mem'), source FROM pg_settings WHERE name = 'work_mem'").fetchone() or ())


@pytest.mark.parametrize("startup", [{}, {"options": "-c work_mem=2MB -c TimeZone=UTC"}])
def test_a_reload_reaches_open_sessions_under_their_own_values(
    proxy: ProxyServer, pg: PgCluster, startup: dict[str, str]
) -> None:
    """A session applies a reload at its next statement, under what it SET and what its
    start-up packet gave (a client's value outranks the file's); RESET goes to the new
    value; a reported setting that changed reaches the client as ParameterStatus."""
    try:
        ours = list(_session_view(proxy.dsn(), **startup))
        _reset(proxy.dsn())
        theirs = list(_session_view(pg.dsn(), **startup))
    finally:
        _reset(proxy.dsn(), pg.dsn())
    assert ours == theirs


def _silent_stream_ends(dsn: str, slot: str) -> float:
    """A replication client that never answers (its socket read behind libpq's back, so
    nothing replies to the keepalives), after wal_sender_timeout is reloaded to one
    second: seconds until the server ends its stream."""
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("CREATE PUBLICATION silent FOR ALL TABLES")
    conn = psycopg2.connect(dsn, connection_factory=psycopg2.extras.LogicalReplicationConnection)
    sock = socket.socket(fileno=os.dup(conn.fileno()))
    try:
        cur = conn.cursor()
        cur.create_replication_slot(slot, output_plugin="pgoutput")
        cur.start_replication(
            slot_name=slot, decode=False, status_interval=3600,
            options={"proto_version": "1", "publication_names": "silent"},
        )
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("ALTER SYSTEM SET wal_sender_timeout = '1s'")
            c.execute("SELECT pg_reload_conf()")
        start = time.monotonic()
        sock.settimeout(1)
        while time.monotonic() - start < 30:
            try:
                if sock.recv(65536) == b"":
                    return time.monotonic() - start
            except TimeoutError:
                continue
            except OSError:
                return time.monotonic() - start
        return 999.0
    finally:
        sock.close()
        conn.close()
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("ALTER SYSTEM RESET wal_sender_timeout")
            c.execute("SELECT pg_reload_conf()")
            for _ in range(50):
                if c.execute("SELECT count(*) FROM pg_replication_slots WHERE slot_name = %s AND active", (slot,)).fetchone() == (0,):
                    break
                time.sleep(0.1)
            c.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
            c.execute("DROP PUBLICATION silent")


@pytest.mark.parametrize("processes", [False, True], ids=["in-server", "walsender-process"])
def test_a_reload_reaches_a_running_stream(pg: PgCluster, processes: bool) -> None:
    """wal_sender_timeout reloaded while a stream runs applies to it, as PostgreSQL's
    walsender applies a SIGHUP: a client that stopped answering is let go."""
    with ProxyServer(walsender_processes=processes) as proxy:
        ours = _silent_stream_ends(proxy.dsn(), "silent_ours")
    theirs = _silent_stream_ends(pg.dsn(), "silent_theirs")
    assert theirs < 10
    assert ours < 10


def test_a_restart_applies_the_file_but_not_over_the_command_line(tmp_path: object) -> None:
    with ProxyProcess() as p:
        with psycopg.connect(p.dsn(), autocommit=True) as c:
            c.execute("ALTER SYSTEM SET max_wal_senders = 3")
            c.execute("ALTER SYSTEM SET port = 1")  # (serve -p wins, as pg_ctl -o -p does)
            c.execute("ALTER SYSTEM SET work_mem = '3MB'")
            c.execute("SELECT pg_reload_conf()")
            assert c.execute(
                "SELECT name, pending_restart FROM pg_settings WHERE name IN ('max_wal_senders', 'port', 'work_mem') ORDER BY 1"
            ).fetchall() == [("max_wal_senders", True), ("port", False), ("work_mem", False)]
        p.restart()
        with psycopg.connect(p.dsn(), autocommit=True) as c:
            rows = c.execute(
                "SELECT name, setting, source, sourcefile LIKE '%/postgresql.auto.conf', pending_restart FROM pg_settings"
                " WHERE name IN ('max_wal_senders', 'port', 'work_mem') ORDER BY 1"
            ).fetchall()
        assert rows == [
            ("max_wal_senders", "3", "configuration file", True, False),
            ("port", str(p.port), "command line", None, False),
            ("work_mem", "3072", "configuration file", True, False),
        ]
        # a fourth replication connection is one too many now
        conns = [psycopg.connect(p.dsn(replication="database")) for _ in range(3)]
        try:
            with pytest.raises(psycopg.OperationalError, match="exceeds max_wal_senders"):
                psycopg.connect(p.dsn(replication="database"))
        finally:
            for c2 in conns:
                c2.close()


def test_a_broken_file_is_reported_and_changes_nothing(proxy: ProxyServer) -> None:
    with Client(proxy.dsn()) as c:
        assert c("ALTER SYSTEM SET work_mem = '5MB'") == ("done", "ALTER SYSTEM")
        assert c("SELECT pg_reload_conf()")[2] == [(True,)]
        assert c("SHOW work_mem")[2] == [("5MB",)]
        path = proxy.dir / "postgresql.auto.conf"
        path.write_text(path.read_text() + "work_mem = = 7\n")
        assert c("SELECT pg_reload_conf()")[2] == [(True,)]
        assert c("SHOW work_mem")[2] == [("5MB",)]
        path.write_text(path.read_text().replace("work_mem = = 7\n", "work_mem = 'lots'\n"))
        c("SELECT pg_reload_conf()")
        rows = c("SELECT name, setting, applied, error FROM pg_file_settings ORDER BY seqno")[2]
        assert rows == [
            ("work_mem", "5MB", False, None),
            ("work_mem", "lots", False, 'invalid value for parameter "work_mem": "lots"'),
        ]
        assert c("SHOW work_mem")[2] == [("5MB",)]
    _reset(proxy.dsn())
