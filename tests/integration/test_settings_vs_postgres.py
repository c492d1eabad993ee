"""Settings read, checked and shown as PostgreSQL 15 does: values with units, PostgreSQL's
errors and HINTs when SET or sent at start-up, and the server's configured values in SHOW,
current_setting() and pg_settings."""

from __future__ import annotations

import socket

import psycopg
import pytest

from tests.integration.test_server_protocol import read_messages
from tests.pgcluster import PgCluster
from tests.proxy import ProxyServer
from walsender_proxy.protocol import BackendParser
from walsender_proxy.protocol import messages as m

#: (setting, value) pairs SET as text literals: units, rounding, octal and hexadecimal,
#: out of range, bad units, wrong types, enums with hidden values.
SET_CASES = [
    ("logical_decoding_work_mem", v)
    for v in ("1MB", "1mb", "10", "1.5MB", "1.7MB", "1.0001GB", "0x100", "010", "2048 B", "3000000000", "abc", "64.4", "1TB", "0.5kB", "64 kB ", "1 GB x")
] + [
    ("lock_timeout", v)
    for v in ("-1", "5 parsecs", "3000000000", "1e3", "0.5ms", "1.5ms", "2.5ms", " 5s ", "nan", "inf", "+5", "0.6", "2.5", "0x10s", "1.5min", "1500us", "1e-3s", ".5s", "5.", "1e10us", "1e", "1d", "25h")
] + [
    ("statement_timeout", "1min"), ("statement_timeout", "1 min"), ("deadlock_timeout", "0"),
    ("wal_sender_timeout", "1h"), ("wal_sender_timeout", "10 s"), ("wal_sender_timeout", "-5"),
    ("idle_in_transaction_session_timeout", "2d"),
    ("extra_float_digits", "5"), ("extra_float_digits", "1kB"), ("extra_float_digits", "2.6"), ("extra_float_digits", "1.4"),
    ("jit", "maybe"), ("jit", "of"), ("jit", " on"), ("jit", "TRU"), ("row_security", "0"),
    ("bytea_output", "x"), ("bytea_output", "HEX"), ("client_min_messages", "x"), ("client_min_messages", "debug"),
    ("synchronous_commit", "x"), ("synchronous_commit", "TRUE"), ("default_transaction_isolation", "x"),
    ("standard_conforming_strings", "x"), ("max_wal_senders", "5"), ("server_version", "1"), ("port", "1"),
    # settings that shape plans and memory only: accepted, checked, shown
    ("work_mem", "4MB"), ("work_mem", "x"), ("enable_seqscan", "off"), ("enable_hashagg", "maybe"),
    ("random_page_cost", "2"), ("random_page_cost", "1.5e1"), ("random_page_cost", "x"),
    ("random_page_cost", "nan"), ("jit_above_cost", "-5"), ("vacuum_cost_delay", "1.5ms"),
    ("vacuum_cost_delay", "2s"), ("vacuum_cost_delay", "3 parsecs"), ("max_parallel_workers_per_gather", "0"),
    ("default_statistics_target", "20000"), ("cursor_tuple_fraction", "2"),
    ("synchronize_seqscans", "off"), ("synchronize_seqscans", "x"),
    # what pg_dump's scripts set
    ("default_tablespace", ""), ("default_tablespace", "pg_default"), ("default_tablespace", "nosuch"),
    ("default_table_access_method", "heap"), ("default_table_access_method", "columnar"),
]


def _set_outcome(conn: psycopg.Connection[tuple[object, ...]], name: str, value: str) -> tuple[object, ...]:
    try:
        conn.execute(f"SET {name} = '{value}'")
    except psycopg.Error as e:
        return ("error", e.sqlstate, e.diag.message_primary, e.diag.message_hint)
    setting = conn.execute("SELECT setting FROM pg_settings WHERE name = %s", (name,)).fetchone()
    shown = conn.execute(f"SHOW {name}").fetchone()
    current = conn.execute("SELECT current_setting(%s)", (name,)).fetchone()
    conn.execute(f"RESET {name}")
    return ("set", setting, shown, current)


def test_set_reads_values_as_postgresql_does(pg15: PgCluster, proxy: ProxyServer) -> None:
    """Every value through PostgreSQL's parser: the same canonical setting, SHOW text and
    current_setting(), or the same 22023/55P02 with the same message and HINT."""
    with psycopg.connect(pg15.dsn(), autocommit=True) as pg, psycopg.connect(proxy.dsn(), autocommit=True) as px:
        want = [(n, v, _set_outcome(pg, n, v)) for n, v in SET_CASES]
        got = [(n, v, _set_outcome(px, n, v)) for n, v in SET_CASES]
    assert got == want


def _startup_error(port: int, options: str) -> tuple[object, ...]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(m.StartupMessage({"user": "postgres", "database": "postgres", "options": options}).encode())
        msgs = read_messages(s)
    errs = [x for x in msgs if isinstance(x, m.ErrorResponse)]
    if not errs:
        return ("ok",)
    f = errs[-1].fields
    return (f.get("S"), f.get("C"), f.get("M"), f.get("H"))


@pytest.mark.parametrize(
    "options",
    ["-c logical_decoding_work_mem=1mb", "-c logical_decoding_work_mem=1MB", "-c lock_timeout=5parsecs",
     "-c wal_sender_timeout=-1", "-c max_wal_senders=5", "-c jit=maybe", "-c bytea_output=x"],
)
def test_start_up_options_are_checked_as_postgresql_checks_them(pg15: PgCluster, proxy: ProxyServer, options: str) -> None:
    assert _startup_error(proxy.port, options) == _startup_error(pg15.port, options)


@pytest.mark.parametrize("how", ["start-up options", "SET"])
def test_start_replication_with_work_mem_in_units_streams(proxy: ProxyServer, how: str) -> None:
    """``logical_decoding_work_mem = '1MB'`` (the form every guide uses) is 1024 kB: the
    walsender streams with it (it used to end the connection with a ValueError)."""
    slot = "wm_" + how.split()[0].replace("-", "_").lower()
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE IF NOT EXISTS wm (id int PRIMARY KEY, v text)")
        c.execute("DROP PUBLICATION IF EXISTS pwm")
        c.execute("CREATE PUBLICATION pwm FOR TABLE wm")
    with psycopg.connect(proxy.dsn(replication="database"), autocommit=True) as c:
        c.execute(f"CREATE_REPLICATION_SLOT {slot} LOGICAL pgoutput (SNAPSHOT 'nothing')")
    params = {"user": "postgres", "database": "postgres", "replication": "database"}
    if how == "SET":
        prelude = m.Query("SET logical_decoding_work_mem = '1MB'").encode()
    else:
        params["options"] = "-c logical_decoding_work_mem=1MB"
        prelude = b""
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as s:
        s.sendall(m.StartupMessage(params).encode() + prelude)
        read_messages(s, count=2 if prelude else 1)
        s.sendall(m.Query("SHOW logical_decoding_work_mem").encode())
        shown = [x.values for x in read_messages(s) if isinstance(x, m.DataRow)]
        assert shown == [(b"1MB",)]
        s.sendall(m.Query(f"START_REPLICATION SLOT {slot} LOGICAL 0/0 (proto_version '1', publication_names 'pwm')").encode())
        with psycopg.connect(proxy.dsn(), autocommit=True) as c:
            c.execute(f"INSERT INTO wm VALUES ({len(how)}, 'streamed with 1MB')")
        parser = BackendParser()
        seen = b""
        while b"streamed with 1MB" not in seen:
            data = s.recv(65536)
            assert data, "the walsender closed the connection"
            parser.feed(data)
            for msg in parser:
                assert not isinstance(msg, m.ErrorResponse), msg.fields  # type: ignore[attr-defined]
                if isinstance(msg, m.CopyData):
                    seen += msg.data


def test_show_on_a_replication_connection_words_values_as_sql_show(pg15: PgCluster, proxy: ProxyServer) -> None:
    """SHOW in the replication grammar (pg_basebackup and some CDC tools ask for
    wal_sender_timeout so) gives the canonical name and the value with its unit."""

    def shown(dsn: str) -> list[tuple[object, ...]]:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("SET lock_timeout = '90s'")
            out = []
            for name in ("wal_sender_timeout", "logical_decoding_work_mem", "timezone", "lock_timeout", "DateStyle"):
                cur = c.execute(f"SHOW {name}")
                assert cur.description is not None
                out.append((cur.description[0].name, cur.fetchone()))
            return out

    assert shown(proxy.dsn(replication="database")) == shown(pg15.dsn(replication="database"))


#: Settings the server takes from its configuration (PostgreSQL 15's names).
CONFIGURED = (
    "max_wal_senders", "max_replication_slots", "max_connections", "listen_addresses", "wal_sender_timeout",
    "fsync", "authentication_timeout", "ssl", "wal_level",
)  # fmt: skip


def _configured(dsn: str, port: int) -> list[tuple[object, ...]]:
    """SHOW, current_setting() and pg_settings of the configured settings (the port is
    each server's own)."""
    with psycopg.connect(dsn, autocommit=True) as c:
        out: list[tuple[object, ...]] = []
        for name in (*CONFIGURED, "port"):
            shown = c.execute(f"SHOW {name}").fetchone()
            current = c.execute("SELECT current_setting(%s)", (name,)).fetchone()
            setting = c.execute("SELECT setting, unit FROM pg_settings WHERE name = %s", (name,)).fetchone()
            assert shown is not None and current is not None and setting is not None
            if name == "port":
                assert shown[0] == current[0] == setting[0] == str(port)
                continue
            out.append((name, shown[0], current[0], *setting))
    return out


def test_server_settings_show_their_configured_values(pg15: PgCluster) -> None:
    """max_wal_senders = 20 is shown as 20 (it was 10, PostgreSQL's default, whatever the
    configuration said), and so for every configured setting PostgreSQL has."""
    with ProxyServer(max_wal_senders=20, max_replication_slots=20) as p:  # as the PostgreSQL fixture
        assert _configured(p.dsn(), p.port) == _configured(pg15.dsn(), pg15.port)
    with ProxyServer(max_wal_senders=7, max_replication_slots=9, max_connections=50, wal_sender_timeout=10.0) as p:
        got = {name: shown for name, shown, *_ in _configured(p.dsn(), p.port)}
    assert (got["max_wal_senders"], got["max_replication_slots"], got["max_connections"], got["wal_sender_timeout"]) == ("7", "9", "50", "10s")


def test_pg_settings_sources_and_reset_values(pg15: PgCluster, proxy: ProxyServer) -> None:
    """A value from the start-up packet has source "client" and is what RESET returns to;
    SET makes it "session"; values nobody set keep the server's source."""

    def story(dsn: str) -> list[object]:
        with psycopg.connect(dsn, autocommit=True, options="-c lock_timeout=5s", application_name="srcs") as c:
            q = "SELECT name, setting, source, reset_val FROM pg_settings WHERE name IN ('lock_timeout', 'statement_timeout', 'application_name', 'search_path') ORDER BY name"
            out: list[object] = [c.execute(q).fetchall()]
            c.execute("SET lock_timeout = 1000")
            c.execute("SET statement_timeout = '1min'")
            out.append(c.execute(q).fetchall())
            c.execute("RESET lock_timeout")
            c.execute("RESET statement_timeout")
            out.append(c.execute(q).fetchall())
            out.append(c.execute("SHOW lock_timeout").fetchall())
            return out

    assert story(proxy.dsn()) == story(pg15.dsn())


SET_SCRIPTS = [
    ["BEGIN", "SET lock_timeout = 5000", "ROLLBACK", "SHOW lock_timeout"],
    ["BEGIN", "SET lock_timeout = 5000", "SELECT 1/0", "ROLLBACK", "SHOW lock_timeout"],
    ["BEGIN", "SET lock_timeout = 5000", "SAVEPOINT a", "SET lock_timeout = 7000", "ROLLBACK TO a", "SHOW lock_timeout",
     "SET lock_timeout = 8000", "RELEASE a", "COMMIT", "SHOW lock_timeout"],
    ["BEGIN", "SET LOCAL lock_timeout = 5000", "SET lock_timeout = 6000", "COMMIT", "SHOW lock_timeout"],
    ["SET lock_timeout = 1000; SELECT 1/0", "SHOW lock_timeout"],
    ["BEGIN", "SET application_name = 'rolled back'", "ROLLBACK", "SHOW application_name"],
    ["SELECT set_config('lock_timeout', '3000', false), 1/0", "SHOW lock_timeout"],
    ["SELECT set_config('lock_timeout', '3000', false), current_setting('lock_timeout')", "SHOW lock_timeout"],
    ["SELECT set_config('logical_decoding_work_mem', '1MB', false)", "SELECT set_config('DateStyle', 'iso,dmy', false)"],
    ["SELECT set_config('lock_timeout', '5 parsecs', false)"],
    # custom settings (placeholders): any dotted name, any text, transactional, out of pg_settings
    ["SET app.user_id = '42'", "SHOW app.user_id", "SELECT current_setting('app.user_id'), current_setting('app.nope', true)",
     "SELECT set_config('app.role', 'reader', false), current_setting('app.role')", "SHOW app.nope",
     "SELECT count(*) FROM pg_settings WHERE name LIKE 'app.%'"],
    ["BEGIN", "SET app.t = 'in tx'", "ROLLBACK", "SHOW app.t", "BEGIN", "SET LOCAL app.t = 'local'", "SHOW app.t", "COMMIT",
     "SHOW app.t", "SET app.t = 'x'", "RESET ALL", "SHOW app.t", "SET a.b.c = 'deep'", "SHOW a.b.c"],
    ["SET \"bad name.x\" = 1", "SET app.\"9x\" = 1", "SELECT current_setting('App.User_Id', true)"],
]


@pytest.mark.parametrize("script", SET_SCRIPTS, ids=[" / ".join(s) for s in SET_SCRIPTS])
def test_set_is_undone_with_its_transaction(pg15: PgCluster, proxy: ProxyServer, script: list[str]) -> None:
    """SET in a transaction that rolls back (explicitly, by an error, to a savepoint, in an
    implicit transaction of a multi-statement query) is undone, as PostgreSQL undoes it
    (the proxy kept it); set_config() takes effect at once and returns the value as SHOW
    gives it (it returned its argument, and current_setting() in the same statement saw
    the old value)."""

    def run(dsn: str) -> list[object]:
        out: list[object] = []
        with psycopg.connect(dsn, autocommit=True) as c:
            for q in script:
                try:
                    cur = c.execute(q)
                    out.append(cur.fetchall() if cur.description else cur.statusmessage)
                except psycopg.Error as e:
                    out.append(("error", e.sqlstate, e.diag.message_primary, e.diag.message_hint))
            out.append(c.info.parameter_status("application_name"))  # ParameterStatus after a rollback
        return out

    assert run(proxy.dsn()) == run(pg15.dsn())
