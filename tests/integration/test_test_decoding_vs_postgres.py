"""The test_decoding output plugin beside PostgreSQL 15's contrib/test_decoding: the lines
pg_recvlogical prints for inserts, updates (with and without a changed key, under
REPLICA IDENTITY DEFAULT, FULL and none), deletes, TRUNCATE with its flags, messages,
DDL mid-stream, quoted names and the values of many types — compared line by line —
with its options (include-xids, include-timestamp, skip-empty-xacts) and its option
errors. What it refuses says so (0A000)."""

from __future__ import annotations

import re
import select
import subprocess
import time

import psycopg
import pytest

from tests.pgcluster import PgCluster, pg_bindir
from tests.pgcompare import recvlogical
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration

SETUP = [
    "create table td_t (id int primary key, name text, v numeric, n numeric(6,2), f float8, r real, b boolean,"
    " ts timestamptz, t timestamp, d date, arr int[], j jsonb, js json, vc varchar(10), c char(3), by bytea, u uuid, i interval)",
    "create table td_full (a int, b text)",
    "alter table td_full replica identity full",
    "create table td_none (a int)",
    'create table "Td Odd" ("Col A" int, "select" text)',
    "create domain td_dom as int check (value > 0)",
    "create type td_en as enum ('x', 'y')",
    "create table td_user (k int primary key, dd td_dom, e td_en, ea td_en[])",
]

WRITES = [
    "insert into td_t values (1, 'it''s \\ \"q\"', 1.50, 3.14159, 1.5, 2.5, true, '2020-01-01 00:00:00+00', '2020-01-01 01:02:03.5',"
    " '2020-02-29', '{1,NULL}', '{\"a\": [1, 2]}', '{\"b\":1}', 'x', 'ab', '\\x0aff', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '1 day 2 hours')",
    "insert into td_t (id, f, r) values (2, 'NaN', '-Infinity')",
    "update td_t set name = 'b' where id = 1",
    "update td_t set id = 3 where id = 2",
    "delete from td_t where id = 3",
    "insert into td_full values (1, 'x'), (2, null)",
    "update td_full set b = 'y' where a = 1",
    "delete from td_full where a = 2",
    "delete from td_full where a = 1",
    "insert into td_none values (1)",
    "update td_none set a = 2",
    "delete from td_none",
    'insert into "Td Odd" values (1, \'s\')',
    "insert into td_user values (1, 5, 'y', '{x,y}')",
    "alter table td_full add column c int",
    "insert into td_full values (3, 'z', 7)",
    'truncate td_full, "Td Odd"',
    "truncate td_none restart identity cascade",
    "begin; select pg_logical_emit_message(true, 'pfx', 'hello'); commit",
    "select pg_logical_emit_message(false, 'pfx', 'outside')",
    "begin; insert into td_none values (5); insert into td_none values (6); commit",
    "begin; rollback",
]


def _decoded(dsn: str, slot: str, *options: str) -> list[str]:
    with psycopg.connect(dsn, autocommit=True) as c:
        for sql in SETUP:
            c.execute(sql)
    recvlogical(dsn, slot, "--create-slot", "-P", "test_decoding")
    with psycopg.connect(dsn, autocommit=True) as c:
        for sql in WRITES:
            c.execute(sql)
        end = str(c.execute("select pg_current_wal_insert_lsn()").fetchone()[0])  # type: ignore[index]
    out = recvlogical(dsn, slot, "--start", "-f", "-", f"--endpos={end}", "--no-loop", *options)
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("select pg_drop_replication_slot(%s)", [slot])
        for t in ("td_t", "td_full", "td_none", '"Td Odd"', "td_user"):
            c.execute(f"drop table {t}")
        c.execute("drop domain td_dom")
        c.execute("drop type td_en")
    return out.decode().splitlines()


@pytest.mark.parametrize(
    "options",
    [("-o", "include-xids=0"), ("-o", "include-xids=off", "-o", "skip-empty-xacts=1")],
    ids=["every-transaction", "skip-empty-xacts"],
)
def test_lines_as_postgres(proxy: ProxyServer, pg15: PgCluster, options: tuple[str, ...]) -> None:
    theirs = _decoded(pg15.dsn(dbname=pg15.new_database("tdec")), "tdec", *options)
    ours = _decoded(proxy.dsn(), "tdec", *options)
    assert ours == theirs
    assert any(line.startswith("table public.td_t: INSERT:") for line in ours)


def test_xids_and_timestamps_are_written_as_postgres_writes_them(proxy: ProxyServer, pg15: PgCluster) -> None:
    """include-xids (on by default) and include-timestamp: the same lines but for the
    transaction ids and commit times, which are each server's own."""
    shapes = []
    for dsn in (pg15.dsn(dbname=pg15.new_database("tdx")), proxy.dsn()):
        lines = _decoded(dsn, "tdx", "-o", "include-timestamp")
        shapes.append([re.sub(r"\(at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\+00\)", "(at T)", re.sub(r"^(BEGIN|COMMIT) \d+", r"\1 X", x)) for x in lines])
    assert shapes[1] == shapes[0]
    assert "COMMIT X (at T)" in shapes[1]


@pytest.mark.parametrize(
    "option",
    ["include-xids=maybe", "nosuch=1", "nosuch", "skip-empty-xacts=", "stream-changes=perhaps"],
)
def test_bad_options_are_refused_as_postgres_refuses_them(proxy: ProxyServer, pg15: PgCluster, option: str) -> None:
    """pg_decode_startup's 22023 errors, word for word."""
    errors = []
    for dsn in (pg15.dsn(dbname=pg15.new_database("tdo")), proxy.dsn()):
        recvlogical(dsn, "tdo", "--create-slot", "-P", "test_decoding")
        try:
            r = subprocess.run(
                [str(pg_bindir() / "pg_recvlogical"), "-d", dsn, "-S", "tdo", "--start", "-f", "-", "--no-loop", "-o", option, "--endpos=0/1"],
                capture_output=True, timeout=60, text=True,
            )  # fmt: skip
            errors.append(r.stderr.strip().splitlines()[0] if r.stderr.strip() else "")
        finally:
            with psycopg.connect(dsn, autocommit=True) as c:
                c.execute("select pg_drop_replication_slot('tdo')")
    assert errors[1] == errors[0] and "ERROR" in errors[0]


def test_lines_from_the_server_process_as_postgres(pg15: PgCluster, tmp_path: object) -> None:
    """The same lines when the stream stays in the server process (walsender processes
    off) as when a walsender process runs it."""
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    theirs = _decoded(pg15.dsn(dbname=pg15.new_database("tdin")), "tdin", "-o", "include-xids=0")
    with ProxyServer(tmp_path / "proxy", walsender_processes=False) as p:
        assert _decoded(p.dsn(), "tdin", "-o", "include-xids=0") == theirs


SQL_API = [
    "set synchronous_commit = on",  # (the test cluster's default is off: its flush position would lag)
    "select slot_name from pg_create_logical_replication_slot('tds1', 'test_decoding')",
    "create table tds_t (id int primary key, v text)",
    "insert into tds_t values (1, 'a'), (2, 'b')",
    "update tds_t set v = 'c' where id = 1",
    "select data from pg_logical_slot_peek_changes('tds1', NULL, NULL, 'include-xids', '0')",
    "select data from pg_logical_slot_get_changes('tds1', NULL, 2, 'include-xids', '0')",
    "select data from pg_logical_slot_get_changes('tds1', NULL, NULL, 'include-xids', '0', 'skip-empty-xacts', '1')",
    "select data from pg_logical_slot_get_changes('tds1', NULL, NULL)",
    "select pg_typeof(lsn)::text, pg_typeof(xid)::text, pg_typeof(data)::text from pg_logical_slot_peek_changes('tds1', NULL, NULL) limit 1",
    "select count(*) from pg_logical_slot_peek_changes('tds1', NULL, NULL, 'include-xids')",
    "select * from pg_logical_slot_get_changes('tds1', NULL, NULL, 'nosuch', '1')",
    "select * from pg_logical_slot_get_changes('nosuch', NULL, NULL)",
    "select * from pg_logical_slot_get_changes(NULL, NULL, NULL)",
    "select * from pg_logical_slot_get_changes('tds1', NULL, NULL, NULL, 'x')",
    "select * from pg_logical_slot_get_changes('tds1', NULL, NULL, 'force-binary', '1')",
    "insert into tds_t values (3, 'z')",
    "delete from tds_t where id = 2",
    "select data from pg_logical_slot_peek_changes('tds1', NULL, NULL, VARIADIC array['include-xids', 'off'])",
    "select encode(data, 'escape') from pg_logical_slot_peek_binary_changes('tds1', NULL, NULL, 'include-xids', '0')",
    "select data from pg_logical_slot_get_changes('tds1', NULL, NULL, 'include-xids', '0')",
    "select data from pg_logical_slot_get_changes('tds1', NULL, NULL, 'include-xids', '0')",
    "select pg_drop_replication_slot('tds1')",
    "select slot_name from pg_create_logical_replication_slot('tds2', 'pgoutput')",
    "select * from pg_logical_slot_get_changes('tds2', NULL, NULL, 'proto_version', '1', 'publication_names', 'p')",
    "select count(*) from pg_logical_slot_peek_binary_changes('tds2', NULL, NULL, 'proto_version', '1')",
    "select pg_drop_replication_slot('tds2')",
    # upto_nchanges is checked after each log record: a negative one stops after the first
    "select slot_name from pg_create_logical_replication_slot('tds3', 'test_decoding')",
    "create table tds_n (a int)",
    "insert into tds_n values (1)",
    "insert into tds_n values (2)",
    "select data from pg_logical_slot_get_changes('tds3', NULL, -1, 'include-xids', '0')",
    "select data from pg_logical_slot_get_changes('tds3', NULL, 1, 'include-xids', '0')",
    "select data from pg_logical_slot_get_changes('tds3', NULL, NULL, 'include-xids', '0')",
    "select pg_drop_replication_slot('tds3')",
    "drop table tds_n",
    "drop table tds_t",
]


def test_sql_slot_functions_as_postgres(proxy: ProxyServer, pg15: PgCluster) -> None:
    """pg_logical_slot_get_changes / peek_changes (and their binary forms) with
    test_decoding: the rows, what `get` consumes, upto_nchanges, the options and the errors."""
    from tests.pgcompare import same_answers

    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("tdsql")), SQL_API).close()


def _psycopg2_lines(dsn: str) -> list[str]:
    """What a psycopg2 LogicalReplicationConnection consumer, written as its documentation
    shows, reads from a test_decoding slot (the way most tutorials consume one)."""
    import psycopg2
    import psycopg2.extras

    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("create table tdp (id int primary key, v text)")
        c.execute("select pg_create_logical_replication_slot('tdp', 'test_decoding')")
        c.execute("insert into tdp values (1, 'a'), (2, 'b')")
        c.execute("update tdp set v = 'c' where id = 2")
        c.execute("delete from tdp where id = 1")
    conn = psycopg2.connect(dsn, connection_factory=psycopg2.extras.LogicalReplicationConnection)
    lines: list[str] = []
    try:
        cur = conn.cursor()
        cur.start_replication(slot_name="tdp", decode=True, options={"include-xids": "0", "skip-empty-xacts": "1"})
        deadline = time.monotonic() + 30
        while len(lines) < 10 and time.monotonic() < deadline:  # (three transactions: 4 + 3 + 3 lines)
            msg = cur.read_message()
            if msg is None:
                select.select([cur], [], [], 1.0)
                continue
            lines.append(msg.payload)
            msg.cursor.send_feedback(flush_lsn=msg.data_start)
    finally:
        conn.close()
    with psycopg.connect(dsn, autocommit=True) as c:
        for _ in range(50):  # (the walsender lets the slot go as its connection ends)
            try:
                c.execute("select pg_drop_replication_slot('tdp')")
                break
            except psycopg.errors.ObjectInUse:
                time.sleep(0.1)
        c.execute("drop table tdp")
    return lines


def test_a_psycopg2_consumer_reads_what_it_reads_from_postgres(proxy: ProxyServer, pg15: PgCluster) -> None:
    theirs = _psycopg2_lines(pg15.dsn(dbname=pg15.new_database("tdp")))
    assert _psycopg2_lines(proxy.dsn()) == theirs
    assert theirs[-1] == "COMMIT" and "table public.tdp: DELETE: id[integer]:1" in theirs
