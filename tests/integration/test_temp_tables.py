"""Temporary tables as PostgreSQL 15 has them: private to their session and first in its
search path, transactional, ON COMMIT DROP / DELETE ROWS, gone with the session and with
DISCARD TEMP, listed in pg_class as ``relpersistence = 't'`` in a ``pg_temp_N`` schema, and
never in a publication nor in a logical replication stream. Each answer is compared with a
real PostgreSQL 15 doing the same."""

from __future__ import annotations

import time
from pathlib import Path

import psycopg

from tests.pgcluster import PgCluster
from tests.pgcompare import Client, pgoutput_messages, recvlogical, stream_shape
from tests.proxy import ProxyProcess, ProxyServer

#: One session's statements (COPY rows follow a COPY FROM STDIN as its data).
SESSION = [
    "CREATE TEMP TABLE tt (a int PRIMARY KEY, b text NOT NULL)",
    "INSERT INTO tt VALUES (1, 'x'), (2, 'y')",
    "INSERT INTO tt VALUES (2, 'dup')",
    "INSERT INTO tt VALUES (3, NULL)",
    "UPDATE tt SET b = 'z' WHERE a = 2",
    "DELETE FROM tt WHERE a = 1",
    "SELECT * FROM tt ORDER BY a",
    "SELECT c.relname, c.relpersistence, n.nspname LIKE 'pg_temp_%' FROM pg_class c"
    " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 'tt'",
    # a permanent table of the same name is hidden behind the temporary one
    "CREATE TABLE tt (a int)",
    "INSERT INTO tt VALUES (5)",
    "SELECT * FROM tt ORDER BY a",
    "SELECT * FROM public.tt",
    "DROP TABLE tt",
    "SELECT * FROM tt",
    # transactional, and ON COMMIT
    "BEGIN",
    "CREATE TEMP TABLE t2 (x int) ON COMMIT DROP",
    "INSERT INTO t2 VALUES (1)",
    "SELECT * FROM t2",
    "COMMIT",
    "SELECT * FROM t2",
    "CREATE TEMP TABLE t3 (x int) ON COMMIT DELETE ROWS",
    "INSERT INTO t3 VALUES (1)",
    "SELECT * FROM t3",
    "BEGIN",
    "INSERT INTO t3 VALUES (2)",
    "SELECT * FROM t3",
    "COMMIT",
    "SELECT * FROM t3",
    "BEGIN",
    "CREATE TEMP TABLE t4 (x int)",
    "ROLLBACK",
    "SELECT * FROM t4",
    "BEGIN",
    "CREATE TEMP TABLE t4 (x int)",
    "SAVEPOINT s",
    "INSERT INTO t4 VALUES (1)",
    "ROLLBACK TO s",
    "INSERT INTO t4 VALUES (2)",
    "COMMIT",
    "SELECT * FROM t4",
    "CREATE TEMP TABLE t5 (x int) ON COMMIT DROP",
    "SELECT * FROM t5",
    # where a temporary table can and cannot be
    "CREATE TABLE t6 (x int) ON COMMIT DROP",
    "CREATE TEMP TABLE public.t7 (x int)",
    "CREATE TABLE pg_temp.t8 (x int)",
    "INSERT INTO pg_temp.t8 VALUES (8)",
    "SELECT * FROM t8",
    "SELECT * FROM pg_temp.t8",
    "CREATE PUBLICATION tp FOR TABLE t8",
    "CREATE PUBLICATION tp_all FOR ALL TABLES",
    "SELECT pubname, tablename FROM pg_publication_tables WHERE pubname = 'tp_all' ORDER BY tablename",
    "DISCARD TEMP",
    "SELECT * FROM t8",
    "CREATE TEMP TABLE t9 (x int, y text)",
    "COPY t9 FROM STDIN",
    "SELECT * FROM t9 ORDER BY x",
    "INSERT INTO t9 SELECT x + 10, y FROM t9",
    "SELECT count(*), sum(x) FROM t9",
    # a transaction that read, wrote or created one cannot be prepared
    "BEGIN",
    "SELECT count(*) FROM t9",
    "PREPARE TRANSACTION 'tmp_read'",
    "BEGIN",
    "INSERT INTO t9 VALUES (99, 'x')",
    "PREPARE TRANSACTION 'tmp_write'",
    "BEGIN",
    "CREATE TEMP TABLE t10 (x int)",
    "PREPARE TRANSACTION 'tmp_create'",
    "SELECT count(*), sum(x) FROM t9",
    # a temporary sequence or view is a temporary object too
    "CREATE TEMP SEQUENCE ts1",
    "BEGIN",
    "SELECT nextval('ts1')",
    "PREPARE TRANSACTION 'tmp_nextval'",
    "BEGIN",
    "SELECT last_value FROM ts1",
    "PREPARE TRANSACTION 'tmp_seq_read'",
    "BEGIN",
    "CREATE SEQUENCE pg_temp.ts2",
    "PREPARE TRANSACTION 'tmp_seq'",
    "BEGIN",
    "CREATE VIEW pg_temp.tv AS SELECT 1 AS one",
    "PREPARE TRANSACTION 'tmp_view'",
    "SELECT count(*) FROM pg_prepared_xacts",
    # ON COMMIT DELETE ROWS of a table another references: the COMMIT fails (and rolls back)
    "BEGIN",
    "CREATE TEMP TABLE t11 (x int PRIMARY KEY) ON COMMIT DELETE ROWS",
    "CREATE TEMP TABLE t12 (x int REFERENCES t11)",
    "INSERT INTO t11 VALUES (1)",
    "COMMIT",
    "SELECT count(*) FROM pg_class WHERE relname IN ('t11', 't12')",
    # both emptied at commit: together, as PostgreSQL truncates them
    "BEGIN",
    "CREATE TEMP TABLE t13 (x int PRIMARY KEY) ON COMMIT DELETE ROWS",
    "CREATE TEMP TABLE t14 (x int REFERENCES t13) ON COMMIT DELETE ROWS",
    "INSERT INTO t13 VALUES (1)",
    "INSERT INTO t14 VALUES (1)",
    "COMMIT",
    "SELECT (SELECT count(*) FROM t13), (SELECT count(*) FROM t14)",
    # a partitioned table's DELETE ROWS leaves partitions that keep their rows
    "BEGIN",
    "CREATE TEMP TABLE tp (a int) PARTITION BY LIST (a) ON COMMIT DELETE ROWS",
    "CREATE TEMP TABLE tp1 PARTITION OF tp FOR VALUES IN (1)",
    "CREATE TEMP TABLE tp2 PARTITION OF tp FOR VALUES IN (2) ON COMMIT DELETE ROWS",
    "CREATE TEMP TABLE tp3 PARTITION OF tp FOR VALUES IN (3) ON COMMIT DROP",
    "INSERT INTO tp VALUES (1), (2), (3)",
    "COMMIT",
    "SELECT * FROM tp ORDER BY a",
    "SELECT relname FROM pg_class WHERE relname LIKE 'tp_' ORDER BY 1",
    # a partition is temporary exactly when its parent is
    "CREATE TABLE tp_perm PARTITION OF tp DEFAULT",
    "CREATE TABLE tq_perm (a int) PARTITION BY LIST (a)",
    "CREATE TEMP TABLE tq_temp PARTITION OF tq_perm DEFAULT",
    "CREATE TEMP TABLE tq_temp2 (a int)",
    "ALTER TABLE tq_perm ATTACH PARTITION tq_temp2 FOR VALUES IN (1)",
    "CREATE TABLE tq_perm2 (a int)",
    "ALTER TABLE tp ATTACH PARTITION tq_perm2 FOR VALUES IN (5)",
    "DROP TABLE tq_perm, tq_perm2",
]
COPY_ROWS = [b"1\tone\n", b"2\ttwo\n"]


def _play(client: Client, conn: psycopg.Connection, sql: str) -> object:
    if sql.startswith("COPY") and "FROM STDIN" in sql:
        with conn.cursor() as cur, cur.copy(sql) as copy:
            for row in COPY_ROWS:
                copy.write(row)
        return ("copied",)
    return client(sql)


def test_temporary_tables_answer_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    ref, got = Client(pg15.dsn(dbname=pg15.new_database("temp"))), Client(proxy.dsn())
    try:
        for sql in SESSION:
            assert repr(_play(got, got.conn, sql)) == repr(_play(ref, ref.conn, sql)), sql
        # another session sees neither the tables nor their names unqualified
        with Client(proxy.dsn()) as other:
            assert other("SELECT * FROM t9")[:2] == ("error", "42P01")
            assert other("CREATE TEMP TABLE t9 (z int)") == ("done", "CREATE TABLE")
            # (the failed COMMIT above held no lock past its end: DDL goes on)
            other("SET lock_timeout = '5s'")
            assert other("CREATE TABLE after_failed_commit (z int)") == ("done", "CREATE TABLE")
    finally:
        ref.close()
        got.close()
    # the session's end drops them: a new session soon finds no temporary table left (the
    # drop follows the disconnection, as a PostgreSQL backend's exit does)
    with Client(proxy.dsn()) as after:
        deadline = time.monotonic() + 10
        while (left := after("SELECT count(*) FROM pg_class WHERE relpersistence = 't'")) != (
            "rows", [("count", 20)], [(0,)]
        ) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left == ("rows", [("count", 20)], [(0,)])


#: Writes to temporary and to ordinary tables in the same transactions: a slot of a FOR
#: ALL TABLES publication streams the ordinary tables' changes only (PostgreSQL never logs
#: a temporary table's), and no transaction for one that wrote temporary tables only.
STREAMED = [
    "CREATE TABLE keep (id int PRIMARY KEY, v text)",
    "CREATE PUBLICATION p FOR ALL TABLES",
]
WRITES = [
    "CREATE TEMP TABLE scratch (id int, v text) ON COMMIT DELETE ROWS",
    "INSERT INTO scratch VALUES (1, 'a'), (2, 'b')",
    "BEGIN",
    "INSERT INTO scratch VALUES (3, 'c')",
    "INSERT INTO keep SELECT id, v FROM scratch",
    "UPDATE scratch SET v = 'changed'",
    "COMMIT",
    "BEGIN",
    "INSERT INTO scratch VALUES (4, 'd')",
    "DELETE FROM scratch",
    "COMMIT",
    "INSERT INTO keep VALUES (10, 'last')",
]


def _end_lsn(dsn: str) -> str:
    """The insert position: the test cluster runs with synchronous_commit off, so the
    write position may still lie before the last commit."""
    with psycopg.connect(dsn, autocommit=True) as c:
        return str(c.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0])  # type: ignore[index]


def _stream(dsn: str) -> list[tuple[object, ...]]:
    with psycopg.connect(dsn, autocommit=True) as c:
        for sql in STREAMED:
            c.execute(sql)
    recvlogical(dsn, "temps", "--create-slot", "-P", "pgoutput")
    with psycopg.connect(dsn, autocommit=True) as c:
        for sql in WRITES:
            c.execute(sql)
    out = recvlogical(
        dsn, "temps", "--start", "-f", "-", f"--endpos={_end_lsn(dsn)}", "--no-loop",
        "-o", "proto_version=1", "-o", "publication_names=p",
    )  # fmt: skip
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("SELECT pg_drop_replication_slot('temps')")
        c.execute("DROP PUBLICATION p")
        c.execute("DROP TABLE keep")
    return stream_shape(pgoutput_messages(out))


def test_temporary_tables_are_never_streamed(proxy: ProxyServer, pg15: PgCluster) -> None:
    theirs = _stream(pg15.dsn(dbname=pg15.new_database("temp")))
    ours = _stream(proxy.dsn())
    assert ours == theirs
    assert any(m[0] == "INSERT" for m in ours)


def test_a_crash_leaves_no_temporary_table(tmp_path: Path) -> None:
    """A session's temporary tables outlive a kill -9 of the server in its log; the next
    start drops them (PostgreSQL removes a crashed backend's temporary relations)."""
    with ProxyProcess(tmp_path / "d") as p:
        conn = psycopg.connect(p.dsn(), autocommit=True)
        conn.execute("CREATE TEMP TABLE lost (x int)")
        conn.execute("INSERT INTO lost VALUES (1)")
        conn.execute("CREATE TABLE kept (x int)")
        p.kill()
        conn.close()
        p.restart()
        with psycopg.connect(p.dsn(), autocommit=True) as c:
            assert c.execute("SELECT relname FROM pg_class WHERE relname IN ('lost', 'kept')").fetchall() == [("kept",)]


def test_a_read_only_session_s_temporary_tables_end_with_it(proxy: ProxyServer) -> None:
    """A session that turned default_transaction_read_only on still drops its temporary
    tables when it ends, as PostgreSQL does (they were left in the catalog)."""
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE TEMP TABLE ro_tmp (a int)")
        c.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        deadline = time.monotonic() + 10
        while c.execute("SELECT count(*) FROM pg_class WHERE relname = 'ro_tmp'").fetchone()[0]:  # type: ignore[index]
            assert time.monotonic() < deadline, "the temporary table outlived its session"
            time.sleep(0.05)


def test_a_prepared_transaction_says_when_it_was_prepared(proxy: ProxyServer) -> None:
    """(The reference cluster runs without prepared transactions: the proxy alone.)"""
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("BEGIN")
        c.execute("CREATE TABLE tpx (a int)")
        c.execute("PREPARE TRANSACTION 'tpx'")
        got = c.execute("SELECT gid, prepared <= now(), prepared > now() - interval '1 hour' FROM pg_prepared_xacts").fetchall()
        c.execute("ROLLBACK PREPARED 'tpx'")
    assert got == [("tpx", True, True)]
