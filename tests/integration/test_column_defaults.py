"""Column DEFAULT expressions as PostgreSQL 15 has them: what CREATE TABLE and ALTER TABLE
accept and refuse, what ``pg_get_expr``, ``information_schema.columns`` and psql's ``\\d``
print, the values INSERT (every form), UPDATE, ON CONFLICT, COPY and ADD COLUMN give, and
what a logical replication stream carries — each compared with a real PostgreSQL 15."""

from __future__ import annotations

from pathlib import Path

import psycopg

from tests.integration.test_catalog_history import end_lsn, read_slot
from tests.integration.test_sql_clients import fresh_pg_db, psql
from tests.integration.test_subscriber import new_sub_db
from tests.pgcluster import PgCluster
from tests.pgcompare import recvlogical, same_answers
from tests.proxy import ProxyServer

#: (column type, default): each printed by pg_get_expr (plain and pretty) as PostgreSQL
#: prints it, or refused with PostgreSQL's error.
FORMS = [
    ("int", "5"), ("int", "-5"), ("bigint", "5"), ("bigint", "-1"), ("bigint", "3000000000"),
    ("int", "1.5"), ("numeric", "1.50"), ("numeric", "1"), ("numeric(10,2)", "'1'"),
    ("numeric(10,2)", "1.5"), ("text", "'x'"), ("varchar(3)", "'abcdef'"), ("text", "'x'::text"),
    ("varchar(10)", "'x'::text"), ("timestamptz", "now()"), ("timestamp", "now()"), ("date", "now()"),
    ("timestamptz", "current_timestamp"), ("date", "current_date"), ("uuid", "gen_random_uuid()"),
    ("int", "1+2"), ("int", "1+2*3"), ("int", "(1+2)*3"), ("float8", "1.5"), ("real", "1.5"),
    ("bool", "true"), ("text", "true"), ("int", "null"), ("text", "null::text"), ("bigint", "5::bigint"),
    ("int", "'7'"), ("numeric", "1e3"), ("numeric", "-1.5"), ("float8", "random()"),
    ("timestamptz", "clock_timestamp()"), ("timestamp(0)", "current_timestamp(2)"), ("time", "localtime"),
    ("timestamptz", "now() + interval '1 day'"), ("text", "current_user"), ("date", "'2020-01-02'"),
    ("int", "2147483648/2"), ("smallint", "5"), ("text[]", "'{a,b}'"), ("jsonb", "'{\"b\":1,\"a\":2}'"),
    ("numeric", "5::numeric"), ("int", "-(5)"), ("text", "'a'||'b'"), ("interval", "'1 day'"),
    ("bytea", "'\\x00'"), ("bigint", "1+2"), ("numeric", "1+2"), ("varchar(10)", "'a'||'b'"),
    ("text", "1+2"), ("int", "2147483647+1"), ("numeric", "1 + 1.5"), ("float8", "1 + 1.5::float8"),
    ("bigint", "1 + 2::int8"), ("text", "'a' || 5"), ("timestamp", "now() + interval '1 h'"),
    ("date", "current_date + 1"), ("timestamptz", "current_date + 1"), ("numeric(10,2)", "1+2"),
    ("int", "10-2-3"), ("int", "10-(2-3)"), ("real", "1.5::float4 + 1"), ("interval", "interval '1 day' * 2"),
    ("int", "7 % 3"), ("int", "7 / 2"), ("int", "1 + '2'"), ("bigint", "5 + 1::int2"),
    ("text", "'a'::varchar || 'b'"), ("jsonb", "'{}'"), ("text", "''"), ("int[]", "'{}'"),
    ("timestamptz", "'epoch'"), ("timestamptz", "'2020-01-01 10:00+02'"), ("bool", "'yes'"),
    ("varchar(10)", "'abc'::varchar(3)"), ("int", "5::int"), ("timestamptz", "now()::timestamptz(0)"),
    ("timestamp", "'2020-01-01 10:00:00.1234567'"), ("date", "current_timestamp::date"),
    ("int", "99999999999"), ("numeric(10,2)", "'1.5'::numeric(10,2)"), ("text", "'it''s'"),
    ("char(5)", "'ab'"), ("uuid", "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'"), ("float8", "'NaN'"),
    ("interval", "'1 day'::interval + '1 hour'"), ("timestamptz", "now() - '1 day'"),
    ("timestamp", "localtimestamp(3)"), ("timestamptz", "transaction_timestamp()"), ("text", "session_user"),
    ("varchar(30)", "current_user"), ("float4", "-1.5"), ("numeric", "-0.0"),
    # refused by PostgreSQL, with its errors
    ("int", "'abc'"), ("int", "now()"), ("int", "true"), ("int", "(select 1)"), ("int", "nope()"),
    ("int", "'99999999999'"), ("int", "'1' + '2'"), ("date", "current_date * 2"), ("float8", "1e400"),
]


def _forms_statements() -> list[str]:
    out = []
    for i, (typ, expr) in enumerate(FORMS):
        out.append(f"CREATE TABLE f{i} (c {typ} DEFAULT {expr})")
    out.append(
        "SELECT c.relname, a.atthasdef, pg_get_expr(d.adbin, d.adrelid), pg_get_expr(d.adbin, d.adrelid, true)"
        " FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = 1"
        " LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = 1"
        " WHERE c.relname ~ '^f[0-9]+$' ORDER BY 1"
    )
    out.append(
        "SELECT table_name, column_default FROM information_schema.columns"
        " WHERE table_name ~ '^f[0-9]+$' ORDER BY 1"
    )
    return out


def test_defaults_print_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("dflt")), _forms_statements()).close()


REFUSED = [
    "CREATE TABLE r1 (a int DEFAULT abs(-1))",
    "CREATE TABLE r1 (a timestamp DEFAULT (now() AT TIME ZONE 'utc'))",
    "CREATE TABLE r1 (a text[] DEFAULT ARRAY['a'])",
]


def test_forms_it_cannot_print_are_refused(proxy: ProxyServer) -> None:
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        for sql in REFUSED:
            try:
                c.execute(sql)
            except psycopg.Error as e:
                assert e.sqlstate == "0A000" and "walsender-proxy" in e.diag.message_primary, sql
            else:
                raise AssertionError(f"accepted: {sql}")


DML = [
    "CREATE TABLE t1 (id int PRIMARY KEY, a int DEFAULT 5, b text DEFAULT 'x', c numeric DEFAULT 1.50,"
    " d int DEFAULT 1.5, e varchar(2) DEFAULT 'ab', f bigint DEFAULT 1+2, g numeric(5,1) DEFAULT 2.25)",
    "INSERT INTO t1 (id) VALUES (1)",
    "INSERT INTO t1 (id, a) VALUES (2, DEFAULT)",
    "INSERT INTO t1 VALUES (3, DEFAULT, DEFAULT, DEFAULT, DEFAULT, 'xy', DEFAULT, DEFAULT)",
    "INSERT INTO t1 VALUES (4, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT)",
    "INSERT INTO t1 (id, e) VALUES (5, 'q'), (6, 'r')",
    "INSERT INTO t1 (id, c) VALUES (7, 7), (8, DEFAULT), (9, 1.5)",
    "INSERT INTO t1 (id, e) SELECT g, 'z' FROM generate_series(10, 12) g",
    "INSERT INTO t1 SELECT 13, 1",
    "INSERT INTO t1 (id, e) VALUES (14, 'q') RETURNING *",
    "INSERT INTO t1 (a, id) VALUES (DEFAULT, 15) RETURNING a, f",
    "SELECT * FROM t1 ORDER BY id",
    "UPDATE t1 SET a = 9, b = 'y' WHERE id = 1",
    "UPDATE t1 SET a = DEFAULT, b = DEFAULT WHERE id = 1 RETURNING *",
    "UPDATE t1 SET a = 0",
    "UPDATE t1 SET a = DEFAULT WHERE id > 10",
    "UPDATE t1 SET a = DEFAULT WHERE id = 11 RETURNING id, a",
    "INSERT INTO t1 (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET a = DEFAULT, b = 'conf' RETURNING *",
    "INSERT INTO t1 (id, a) VALUES (100, DEFAULT) ON CONFLICT (id) DO NOTHING RETURNING *",
    "INSERT INTO t1 (id) VALUES (101), (2) ON CONFLICT (id) DO UPDATE SET c = DEFAULT",
    "SELECT * FROM t1 ORDER BY id",
    "CREATE TABLE t2 (a int DEFAULT 5, b text DEFAULT 'x')",
    "INSERT INTO t2 DEFAULT VALUES",
    "INSERT INTO t2 DEFAULT VALUES RETURNING *",
    "INSERT INTO t2 (b) VALUES ('q')",
    "INSERT INTO t2 SELECT 7",
    "ALTER TABLE t2 ALTER COLUMN a SET DEFAULT 42",
    "INSERT INTO t2 (b) VALUES ('after')",
    "ALTER TABLE t2 ALTER COLUMN a DROP DEFAULT",
    "ALTER TABLE t2 ALTER COLUMN a DROP DEFAULT",
    "INSERT INTO t2 (b) VALUES ('dropped')",
    "ALTER TABLE t2 ALTER COLUMN b SET DEFAULT NULL",
    "INSERT INTO t2 (a) VALUES (1)",
    "SELECT attname, atthasdef FROM pg_attribute WHERE attrelid = 't2'::regclass AND attnum > 0 ORDER BY attnum",
    "ALTER TABLE t2 ALTER COLUMN nope SET DEFAULT 1",
    "ALTER TABLE t2 ALTER COLUMN a SET DEFAULT 'abc'",
    "ALTER TABLE t2 ALTER COLUMN a SET DEFAULT now()",
    "SELECT * FROM t2",
    "ALTER TABLE t2 ADD COLUMN c int DEFAULT 7",
    "ALTER TABLE t2 ADD COLUMN d int NOT NULL DEFAULT 8",
    "ALTER TABLE t2 ADD COLUMN e text NOT NULL DEFAULT NULL::text",
    "ALTER TABLE t2 ADD COLUMN e text NOT NULL",
    "ALTER TABLE t2 ADD COLUMN IF NOT EXISTS c int DEFAULT 'abc'",
    "ALTER TABLE t2 ADD COLUMN c int DEFAULT 'abc'",
    "SELECT * FROM t2",
    "SELECT attname, atthasdef, atthasmissing FROM pg_attribute WHERE attrelid = 't2'::regclass AND attnum > 0 ORDER BY attnum",
    "ALTER TABLE t2 ADD COLUMN f float8 DEFAULT random()",
    "SELECT a, b, c, d, f >= 0 AND f < 1 FROM t2",
    "SELECT count(DISTINCT f) = count(*) FROM t2",
    "SELECT attname, atthasdef, atthasmissing FROM pg_attribute WHERE attrelid = 't2'::regclass AND attnum > 0 ORDER BY attnum",
    "INSERT INTO t2 (b) VALUES ('later') RETURNING a, b, c, d",
    "CREATE TABLE t3 (id int, e varchar(2) DEFAULT 'abc', n numeric(3,1) DEFAULT 12345)",
    "INSERT INTO t3 (id, n) VALUES (1, 1)",
    "INSERT INTO t3 VALUES (1, DEFAULT, 1)",
    "INSERT INTO t3 (id, e) SELECT 1, 'a'",
    "BEGIN",
    "INSERT INTO t3 VALUES (1, 'a', 1)",
    "ALTER TABLE t3 ADD COLUMN z int DEFAULT 3",
    "INSERT INTO t3 (id, e, n) VALUES (2, 'b', 2)",
    "SELECT * FROM t3 ORDER BY id",
    "ROLLBACK",
    "SELECT * FROM t3",
    "CREATE TABLE t4 (a int DEFAULT 1 DEFAULT 2)",
    "CREATE TABLE t4 (a int DEFAULT b)",
    "CREATE TABLE IF NOT EXISTS t2 (a int DEFAULT 'abc')",
    "CREATE TABLE t5 (id int, u uuid DEFAULT gen_random_uuid(), r float8 DEFAULT random())",
    "INSERT INTO t5 (id) SELECT g FROM generate_series(1, 50) g",
    "SELECT count(DISTINCT u), count(DISTINCT r), count(*) FROM t5",
]


def test_dml_uses_defaults_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("dflt")), DML).close()


CLOCK = [
    "CREATE TABLE k (id int, ts timestamptz DEFAULT now(), ct timestamptz DEFAULT CURRENT_TIMESTAMP,"
    " lt timestamp DEFAULT LOCALTIMESTAMP, d date DEFAULT current_date, c3 timestamptz DEFAULT now() + interval '3 days',"
    " who text DEFAULT current_user)",
    "BEGIN",
    "INSERT INTO k (id) VALUES (1)",
    "SELECT pg_sleep(0.02)",
    "INSERT INTO k (id) VALUES (2), (3)",
    "INSERT INTO k (id) SELECT 4",
    "INSERT INTO k DEFAULT VALUES",
    "SELECT count(*), count(DISTINCT ts), bool_and(ts = now()), bool_and(ct = now()),"
    " bool_and(lt = LOCALTIMESTAMP), bool_and(d = current_date), bool_and(c3 = now() + interval '3 days'),"
    " min(who) FROM k",
    "COMMIT",
    "INSERT INTO k (id) VALUES (6)",
    "SELECT count(DISTINCT ts) FROM k",
]


def test_clock_defaults_are_the_transactions_time(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("dflt")), CLOCK).close()


def test_copy_from_with_a_column_list_fills_the_others(proxy: ProxyServer, pg15: PgCluster) -> None:
    ddl = "CREATE TABLE cp (a int, b int DEFAULT 3, c text DEFAULT 'q', d int)"
    answers = []
    for dsn in (pg15.dsn(dbname=pg15.new_database("dflt")), proxy.dsn()):
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(ddl)
            with c.cursor().copy("COPY cp (a, d) FROM STDIN") as cp:
                cp.write(b"1\t10\n2\t\\N\n")
            with c.cursor().copy("COPY cp (c) FROM STDIN (FORMAT csv)") as cp:
                cp.write(b"hello\n")
            answers.append(c.execute("SELECT * FROM cp ORDER BY a NULLS LAST").fetchall())
    assert answers[0] == answers[1] == [(1, 3, "q", 10), (2, 3, "q", None), (None, 3, "hello", None)]


SCHEMA = """
CREATE TABLE dd (id int PRIMARY KEY, a int DEFAULT 5, b varchar(10) DEFAULT 'a'||'b',
  c timestamptz NOT NULL DEFAULT now(), d bigint DEFAULT 1+2, e text, f numeric(10,2) DEFAULT 1+2,
  g text DEFAULT 'it''s');
"""


def test_psql_describe_shows_the_defaults(proxy: ProxyServer, pg15: PgCluster) -> None:
    db = fresh_pg_db(pg15)
    assert psql(pg15.port, "-c", SCHEMA, dbname=db).returncode == 0
    r = psql(proxy.port, "-c", SCHEMA)
    assert r.returncode == 0, r.stderr
    ref = psql(pg15.port, "-c", "\\d dd", dbname=db)
    got = psql(proxy.port, "-c", "\\d dd")
    assert got.stdout == ref.stdout
    assert "| now()" in got.stdout and "| (1 + 2)" in got.stdout


def test_defaults_survive_a_restart(tmp_path: Path) -> None:
    server = ProxyServer(tmp_path / "p").start()
    try:
        with psycopg.connect(server.dsn(), autocommit=True) as c:
            c.execute("CREATE TABLE rs (id int, a int DEFAULT 1 + 2, b timestamptz DEFAULT now())")
            c.execute("INSERT INTO rs (id) VALUES (1)")
            c.execute("ALTER TABLE rs ADD COLUMN z text DEFAULT 'zz'")
        port = server.port
        server.stop()
        server = ProxyServer(tmp_path / "p", port=port).start()
        with psycopg.connect(server.dsn(), autocommit=True) as c:
            c.execute("INSERT INTO rs (id) VALUES (2)")
            got = c.execute("SELECT id, a, b IS NOT NULL, z FROM rs ORDER BY id").fetchall()
            assert got == [(1, 3, True, "zz"), (2, 3, True, "zz")]
            exprs = c.execute(
                "SELECT pg_get_expr(adbin, adrelid, true) FROM pg_attrdef WHERE adrelid = 'rs'::regclass ORDER BY adnum"
            ).fetchall()
            assert exprs == [("1 + 2",), ("now()",), ("'zz'::text",)]
    finally:
        server.stop()


STREAM_SETUP = [
    "CREATE TABLE s (id int PRIMARY KEY, a text DEFAULT 'dflt', n int DEFAULT 2 * 21)",
    "ALTER TABLE s REPLICA IDENTITY FULL",
    "CREATE PUBLICATION p FOR TABLE s",
]
STREAM = [
    "INSERT INTO s (id) VALUES (1)",
    "INSERT INTO s VALUES (2, DEFAULT, 7)",
    "INSERT INTO s (id) SELECT g FROM generate_series(3, 5) g",
    "ALTER TABLE s ADD COLUMN z text DEFAULT 'filled'",
    "UPDATE s SET a = 'changed' WHERE id = 1",
    "INSERT INTO s (id, z) VALUES (6, DEFAULT)",
    "UPDATE s SET n = DEFAULT, z = 'z' WHERE id = 2",
    "ALTER TABLE s ALTER COLUMN a SET DEFAULT 'second'",
    "INSERT INTO s (id) VALUES (7)",
    "DELETE FROM s WHERE id = 3",
]


def test_defaulted_values_stream_as_from_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    """pg_recvlogical over pgoutput: the rows carry the default values they were stored
    with; ADD COLUMN … DEFAULT sends nothing for the rows it fills (a table rewrite is
    not decoded) and the next change of such a row carries the value."""
    streams = []
    for dsn in (new_sub_db(pg15), proxy.dsn()):
        with psycopg.connect(dsn, autocommit=True) as c:
            for sql in STREAM_SETUP:
                c.execute(sql)
        recvlogical(dsn, "dflt", "--create-slot", "-P", "pgoutput")
        with psycopg.connect(dsn, autocommit=True) as c:
            for sql in STREAM:
                c.execute(sql)
        streams.append(read_slot(dsn, "dflt", end_lsn(dsn)))
    assert streams[1] == streams[0]
    assert ("INSERT", 0, (b"1", b"dflt", b"42")) in streams[1]
