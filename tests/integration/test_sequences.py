"""Sequences as PostgreSQL 15 has them: CREATE / ALTER / DROP SEQUENCE with their options and
errors, nextval / currval / setval / lastval with their errors and the session's cache,
non-transactional counters, the catalog (pg_class, pg_sequence, pg_sequences,
information_schema.sequences, psql's ``\\d``), and a counter that survives a crash without
handing a value out twice — compared with a real PostgreSQL 15 where a client can see it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg

from tests.integration.test_sql_clients import fresh_pg_db, psql
from tests.pgcluster import PgCluster
from tests.pgcompare import same_answers
from tests.proxy import ProxyServer

DDL = [
    "CREATE SEQUENCE sx INCREMENT BY 0",
    "CREATE SEQUENCE sx INCREMENT BY -1 MINVALUE 20",
    "CREATE SEQUENCE sx INCREMENT BY 1 MAXVALUE -20",
    "CREATE SEQUENCE sx INCREMENT BY -1 START 10",
    "CREATE SEQUENCE sx INCREMENT BY 1 START -10",
    "CREATE SEQUENCE sx CACHE 0",
    "CREATE SEQUENCE sx INCREMENT 1.5",
    "CREATE SEQUENCE sx CYCLE NO CYCLE",
    "CREATE SEQUENCE sx OWNED BY nobody",
    "CREATE TABLE sqt (a int)",
    "CREATE SEQUENCE sx OWNED BY sqt.b",
    "CREATE SEQUENCE sx AS text",
    "CREATE SEQUENCE sx AS nosuchtype",
    "CREATE SEQUENCE sx AS smallint MAXVALUE 100000",
    "CREATE SEQUENCE sx AS smallint MINVALUE -100000",
    "CREATE SEQUENCE s5 AS integer",
    "CREATE SEQUENCE s6 AS smallint",
    "CREATE SEQUENCE s8 AS integer MAXVALUE 100000",
    "CREATE SEQUENCE s9 AS integer INCREMENT BY -1",
    "CREATE SEQUENCE s10 AS integer MINVALUE -100000 START 1",
    "CREATE SEQUENCE s11 AS smallint",
    "CREATE SEQUENCE s12 AS smallint INCREMENT -1",
    "CREATE SEQUENCE s13 AS smallint MINVALUE -32768",
    "CREATE SEQUENCE s14 AS smallint MAXVALUE 32767 INCREMENT -1",
    "ALTER SEQUENCE s5 AS smallint",
    "ALTER SEQUENCE s8 AS smallint",
    "ALTER SEQUENCE s8 AS smallint MAXVALUE 20000",
    "ALTER SEQUENCE s9 AS smallint",
    "ALTER SEQUENCE s10 AS smallint",
    "ALTER SEQUENCE s10 AS smallint MINVALUE -20000",
    "ALTER SEQUENCE s11 AS int",
    "ALTER SEQUENCE s12 AS int",
    "ALTER SEQUENCE s13 AS int",
    "ALTER SEQUENCE s14 AS int",
    "SELECT * FROM pg_sequences WHERE sequencename ~ '^s[0-9]+$' ORDER BY sequencename",
    "SELECT sequence_schema, sequence_name, data_type, numeric_precision, numeric_precision_radix, numeric_scale, start_value, minimum_value, maximum_value, increment, cycle_option FROM information_schema.sequences WHERE sequence_name ~ '^s[0-9]+$' ORDER BY sequence_name",
    "SELECT c.relname, c.relkind, c.relnatts, s.seqtypid::regtype, s.seqstart, s.seqincrement, s.seqmax, s.seqmin, s.seqcache, s.seqcycle"
    " FROM pg_class c JOIN pg_sequence s ON s.seqrelid = c.oid ORDER BY 1",
    "CREATE SEQUENCE s5",
    "CREATE SEQUENCE IF NOT EXISTS s5",
    "CREATE TABLE s5 (a int)",
    "CREATE SEQUENCE sqt",
    "ALTER SEQUENCE nope CYCLE",
    "ALTER SEQUENCE IF EXISTS nope CYCLE",
    "ALTER SEQUENCE sqt CYCLE",
    "DROP SEQUENCE nope",
    "DROP SEQUENCE IF EXISTS nope, s6",
    "DROP SEQUENCE sqt",
    "DROP TABLE s5",
    "ALTER SEQUENCE s8 RENAME TO s8b",
    "ALTER TABLE s8b RENAME TO s8c",
    "SELECT relname FROM pg_class WHERE relname LIKE 's8%'",
    "CREATE SEQUENCE sw",
    "INSERT INTO sw VALUES (1, 1, true)",
    "UPDATE sw SET log_cnt = 1",
    "DELETE FROM sw",
    "TRUNCATE sw",
    "COPY sw TO STDOUT",
    "SELECT * FROM sw",
    "CREATE SCHEMA sqs",
    "CREATE SEQUENCE sqs.q1",
    "DROP SCHEMA sqs",
    "DROP SCHEMA sqs CASCADE",
]


def test_sequence_ddl_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("seq")), DDL).close()


FUNCTIONS = [
    "CREATE SEQUENCE f1",
    "SELECT currval('f1')",
    "SELECT lastval()",
    "SELECT nextval('f1'::text), nextval('f1'::regclass), nextval('f1')",
    "SELECT currval('f1'::text), currval('f1'::regclass)",
    "SELECT setval('f1'::text, 32)",
    "SELECT nextval('f1'::regclass)",
    "SELECT setval('f1'::text, 99, false)",
    "SELECT nextval('f1'::regclass)",
    "SELECT setval('f1'::regclass, 32)",
    "SELECT nextval('f1'::text)",
    "SELECT setval('f1'::regclass, 99, false)",
    "SELECT nextval('f1'::text)",
    "SELECT * FROM f1",
    "DISCARD SEQUENCES",
    "SELECT currval('f1'::regclass)",
    "SELECT lastval()",
    "SELECT nextval('nope')",
    "CREATE TABLE ft (a int)",
    "SELECT nextval('ft')",
    "SELECT nextval(g::text) FROM (VALUES ('f1')) v(g)",
    "SELECT nextval('f1') FROM generate_series(1, 5)",
    "SELECT lastval()",
    "SELECT setval('f1', 99), lastval()",
    "CREATE SEQUENCE f2",
    "SELECT nextval('f2')",
    "DROP SEQUENCE f2",
    "SELECT lastval()",
    "CREATE SEQUENCE f3 START WITH 32",
    "CREATE SEQUENCE f4 INCREMENT BY -1",
    "SELECT nextval('f3'), nextval('f4')",
    "ALTER SEQUENCE f3 RESTART",
    "SELECT nextval('f3')",
    "ALTER SEQUENCE f3 RESTART WITH 0",
    "ALTER SEQUENCE f4 RESTART WITH 40",
    "ALTER SEQUENCE f3 RESTART WITH 24 INCREMENT BY 4 MAXVALUE 36 MINVALUE 5 CYCLE",
    "SELECT nextval('f3') FROM generate_series(1, 5)",
    "ALTER SEQUENCE f3 RESTART WITH 24 NO CYCLE",
    "SELECT nextval('f3'), nextval('f3'), nextval('f3'), nextval('f3')",
    "SELECT nextval('f3')",
    "ALTER SEQUENCE f3 RESTART WITH -24 START WITH -24 INCREMENT BY -4 MINVALUE -36 MAXVALUE -5 CYCLE",
    "SELECT nextval('f3') FROM generate_series(1, 5)",
    "ALTER SEQUENCE f3 RESTART WITH -24 NO CYCLE",
    "SELECT nextval('f3') FROM generate_series(1, 4)",
    "SELECT nextval('f3')",
    "ALTER SEQUENCE IF EXISTS f3 RESTART WITH 32 START WITH 32 INCREMENT BY 4 MAXVALUE 36 MINVALUE 5 CYCLE",
    "SELECT setval('f3', -100)",
    "SELECT setval('f3', 100)",
    "SELECT setval('f3', 5)",
    "ALTER SEQUENCE f3 MAXVALUE 4",
    "CREATE SEQUENCE f5 CACHE 10",
    "SELECT nextval('f5'), nextval('f5'), nextval('f5')",
    "SELECT * FROM f5",
    "CREATE SEQUENCE f6",
    "SELECT * FROM f6",
    "SELECT nextval('f6'), nextval('f6')",
    "SELECT last_value, log_cnt, is_called FROM f6",
    "BEGIN",
    "SELECT nextval('f6')",
    "ROLLBACK",
    "SELECT nextval('f6')",
    "BEGIN",
    "ALTER SEQUENCE f6 RESTART WITH 100",
    "SELECT nextval('f6')",
    "ROLLBACK",
    "SELECT nextval('f6')",
    "CREATE TEMP SEQUENCE f7",
    "START TRANSACTION READ ONLY",
    "SELECT nextval('f7')",
    "SELECT nextval('f6')",
    "ROLLBACK",
    "START TRANSACTION READ ONLY",
    "SELECT setval('f7', 1)",
    "SELECT setval('f6', 1)",
    "ROLLBACK",
    "CREATE SEQUENCE f8 MAXVALUE 2",
    "SELECT nextval('f8'), nextval('f8')",
    "SELECT nextval('f8')",
    "CREATE SEQUENCE f9 AS smallint INCREMENT -1 MINVALUE -2 MAXVALUE 0",
    "SELECT nextval('f9'), nextval('f9'), nextval('f9')",
    "SELECT nextval('f9')",
    "SELECT pg_typeof(nextval('f1')), pg_typeof(currval('f1')), pg_typeof(setval('f1', 3)), pg_typeof(lastval())",
]


def test_sequence_functions_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("seq")), FUNCTIONS).close()


def test_sessions_share_the_counter_each_with_its_own_cache(proxy: ProxyServer, pg15: PgCluster) -> None:
    """Two sessions of a CACHE 5 sequence: each takes values from its own block, as in
    PostgreSQL; currval is each session's own."""
    answers = []
    for dsn in (pg15.dsn(dbname=pg15.new_database("seq")), proxy.dsn()):
        with psycopg.connect(dsn, autocommit=True) as a, psycopg.connect(dsn, autocommit=True) as b:
            a.execute("CREATE SEQUENCE shared5 CACHE 5")
            got = []
            for c in (a, b, a, b, a):
                got.append(c.execute("SELECT nextval('shared5')").fetchone()[0])  # type: ignore[index]
            got.append(a.execute("SELECT currval('shared5')").fetchone()[0])  # type: ignore[index]
            got.append(b.execute("SELECT currval('shared5')").fetchone()[0])  # type: ignore[index]
            got.append(a.execute("SELECT last_value, is_called FROM shared5").fetchone())
            a.execute("DROP SEQUENCE shared5")
        answers.append(got)
    assert answers[1] == answers[0] == [1, 6, 2, 7, 3, 3, 7, (10, True)]


def test_psql_describes_a_sequence(proxy: ProxyServer, pg15: PgCluster) -> None:
    schema = "CREATE SEQUENCE dseq AS integer INCREMENT BY -2 CACHE 3 CYCLE; CREATE SEQUENCE dseq2;"
    db = fresh_pg_db(pg15)
    assert psql(pg15.port, "-c", schema, dbname=db).returncode == 0
    r = psql(proxy.port, "-c", schema)
    assert r.returncode == 0, r.stderr
    for cmd in ("\\d dseq", "\\ds dseq*"):
        ref = psql(pg15.port, "-c", cmd, dbname=db)
        got = psql(proxy.port, "-c", cmd)
        assert got.stdout == ref.stdout, cmd


CRASHER = """
import sys, time, psycopg
sys.path.insert(0, sys.argv[2])
from tests.proxy import ProxyServer
from walsender_proxy.lake import LakeSettings
server = ProxyServer(__import__("pathlib").Path(sys.argv[1]), lake_settings=LakeSettings(fsync=True)).start()
with psycopg.connect(server.dsn(), autocommit=True) as c:
    c.execute("CREATE SEQUENCE IF NOT EXISTS crash_seq")
    for _ in range(int(sys.argv[3])):
        print(c.execute("SELECT nextval('crash_seq')").fetchone()[0], flush=True)
print("ready", flush=True)
time.sleep(600)
"""


def _handed_out(data: Path, n: int) -> list[int]:
    """Start a proxy on ``data`` in a process of its own, take ``n`` values, kill -9 it."""
    root = str(Path(__file__).resolve().parents[2])
    p = subprocess.Popen([sys.executable, "-c", CRASHER, str(data), root, str(n)], stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": root})
    out = []
    assert p.stdout is not None
    deadline = time.monotonic() + 120
    for line in p.stdout:
        if line.strip() == "ready" or time.monotonic() > deadline:
            break
        out.append(int(line))
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    return out


def test_a_crash_never_hands_a_value_out_twice(tmp_path: Path) -> None:
    """kill -9 after 40 nextvals, then again after 5: every value after a crash is greater
    than every value before it (up to 32 may be skipped, as in PostgreSQL)."""
    first = _handed_out(tmp_path / "p", 40)
    second = _handed_out(tmp_path / "p", 5)
    third = _handed_out(tmp_path / "p", 3)
    assert first == list(range(1, 41))
    assert min(second) > max(first) and min(third) > max(second)
    assert second == list(range(second[0], second[0] + 5)) and second[0] - max(first) <= 33


def test_a_clean_restart_skips_nothing(tmp_path: Path) -> None:
    server = ProxyServer(tmp_path / "p").start()
    try:
        with psycopg.connect(server.dsn(), autocommit=True) as c:
            c.execute("CREATE SEQUENCE clean_seq")
            assert [c.execute("SELECT nextval('clean_seq')").fetchone()[0] for _ in range(3)] == [1, 2, 3]  # type: ignore[index]
        port = server.port
        server.stop()
        server = ProxyServer(tmp_path / "p", port=port).start()
        with psycopg.connect(server.dsn(), autocommit=True) as c:
            assert c.execute("SELECT nextval('clean_seq')").fetchone()[0] == 4  # type: ignore[index]
    finally:
        server.stop()


SERIAL = [
    "CREATE TABLE st1 (f1 text, f2 serial)",
    "INSERT INTO st1 VALUES ('foo')",
    "INSERT INTO st1 VALUES ('bar')",
    "INSERT INTO st1 VALUES ('force', 100)",
    "INSERT INTO st1 VALUES ('wrong', NULL)",
    "SELECT * FROM st1",
    "SELECT pg_get_serial_sequence('st1', 'f2'), pg_get_serial_sequence('st1', 'f1')",
    "SELECT pg_get_serial_sequence('st1', 'nope')",
    "SELECT pg_get_serial_sequence('nope', 'f2')",
    "CREATE TABLE st2 (f1 text, f2 serial, f3 smallserial, f4 serial2, f5 bigserial, f6 serial8)",
    "INSERT INTO st2 (f1) VALUES ('test_defaults')",
    "INSERT INTO st2 (f1, f2, f3, f4, f5, f6) VALUES ('test_max_vals', 2147483647, 32767, 32767, 9223372036854775807, 9223372036854775807),"
    " ('test_min_vals', -2147483648, -32768, -32768, -9223372036854775808, -9223372036854775808)",
    "INSERT INTO st2 (f1, f3) VALUES ('bogus', -32769)",
    "INSERT INTO st2 (f1, f5) VALUES ('bogus', 9223372036854775808)",
    "SELECT * FROM st2 ORDER BY f2 ASC",
    "SELECT nextval('st2_f2_seq'), nextval('st2_f3_seq'), nextval('st2_f5_seq')",
    "SELECT c.relname, a.attname, a.attnotnull, a.atthasdef, a.attidentity, pg_get_expr(d.adbin, d.adrelid)"
    " FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0"
    " LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum WHERE c.relname IN ('st1', 'st2') ORDER BY 1, a.attnum",
    "SELECT column_name, column_default, is_nullable FROM information_schema.columns WHERE table_name = 'st2' ORDER BY ordinal_position",
    "SELECT s.relname, t.relname, d.refobjsubid, d.deptype FROM pg_depend d JOIN pg_class s ON s.oid = d.objid"
    " JOIN pg_class t ON t.oid = d.refobjid WHERE d.classid = 'pg_class'::regclass AND s.relkind = 'S' AND t.relname ~ '^st' ORDER BY 1",
    "ALTER TABLE st1_f2_seq RENAME TO st1_f2_foo",
    "INSERT INTO st1 VALUES ('more')",
    "SELECT * FROM st1",
    "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'st1'::regclass",
    "CREATE TEMP SEQUENCE myseq2",
    "CREATE TEMP SEQUENCE myseq3",
    "CREATE TEMP TABLE st3 (f1 serial, f2 int DEFAULT nextval('myseq2'), f3 int DEFAULT nextval('myseq3'::text))",
    "SELECT attname, pg_get_expr(adbin, adrelid, true) FROM pg_attrdef JOIN pg_attribute ON attrelid = adrelid AND attnum = adnum WHERE adrelid = 'st3'::regclass ORDER BY 1",
    "INSERT INTO st3 DEFAULT VALUES",
    "INSERT INTO st3 DEFAULT VALUES RETURNING *",
    "DROP SEQUENCE st3_f1_seq",
    "DROP SEQUENCE myseq2",
    "DROP SEQUENCE myseq3",
    "INSERT INTO st3 (f1) VALUES (9)",
    "DROP TABLE st3",
    "DROP SEQUENCE st3_f1_seq",
    "DROP SEQUENCE myseq2",
    "CREATE TABLE st4 (id serial DEFAULT 5)",
    "CREATE TABLE st4 (id serial NULL)",
    "CREATE TABLE st4 (id serial[])",
    "CREATE TABLE st4 (a int)",
    "INSERT INTO st4 VALUES (1), (2)",
    "CREATE SEQUENCE st4_s_seq",
    "ALTER TABLE st4 ADD COLUMN s serial",
    "SELECT * FROM st4",
    "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'st4'::regclass",
    "ALTER TABLE st4 ALTER COLUMN s SET DEFAULT 3",
    "DROP SEQUENCE st4_s_seq1",
    "ALTER TABLE st4 DROP COLUMN s",
    "SELECT relname FROM pg_class WHERE relname LIKE 'st4%' ORDER BY 1",
    "CREATE TABLE st5 (id bigserial PRIMARY KEY, v text)",
    "INSERT INTO st5 (v) VALUES ('a'), ('b') RETURNING id, v",
    "INSERT INTO st5 (v) SELECT 'c' || g FROM generate_series(1, 3) g RETURNING id",
    "TRUNCATE st5 RESTART IDENTITY",
    "INSERT INTO st5 (v) VALUES ('again') RETURNING id",
    "BEGIN",
    "INSERT INTO st5 (v) VALUES ('rolled back') RETURNING id",
    "ROLLBACK",
    "INSERT INTO st5 (v) VALUES ('after') RETURNING id",
    "DROP TABLE st5",
    "SELECT count(*) FROM pg_class WHERE relname = 'st5_id_seq'",
]


def test_serial_columns_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("seq")), SERIAL).close()


IDENTITY = [
    "CREATE TABLE ida (id int GENERATED ALWAYS AS IDENTITY, v text)",
    "CREATE TABLE idd (id bigint GENERATED BY DEFAULT AS IDENTITY (START WITH 10 INCREMENT BY 5), v text)",
    "INSERT INTO ida (v) VALUES ('a')",
    "INSERT INTO ida VALUES (5, 'b')",
    "INSERT INTO ida OVERRIDING SYSTEM VALUE VALUES (5, 'b')",
    "INSERT INTO ida OVERRIDING USER VALUE VALUES (7, 'c')",
    "INSERT INTO ida VALUES (DEFAULT, 'd') RETURNING *",
    "INSERT INTO ida VALUES (DEFAULT, 'e'), (DEFAULT, 'f') RETURNING *",
    "INSERT INTO ida VALUES (DEFAULT, 'e'), (8, 'f')",
    "INSERT INTO ida (id, v) SELECT 1, 'sel'",
    "UPDATE ida SET id = 9 WHERE v = 'a'",
    "UPDATE ida SET id = DEFAULT WHERE v = 'a' RETURNING *",
    "INSERT INTO idd (v) VALUES ('x') RETURNING *",
    "INSERT INTO idd VALUES (100, 'y')",
    "INSERT INTO idd OVERRIDING USER VALUE VALUES (100, 'z') RETURNING *",
    "INSERT INTO idd OVERRIDING SYSTEM VALUE VALUES (101, 'w') RETURNING *",
    "INSERT INTO idd (v) SELECT 'q' RETURNING *",
    "INSERT INTO idd OVERRIDING USER VALUE SELECT 200, 'r' RETURNING *",
    "SELECT * FROM ida ORDER BY id",
    "SELECT attname, attidentity, atthasdef, attnotnull FROM pg_attribute WHERE attrelid = 'ida'::regclass AND attnum > 0",
    "SELECT count(*) FROM pg_attrdef WHERE adrelid IN ('ida'::regclass, 'idd'::regclass)",
    "SELECT column_name, column_default, is_identity, identity_generation, identity_start, identity_increment,"
    " identity_maximum, identity_minimum, identity_cycle FROM information_schema.columns"
    " WHERE table_name IN ('ida', 'idd') ORDER BY table_name, ordinal_position",
    "SELECT pg_get_serial_sequence('ida', 'id'), pg_get_serial_sequence('idd', 'id'), pg_get_serial_sequence('ida', 'v')",
    "DROP SEQUENCE ida_id_seq",
    "DROP SEQUENCE ida_id_seq CASCADE",
    "SELECT s.relname, d.refobjsubid, d.deptype FROM pg_depend d JOIN pg_class s ON s.oid = d.objid"
    " WHERE d.classid = 'pg_class'::regclass AND d.refobjid = 'ida'::regclass AND s.relkind = 'S'",
    "ALTER TABLE ida ALTER COLUMN id SET DEFAULT 5",
    "ALTER TABLE ida ALTER COLUMN id DROP DEFAULT",
    "CREATE TABLE idx (id text GENERATED ALWAYS AS IDENTITY)",
    "CREATE TABLE idy (id int GENERATED ALWAYS AS IDENTITY DEFAULT 5)",
    "CREATE TABLE idn (id int GENERATED ALWAYS AS IDENTITY NULL)",
    "CREATE TABLE idz (a int)",
    "INSERT INTO idz VALUES (1), (2)",
    "ALTER TABLE idz ADD COLUMN id int GENERATED ALWAYS AS IDENTITY",
    "SELECT * FROM idz",
    "INSERT INTO idz (a) VALUES (3) RETURNING *",
    "DROP TABLE idz",
    "SELECT count(*) FROM pg_class WHERE relname = 'idz_id_seq'",
]


def test_identity_columns_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("seq")), IDENTITY).close()


def test_psql_describes_serial_and_identity(proxy: ProxyServer, pg15: PgCluster) -> None:
    schema = (
        "CREATE TABLE dsi (id serial PRIMARY KEY, a bigint GENERATED ALWAYS AS IDENTITY,"
        " b int GENERATED BY DEFAULT AS IDENTITY, c text);"
    )
    db = fresh_pg_db(pg15)
    assert psql(pg15.port, "-c", schema, dbname=db).returncode == 0
    r = psql(proxy.port, "-c", schema)
    assert r.returncode == 0, r.stderr
    for cmd in ("\\d dsi", "\\d dsi_id_seq", "\\d dsi_a_seq"):
        ref = psql(pg15.port, "-c", cmd, dbname=db)
        got = psql(proxy.port, "-c", cmd)
        assert got.stdout == ref.stdout, cmd


STREAM_SETUP = [
    "CREATE TABLE ss (id serial PRIMARY KEY, g bigint GENERATED ALWAYS AS IDENTITY, v text)",
    "CREATE SEQUENCE ss_other",
    "CREATE PUBLICATION p FOR TABLE ss",
]
STREAM = [
    "INSERT INTO ss (v) VALUES ('a'), ('b')",
    "SELECT nextval('ss_other'), setval('ss_other', 50)",
    "ALTER SEQUENCE ss_other RESTART WITH 7",
    "INSERT INTO ss (v) SELECT 'c' || g FROM generate_series(1, 3) g",
    "INSERT INTO ss OVERRIDING SYSTEM VALUE VALUES (100, 100, 'd')",
    "UPDATE ss SET g = DEFAULT WHERE id = 1",
    "BEGIN; SELECT nextval('ss_id_seq'); ROLLBACK",
    "INSERT INTO ss (v) VALUES ('after a rolled-back nextval')",
]


def test_sequences_are_not_streamed_the_values_they_give_are(proxy: ProxyServer, pg15: PgCluster) -> None:
    """pg_recvlogical over pgoutput: nextval, setval and ALTER SEQUENCE send nothing (as
    PostgreSQL 15, which decodes no sequences); the rows carry the values they were given."""
    from tests.integration.test_catalog_history import end_lsn, read_slot
    from tests.integration.test_subscriber import new_sub_db
    from tests.pgcompare import recvlogical

    streams = []
    for dsn in (new_sub_db(pg15), proxy.dsn()):
        with psycopg.connect(dsn, autocommit=True) as c:
            for sql in STREAM_SETUP:
                c.execute(sql)
        recvlogical(dsn, "seqs", "--create-slot", "-P", "pgoutput")
        with psycopg.connect(dsn, autocommit=True) as c:
            for sql in STREAM:
                c.execute(sql)
        streams.append(read_slot(dsn, "seqs", end_lsn(dsn)))
    assert streams[1] == streams[0]
    assert ("INSERT", 0, (b"7", b"7", b"after a rolled-back nextval")) in streams[1]
