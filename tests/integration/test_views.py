"""Plain views as PostgreSQL 15 has them: CREATE [OR REPLACE] [TEMP] VIEW with its rules
and errors, DROP VIEW / DROP TABLE with dependencies (2BP01, CASCADE), a view read like its
query as a subquery (in joins, subqueries, CTEs, view over view, column aliases) with its
names bound at creation, the catalog (pg_class, pg_attribute, pg_views, information_schema,
psql's ``\\d``), views surviving a restart, never published; and the refusals: writing
through a view, WITH CHECK OPTION, view options, RECURSIVE and materialized views —
compared with a real PostgreSQL 15 where a client can see it."""

from __future__ import annotations

import time
from decimal import Decimal
from pathlib import Path

import psycopg

from tests.integration.test_sql_clients import fresh_pg_db, psql
from tests.pgcluster import PgCluster
from tests.pgcompare import Client, same_answers
from tests.proxy import ProxyServer

SESSION = [
    "CREATE TABLE vt (a int PRIMARY KEY, b text, c numeric(5,2))",
    "INSERT INTO vt VALUES (1, 'x', 1.5), (2, 'y', 2.5), (3, 'z', 3.5)",
    "CREATE VIEW vv AS SELECT a, b FROM vt WHERE a > 1",
    "SELECT * FROM vv ORDER BY a",
    "SELECT vv.a, vt.c FROM vv JOIN vt USING (a) ORDER BY 1",
    "SELECT * FROM vv x(p) ORDER BY p",
    "SELECT * FROM vv x(p, q, r)",
    "SELECT (SELECT count(*) FROM vv), EXISTS (SELECT 1 FROM vv WHERE a = 3)",
    "WITH w AS (SELECT * FROM vv) SELECT b FROM w ORDER BY b",
    "WITH vv AS (SELECT 42 AS a) SELECT * FROM vv",
    "SELECT * FROM (SELECT * FROM vv) s(p, q) ORDER BY p",
    "CREATE VIEW vv2 (x) AS SELECT a * 10, 'lit', c FROM vv JOIN vt USING (a)",
    "SELECT * FROM vv2 ORDER BY 1",
    "SELECT x, \"?column?\", pg_typeof(\"?column?\") FROM vv2 ORDER BY 1",
    "CREATE VIEW vagg AS SELECT count(*) AS n, sum(c) AS s FROM vt",
    "SELECT * FROM vagg",
    # CREATE OR REPLACE may only append columns
    "CREATE VIEW vv AS SELECT 1",
    "CREATE OR REPLACE VIEW vv AS SELECT a FROM vt",
    "CREATE OR REPLACE VIEW vv AS SELECT b, a FROM vt",
    "CREATE OR REPLACE VIEW vv AS SELECT a::text AS a, b FROM vt",
    "CREATE OR REPLACE VIEW vv AS SELECT a, b, a + 1 AS d FROM vt",
    "SELECT * FROM vv ORDER BY a",
    "CREATE OR REPLACE VIEW vt AS SELECT 1",
    "CREATE VIEW vt AS SELECT 1",
    # analysis errors, in PostgreSQL's order and positions
    "CREATE VIEW vbad AS SELECT nope FROM vt",
    "CREATE VIEW vbad AS SELECT * FROM nope",
    "CREATE VIEW vbad AS SELECT a, a FROM vt",
    "CREATE VIEW vbad (p, q, r, s) AS SELECT a, b FROM vt",
    # the catalog
    "SELECT relname, relkind, relnatts, relhasrules, relpersistence, relam, relfilenode, reltuples, relreplident"
    " FROM pg_class WHERE relname IN ('vv', 'vv2', 'vagg') ORDER BY 1",
    "SELECT attrelid::regclass, attname, atttypid::regtype, atttypmod, attnum, attnotnull FROM pg_attribute"
    " WHERE attrelid IN ('vv'::regclass, 'vv2'::regclass) ORDER BY 1, attnum",
    "SELECT schemaname, viewname FROM pg_views WHERE schemaname = 'public' ORDER BY 2",
    "SELECT table_name, table_type, is_insertable_into FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    "SELECT table_name, check_option, is_updatable, is_insertable_into FROM information_schema.views WHERE table_schema = 'public' ORDER BY 1",
    "SELECT table_name, column_name, ordinal_position, data_type, is_nullable, is_updatable, numeric_precision, numeric_scale"
    " FROM information_schema.columns WHERE table_schema = 'public' AND table_name LIKE 'v%' ORDER BY 1, 3",
    "SELECT typname, typtype, typrelid::regclass FROM pg_type WHERE typname IN ('vv', '_vv') ORDER BY 1",
    "SELECT pg_get_viewdef('vt'), pg_get_viewdef('vv') IS NOT NULL",
    # what names a view reads were bound when it was made
    "CREATE SCHEMA vs",
    "CREATE TABLE vs.vt (z int)",
    "SET search_path = vs, public",
    "SELECT * FROM vv ORDER BY a",
    "CREATE VIEW vs.vw AS SELECT * FROM vt",
    "CREATE TEMP TABLE vtemp (q int)",
    "CREATE VIEW vs.vtv AS SELECT q FROM vtemp",
    "CREATE VIEW vtv AS SELECT q FROM vtemp",
    "SELECT * FROM vs.vw",
    "RESET search_path",
    "SELECT * FROM vs.vw",
    # COPY and TRUNCATE of a view
    "COPY vv TO STDOUT",
    "TRUNCATE vv",
    # ALTER VIEW … RENAME
    "CREATE VIEW vr AS SELECT a, b FROM vt",
    "ALTER VIEW vr RENAME TO vr2",
    "ALTER VIEW vr2 RENAME COLUMN b TO bb",
    "SELECT * FROM vr2 ORDER BY a",
    "ALTER TABLE vr2 RENAME TO vr3",
    "ALTER VIEW IF EXISTS nope RENAME TO nope2",
    "ALTER VIEW vt RENAME TO vt2",
    "DROP VIEW vr3",
    # DROP and its dependencies
    "DROP VIEW vt",
    "DROP TABLE vv",
    "DROP TABLE IF EXISTS vv",
    "DROP VIEW nope",
    "DROP VIEW IF EXISTS nope",
    "DROP VIEW vv",
    "DROP VIEW IF EXISTS nope, vv",
    "BEGIN",
    "DROP VIEW vv2, vv",
    "SELECT relname FROM pg_class WHERE relname LIKE 'vv%' ORDER BY 1",
    "ROLLBACK",
    "DROP TABLE vt",
    "DROP SCHEMA vs",
    "BEGIN",
    "DROP VIEW vv CASCADE",
    "SELECT relname FROM pg_class WHERE relname LIKE 'vv%' ORDER BY 1",
    "ROLLBACK",
    "SELECT relname FROM pg_class WHERE relname LIKE 'vv%' ORDER BY 1",
    "DROP TABLE vt CASCADE",
    "DROP SCHEMA vs CASCADE",
    "SELECT relname FROM pg_class WHERE relname LIKE 'v%' AND relnamespace = 'public'::regnamespace ORDER BY 1",
]


#: What PostgreSQL does (writing through an automatically updatable view, CHECK OPTION,
#: security_barrier, RECURSIVE and materialized views) and the proxy refuses.
REFUSED = [
    "INSERT INTO vv VALUES (9, 'q')",
    "UPDATE vv SET b = 'w'",
    "DELETE FROM vv",
    "CREATE VIEW vopt WITH (security_barrier) AS SELECT a FROM vt",
    "CREATE VIEW vopt AS SELECT a FROM vt WITH CHECK OPTION",
    "CREATE RECURSIVE VIEW vrec (n) AS VALUES (1) UNION ALL SELECT n + 1 FROM vrec WHERE n < 3",
    "CREATE MATERIALIZED VIEW vmat AS SELECT 1",
]


def test_views_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    ref_dsn = pg15.dsn(dbname=pg15.new_database("views"))
    cut = SESSION.index("COPY vv TO STDOUT")
    same_answers(proxy.dsn(), ref_dsn, SESSION[:cut]).close()
    with Client(proxy.dsn()) as got:
        for sql in REFUSED:
            answer = got(sql)
            assert answer[:2] == ("error", "0A000") and "not supported by walsender-proxy" in str(answer[2]), sql
        assert got("SELECT * FROM vt ORDER BY a")[2] == [(1, "x", Decimal("1.50")), (2, "y", Decimal("2.50")), (3, "z", Decimal("3.50"))]
    same_answers(proxy.dsn(), ref_dsn, SESSION[cut:]).close()


TEMP = [
    "CREATE TABLE tvbase (a int)",
    "INSERT INTO tvbase VALUES (1), (2)",
    "CREATE TEMP VIEW tv1 AS SELECT a FROM tvbase",
    "CREATE TEMP TABLE tvt (q int)",
    "INSERT INTO tvt VALUES (7)",
    "CREATE VIEW tv2 AS SELECT q FROM tvt",
    "SELECT c.relname, c.relpersistence, n.nspname LIKE 'pg_temp_%' FROM pg_class c"
    " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname LIKE 'tv_' ORDER BY 1",
    "SELECT * FROM tv1 ORDER BY a",
    "SELECT * FROM tv2",
    "DROP TABLE tvt",
    "DROP TABLE tvt CASCADE",
]


def test_temporary_views_go_with_the_session(proxy: ProxyServer, pg15: PgCluster) -> None:
    db = pg15.new_database("tviews")
    same_answers(proxy.dsn(), pg15.dsn(dbname=db), TEMP).close()
    after = "SELECT relname FROM pg_class WHERE relname LIKE 'tv_' ORDER BY 1"
    with Client(proxy.dsn()) as got, Client(pg15.dsn(dbname=db)) as ref:
        # (a backend drops its temporary objects as it exits, after its client has gone:
        # the next session may look a moment before, on PostgreSQL as on the proxy)
        deadline = time.monotonic() + 10
        while repr(got(after)) != repr(ref(after)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert repr(got(after)) == repr(ref(after))
        got("DROP TABLE tvbase CASCADE")


def test_a_view_that_reads_itself_is_42P17(proxy: ProxyServer, pg15: PgCluster) -> None:
    stmts = [
        "CREATE VIEW selfv AS SELECT 1 AS a",
        "CREATE OR REPLACE VIEW selfv AS SELECT a FROM selfv",
        "SELECT * FROM selfv",
        "DROP VIEW selfv",
    ]
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("selfv")), stmts).close()


def test_views_are_never_published(proxy: ProxyServer, pg15: PgCluster) -> None:
    stmts = [
        "CREATE TABLE pvt (a int PRIMARY KEY)",
        "CREATE VIEW pvv AS SELECT a FROM pvt",
        "CREATE PUBLICATION pvpub FOR ALL TABLES",
        "SELECT tablename FROM pg_publication_tables WHERE pubname = 'pvpub' AND tablename LIKE 'pv%' ORDER BY 1",
        "CREATE PUBLICATION pvpub2 FOR TABLE pvv",
        "CREATE PUBLICATION pvpub3",
        "ALTER PUBLICATION pvpub3 ADD TABLE pvv",
        "DROP PUBLICATION pvpub, pvpub3",
        "DROP TABLE pvt CASCADE",
    ]
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("pubv")), stmts).close()


def test_psql_describes_a_view(proxy: ProxyServer, pg15: PgCluster) -> None:
    schema = "CREATE TABLE dvt (a int, b varchar(10)); CREATE VIEW dvv AS SELECT a, b, 'k' AS k FROM dvt;"
    db = fresh_pg_db(pg15)
    assert psql(pg15.port, "-c", schema, dbname=db).returncode == 0
    r = psql(proxy.port, "-c", schema)
    assert r.returncode == 0, r.stderr
    for cmd in ("\\d dvv", "\\dv dvv*"):
        ref = psql(pg15.port, "-c", cmd, dbname=db)
        got = psql(proxy.port, "-c", cmd)
        assert got.stdout == ref.stdout, cmd
    # \d+ matches but for the definition's text (pglast's deparse, not ruleutils')
    ref = psql(pg15.port, "-c", "\\d+ dvv", dbname=db).stdout.split("View definition:")[0]
    got = psql(proxy.port, "-c", "\\d+ dvv").stdout.split("View definition:")[0]
    assert got == ref
    psql(proxy.port, "-c", "DROP TABLE dvt CASCADE")


def test_a_view_survives_a_restart(tmp_path: Path) -> None:
    with ProxyServer(tmp_path / "data") as server, psycopg.connect(server.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE rt (a int)")
        c.execute("INSERT INTO rt VALUES (1), (2)")
        c.execute("CREATE VIEW rv (x) AS SELECT a * 2 FROM rt")
    with ProxyServer(tmp_path / "data") as server, psycopg.connect(server.dsn(), autocommit=True) as c:
        assert c.execute("SELECT x FROM rv ORDER BY x").fetchall() == [(2,), (4,)]
        assert c.execute("SELECT relkind FROM pg_class WHERE relname = 'rv'").fetchall() == [("v",)]


def test_row_description_names_the_view(proxy: ProxyServer, pg15: PgCluster) -> None:
    """A column selected from a view names the view and the column's number, its type
    modifier the view column's (what pgjdbc's ResultSetMetaData reads)."""
    answers = []
    for dsn in (proxy.dsn(), pg15.dsn(dbname=pg15.new_database("rdv"))):
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("CREATE TABLE rdt (a int, b varchar(10), c numeric(5,2))")
            c.execute("CREATE VIEW rdv AS SELECT a, b, c, a + 1 AS d FROM rdt")
            oid = c.execute("SELECT 'rdv'::regclass::oid").fetchone()[0]  # type: ignore[index]
            res = c.execute("SELECT d, c, b, a FROM rdv").pgresult
            assert res is not None
            answers.append([(res.ftable(i) == oid, res.ftablecol(i), res.ftype(i), res.fmod(i)) for i in range(4)])
            c.execute("DROP TABLE rdt CASCADE")
    assert answers[0] == answers[1]


def test_a_collation_in_a_view_is_refused(proxy: ProxyServer, pg15: PgCluster) -> None:
    """A view column's collation is not kept (CREATE OR REPLACE could not compare it)."""
    stmts = ["CREATE TABLE rvt (a int, t text)", "CREATE VIEW rvv AS SELECT a FROM rvt", "SELECT a FROM rvv"]
    db = pg15.new_database("rvv")
    got = same_answers(proxy.dsn(), pg15.dsn(dbname=db), stmts)
    with got:
        answer = got("CREATE VIEW rvc AS SELECT t COLLATE \"POSIX\" FROM rvt")
        assert answer[:2] == ("error", "0A000"), answer
        got("DROP TABLE rvt CASCADE")
