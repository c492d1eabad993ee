"""SQL-language functions as PostgreSQL 15 has them: CREATE [OR REPLACE] FUNCTION (quoted
and SQL-standard bodies, named and positional parameters, defaults, SETOF, RETURNS TABLE,
OUT parameters), its checks and errors (the body analysed at creation, the result coerced
as check_sql_fn_retval coerces it), calls resolved by argument types (overloads, named
arguments, 42883/42725), the first row of the last statement, STRICT, ALTER FUNCTION, DROP
FUNCTION and DROP SCHEMA with their messages, pg_proc and the functions psql's \\df reads,
a function surviving a restart — compared with a real PostgreSQL 15 where a client can see
it; and the refusals (0A000) of what the proxy does not do exactly."""

from __future__ import annotations

from pathlib import Path

import psycopg

from tests.integration.test_sql_clients import fresh_pg_db, psql
from tests.pgcluster import PgCluster
from tests.pgcompare import Client, same_answers
from tests.proxy import ProxyServer

SESSION = [
    "CREATE TABLE ft (a int, b text)",
    "INSERT INTO ft VALUES (1, 'one'), (2, 'two'), (3, 'three'), (2, 'deux')",
    # quoted bodies: parameters by name, by $n and as fname.name; defaults; named arguments
    "CREATE FUNCTION f_add(a int, b text DEFAULT 'x') RETURNS int LANGUAGE sql AS 'SELECT a + length($2)'",
    "SELECT f_add(1), f_add(2, 'abc'), f_add(b => 'zz', a => 1), f_add(a := 5)",
    "SELECT f_add(1.5)",
    "SELECT f_add('3')",
    "SELECT f_add(x => 1)",
    "SELECT f_add(b => 'q', 3)",
    "SELECT f_add(1, 'a', 2)",
    "CREATE FUNCTION f_qual(a int) RETURNS int LANGUAGE sql AS 'SELECT f_qual.a * 10'",
    "SELECT f_qual(4)",
    # a column of the body's FROM hides a parameter of its name
    "CREATE FUNCTION f_shadow(a int) RETURNS int LANGUAGE sql AS 'SELECT a FROM ft WHERE b = ''one'''",
    "SELECT f_shadow(42)",
    # one expression: inlined (GROUP BY matches, window and aggregate arguments)
    "CREATE FUNCTION f_dbl(x int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT x * 2'",
    "SELECT f_dbl(a), count(*) FROM ft GROUP BY f_dbl(a) ORDER BY 1",
    "SELECT f_dbl(sum(a)::int), sum(f_dbl(a)) FROM ft",
    "SELECT a, f_dbl(row_number() OVER (ORDER BY a, b)::int) FROM ft ORDER BY 1, 2",
    "SELECT a FROM ft WHERE f_dbl(a) > 2 ORDER BY f_dbl(a) DESC, b",
    # a volatile argument is evaluated once, however many times the body names it
    "CREATE FUNCTION f_same(x float8) RETURNS float8 LANGUAGE sql AS 'SELECT x - x'",
    "SELECT f_same(random()) FROM ft",
    # reading a table; the first row of the last statement; NULL when there is none
    "CREATE FUNCTION f_count(x int) RETURNS bigint LANGUAGE sql STABLE AS 'SELECT count(*) FROM ft WHERE a = x'",
    "SELECT a, f_count(a) FROM ft ORDER BY 1, 2",
    "CREATE FUNCTION f_first(x int) RETURNS text LANGUAGE sql AS 'SELECT b FROM ft WHERE a = x ORDER BY b'",
    "SELECT a, f_first(a) FROM ft ORDER BY 1, 2",
    "CREATE FUNCTION f_any(x int) RETURNS text LANGUAGE sql AS 'SELECT b FROM ft WHERE a = x'",
    "SELECT f_any(2), f_any(7), f_any(7) IS NULL",
    "CREATE FUNCTION f_two() RETURNS int LANGUAGE sql AS 'SELECT 1; SELECT 2'",
    "SELECT f_two()",
    # STRICT
    "CREATE FUNCTION f_strict(x int) RETURNS int LANGUAGE sql STRICT AS 'SELECT coalesce(x, -1) * 2'",
    "SELECT f_strict(NULL), f_strict(3), a, f_strict(nullif(a, 2)) FROM ft ORDER BY 3, 4",
    "CREATE FUNCTION f_lax(x int) RETURNS int LANGUAGE sql AS 'SELECT coalesce(x, -1) * 2'",
    "SELECT f_lax(NULL), f_lax(3)",
    # the result coerced to the declared type (assignment casts)
    "CREATE FUNCTION f_round() RETURNS int LANGUAGE sql AS 'SELECT 1.5'",
    "CREATE FUNCTION f_text() RETURNS text LANGUAGE sql AS 'SELECT 42'",
    "CREATE FUNCTION f_narrow() RETURNS int LANGUAGE sql AS 'SELECT 2147483648::bigint'",
    "SELECT f_round(), f_text(), pg_typeof(f_text())",
    "SELECT f_narrow()",
    "CREATE FUNCTION f_div(x int) RETURNS int LANGUAGE sql AS 'SELECT 10 / x'",
    "SELECT f_div(0)",
    # functions calling functions; types
    "CREATE FUNCTION f_nest(x int) RETURNS int LANGUAGE sql AS 'SELECT f_dbl(x) + f_strict(x)'",
    "SELECT f_nest(1), f_nest(NULL)",
    "CREATE FUNCTION f_num(x numeric) RETURNS numeric LANGUAGE sql AS 'SELECT x * 2'",
    "SELECT f_num(1.25), f_num(3)",
    "CREATE FUNCTION f_arr(x int[]) RETURNS int LANGUAGE sql AS 'SELECT x[2]'",
    "SELECT f_arr(ARRAY[1, 2, 3]), f_arr('{4,5,6}')",
    "CREATE FUNCTION f_vc(x varchar) RETURNS varchar LANGUAGE sql AS 'SELECT x'",
    "SELECT f_vc('abc'), pg_typeof(f_vc('abc'))",
    # overloading
    "CREATE FUNCTION f_ov(x int) RETURNS text LANGUAGE sql AS 'SELECT ''int'''",
    "CREATE FUNCTION f_ov(x text) RETURNS text LANGUAGE sql AS 'SELECT ''text'''",
    "CREATE FUNCTION f_ov(x numeric) RETURNS text LANGUAGE sql AS 'SELECT ''numeric'''",
    "SELECT f_ov(1), f_ov('a'), f_ov(1.5), f_ov(1::int8), f_ov(1::int2)",
    "CREATE FUNCTION f_ov2(x int8) RETURNS text LANGUAGE sql AS 'SELECT ''int8'''",
    "CREATE FUNCTION f_ov2(x float8) RETURNS text LANGUAGE sql AS 'SELECT ''float8'''",
    "SELECT f_ov2(1)",
    "SELECT f_ov2('1')",
    "CREATE FUNCTION f_ov3(x int, y text DEFAULT 'a') RETURNS text LANGUAGE sql AS 'SELECT ''two'''",
    "CREATE FUNCTION f_ov3(x int) RETURNS text LANGUAGE sql AS 'SELECT ''one'''",
    "SELECT f_ov3(1)",
    "SELECT f_ov3(1, 'b')",
    # SQL-standard bodies
    "CREATE FUNCTION f_ret(a text, b date) RETURNS boolean LANGUAGE sql RETURN a = 'abcd' AND b > '2001-01-01'",
    "SELECT f_ret('abcd', '2020-01-01'), f_ret('x', '2020-01-01')",
    "CREATE FUNCTION f_atomic(x int) RETURNS boolean BEGIN ATOMIC SELECT 1; SELECT x % 2 = 0; END",
    "SELECT f_atomic(2), f_atomic(3)",
    "CREATE FUNCTION f_dep() RETURNS int RETURN f_dbl(21)",
    "SELECT f_dep()",
    "DROP FUNCTION f_dbl(int)",
    # what an SQL-standard body reads is bound at creation and depends on
    "CREATE TABLE fdt (a int)",
    "INSERT INTO fdt VALUES (1), (2)",
    "CREATE VIEW fdv AS SELECT * FROM fdt",
    "CREATE FUNCTION f_reads() RETURNS bigint RETURN (SELECT count(*) FROM fdv)",
    "CREATE FUNCTION f_rows() RETURNS SETOF int LANGUAGE sql STABLE BEGIN ATOMIC SELECT a FROM fdt; END",
    "SELECT f_reads(), (SELECT array_agg(x ORDER BY x) FROM f_rows() x)",
    "DROP TABLE fdt",
    "DROP VIEW fdv",
    "DROP TABLE fdt CASCADE",
    "SELECT proname FROM pg_proc WHERE proname IN ('f_reads', 'f_rows')",
    "CREATE SCHEMA fds",
    "CREATE TABLE fds.t (a int)",
    "CREATE FUNCTION f_far() RETURNS bigint RETURN (SELECT count(*) FROM fds.t)",
    "DROP SCHEMA fds",
    "DROP SCHEMA fds CASCADE",
    # SETOF, RETURNS TABLE, OUT parameters, void
    "CREATE FUNCTION f_set(n int) RETURNS SETOF int LANGUAGE sql AS 'SELECT generate_series(1, n)'",
    "SELECT f_set(3)",
    "SELECT * FROM f_set(3)",
    "SELECT * FROM f_set(2) AS s",
    "SELECT * FROM f_set(2) AS s(v)",
    "SELECT a, v FROM ft, f_set(a) AS v ORDER BY 1, 2",
    "CREATE FUNCTION f_tab(n int) RETURNS TABLE (i int, sq bigint) LANGUAGE sql AS 'SELECT g, g * g FROM generate_series(1, n) g'",
    "SELECT * FROM f_tab(3)",
    "SELECT * FROM f_tab(2) AS z(p, q)",
    "CREATE FUNCTION f_out(x int, OUT y int) LANGUAGE sql AS 'SELECT x + 1'",
    "SELECT f_out(1)",
    "SELECT * FROM f_out(1)",
    "CREATE FUNCTION f_out2(x int, OUT y int, OUT text) LANGUAGE sql AS 'SELECT x + 1, ''z'''",
    "SELECT * FROM f_out2(1)",
    "CREATE FUNCTION f_void(a int) RETURNS void LANGUAGE sql AS 'SELECT a + 1'",
    "SELECT f_void(1)",
    "SELECT * FROM f_void(1)",
    "CREATE FUNCTION f_voids(n int) RETURNS SETOF void LANGUAGE sql AS 'SELECT 1 / (n - 3)'",
    "SELECT * FROM f_voids(2)",
    "SELECT * FROM f_voids(3)",
    "SELECT scalar FROM f_add(1) AS scalar",
    # errors at creation, as PostgreSQL's validator and check_sql_fn_retval word them
    "CREATE FUNCTION f_bad(int) RETURNS int LANGUAGE sql AS 'SELECT ''not an integer'''",
    "CREATE FUNCTION f_bad(int) RETURNS int LANGUAGE sql AS 'SELECT 1, 2'",
    "CREATE FUNCTION f_bad(int) RETURNS int LANGUAGE sql AS 'SELECT $2'",
    "CREATE FUNCTION f_bad(int) RETURNS int LANGUAGE sql AS 'not even sql'",
    "CREATE FUNCTION f_bad(int) RETURNS int LANGUAGE sql AS 'SELECT x'",
    "CREATE FUNCTION f_bad(int) RETURNS int LANGUAGE sql AS ''",
    "CREATE FUNCTION f_bad(int) RETURNS int LANGUAGE sql AS 'a', 'b'",
    "CREATE FUNCTION f_bad() RETURNS TABLE (a int, b int) LANGUAGE sql AS 'SELECT 1, now()'",
    "CREATE FUNCTION f_bad() RETURNS TABLE (a int, b text) LANGUAGE sql AS 'SELECT 1'",
    "CREATE FUNCTION f_bad(x int) RETURNS int LANGUAGE sql AS $$ SELECT x $$ RETURN x",
    "CREATE FUNCTION f_bad(x int) RETURNS int AS 'SELECT x'",
    "CREATE FUNCTION f_bad(x int) RETURNS int LANGUAGE nosuch AS 'SELECT x'",
    "CREATE FUNCTION f_bad(x int) RETURNS int LANGUAGE sql STRICT STRICT AS 'SELECT x'",
    "CREATE FUNCTION f_bad(x nosuch) RETURNS int LANGUAGE sql AS 'SELECT 1'",
    "CREATE FUNCTION f_bad(x int) RETURNS nosuch LANGUAGE sql AS 'SELECT 1'",
    "CREATE FUNCTION nosch.f_bad(x int) RETURNS int LANGUAGE sql AS 'SELECT 1'",
    "CREATE FUNCTION f_bad(a int DEFAULT 1, b int) RETURNS int LANGUAGE sql AS 'SELECT a'",
    "CREATE FUNCTION f_bad(a int, a int) RETURNS int LANGUAGE sql AS 'SELECT 1'",
    "CREATE FUNCTION f_bad(a int DEFAULT 'x'::text) RETURNS int LANGUAGE sql AS 'SELECT 1'",
    "CREATE FUNCTION f_bad(a int, OUT b int) RETURNS text LANGUAGE sql AS 'SELECT 1'",
    "CREATE FUNCTION f_bad(a int) LANGUAGE sql AS 'SELECT 1'",
    "CREATE FUNCTION f_bad(x anyelement) RETURNS int LANGUAGE sql RETURN 1",
    "CREATE FUNCTION f_bad(x int) RETURNS int LANGUAGE sql COST -1 AS 'SELECT 1'",
    "CREATE FUNCTION f_bad(x int) RETURNS int LANGUAGE sql ROWS 10 AS 'SELECT 1'",
    # CREATE OR REPLACE
    "CREATE FUNCTION f_add(a int, b text DEFAULT 'x') RETURNS int LANGUAGE sql AS 'SELECT 1'",
    "CREATE OR REPLACE FUNCTION f_add(a int, b text DEFAULT 'x') RETURNS bigint LANGUAGE sql AS 'SELECT 1'",
    "CREATE OR REPLACE FUNCTION f_add(z int, b text DEFAULT 'x') RETURNS int LANGUAGE sql AS 'SELECT 1'",
    "CREATE OR REPLACE FUNCTION f_add(a int, b text) RETURNS int LANGUAGE sql AS 'SELECT 1'",
    "CREATE OR REPLACE FUNCTION f_add(a int, b text DEFAULT 'y') RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT a + 100'",
    "SELECT f_add(1)",
    # ALTER FUNCTION
    "ALTER FUNCTION f_lax(int) IMMUTABLE STRICT COST 7",
    "ALTER FUNCTION f_lax(int) ROWS 5",
    "ALTER FUNCTION f_lax(int) VOLATILE VOLATILE",
    "ALTER FUNCTION f_nosuch(int) VOLATILE",
    "SELECT f_lax(NULL)",
    # the catalog
    "SELECT proname, prosrc, prorettype::regtype, proretset, proargtypes, proallargtypes, proargmodes, proargnames,"
    " pronargs, pronargdefaults, provolatile, proisstrict, procost, prorows, proparallel, prolang, prokind, prosecdef"
    " FROM pg_proc WHERE proname LIKE 'f\\_%' ORDER BY proname, pronargs",
    "SELECT p.proname, pg_get_function_arguments(p.oid), pg_get_function_identity_arguments(p.oid),"
    " pg_get_function_result(p.oid) FROM pg_proc p WHERE proname LIKE 'f\\_%' ORDER BY 1, 3",
    "SELECT pg_get_functiondef('f_add'::regproc)",
    "SELECT pg_get_functiondef('f_out2'::regproc)",
    "SELECT pg_get_functiondef('f_tab'::regproc)",
    "SELECT pg_get_functiondef('f_ov'::regproc)",
    "SELECT 'f_strict'::regproc::text, to_regproc('f_ov'), to_regproc('f_nosuch'), 'f_strict'::regproc::oid > 16383",
    "SELECT 'f_nosuch'::regproc",
    # search path, schemas
    "CREATE SCHEMA fs",
    "CREATE FUNCTION fs.f_in() RETURNS int LANGUAGE sql AS 'SELECT 7'",
    "SELECT f_in()",
    "SELECT fs.f_in()",
    "SET search_path = fs, public",
    "SELECT f_in(), f_strict(1)",
    "CREATE FUNCTION f_made_here() RETURNS int LANGUAGE sql AS 'SELECT 8'",
    "SELECT pronamespace::regnamespace FROM pg_proc WHERE proname = 'f_made_here'",
    "DROP SCHEMA fs",
    "DROP SCHEMA fs CASCADE",
    "RESET search_path",
    # a publication's row filter takes no user function
    "CREATE TABLE fpt (a int PRIMARY KEY)",
    "CREATE PUBLICATION fpp FOR TABLE fpt WHERE (f_strict(a) > 1)",
    "CREATE PUBLICATION fpp FOR TABLE fpt",
    "ALTER PUBLICATION fpp SET TABLE fpt WHERE (a > f_strict(1))",
    "DROP PUBLICATION fpp",
    "DROP TABLE fpt",
    # DROP FUNCTION
    "DROP FUNCTION f_nosuch",
    "DROP FUNCTION IF EXISTS f_nosuch, f_nosuch(int, varchar(3), text[])",
    "DROP FUNCTION IF EXISTS nosch.f_nosuch(int)",
    "DROP FUNCTION f_ov",
    "DROP FUNCTION f_ov(bigint)",
    "DROP FUNCTION f_ov(int), f_nosuch(int)",
    "DROP FUNCTION f_ov(int), f_ov(text), f_ov(numeric)",
    "CREATE FUNCTION f_base() RETURNS int RETURN 1",
    "CREATE FUNCTION f_user() RETURNS int RETURN f_base() + 1",
    "DROP FUNCTION f_base()",
    "DROP FUNCTION f_base() CASCADE",
    "SELECT count(*) FROM pg_proc WHERE proname IN ('f_base', 'f_user')",
]


#: What PostgreSQL does and the proxy refuses (0A000 naming the feature).
REFUSED = [
    "CREATE FUNCTION r_pl() RETURNS int LANGUAGE plpgsql AS 'BEGIN RETURN 1; END'",
    "CREATE FUNCTION r_sec() RETURNS int LANGUAGE sql SECURITY DEFINER AS 'SELECT 1'",
    "CREATE FUNCTION r_poly(x anyelement) RETURNS anyelement LANGUAGE sql AS 'SELECT x'",
    "CREATE FUNCTION r_var(VARIADIC x int[]) RETURNS int LANGUAGE sql AS 'SELECT x[1]'",
    "CREATE FUNCTION r_dml() RETURNS int LANGUAGE sql AS 'INSERT INTO ft VALUES (9, ''nine'') RETURNING a'",
    "CREATE FUNCTION r_rows() RETURNS SETOF ft LANGUAGE sql AS 'SELECT * FROM ft'",
    "CREATE FUNCTION r_rec() RETURNS record LANGUAGE sql AS 'SELECT 1, 2'",
    "CREATE FUNCTION lower(x int) RETURNS int LANGUAGE sql AS 'SELECT 1'",
    "CREATE PROCEDURE r_proc() LANGUAGE sql AS 'SELECT 1'",
    "CREATE FUNCTION r_work() RETURNS int LANGUAGE sql AS 'SELECT a FROM ft; SELECT 2'",
    # several rows in no defined order, with arguments from the query's rows
    "SELECT a, f_any(a) FROM ft",
    "SELECT f_tab(2)",
    "SELECT pg_get_functiondef('f_ret'::regproc)",
    "CREATE VIEW r_view AS SELECT f_strict(a) FROM ft",
    "ALTER TABLE r_t RENAME TO r_t2",
    "ALTER TABLE r_t DROP COLUMN a",
    "CREATE TABLE r_def (a int DEFAULT f_strict(1))",
]


def test_sql_functions_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    ref_dsn = pg15.dsn(dbname=pg15.new_database("sqlfuncs"))
    same_answers(proxy.dsn(), ref_dsn, SESSION).close()
    with Client(proxy.dsn()) as got:
        got("CREATE TABLE r_t (a int)")
        got("CREATE FUNCTION r_reads() RETURNS bigint RETURN (SELECT count(*) FROM r_t)")
        for sql in REFUSED:
            answer = got(sql)
            assert answer[:2] == ("error", "0A000") and "not supported by walsender-proxy" in str(answer[2]), (sql, answer)
        got("DROP TABLE ft, r_t CASCADE")


def test_the_body_is_analysed_when_called(proxy: ProxyServer, pg15: PgCluster) -> None:
    """A quoted body is analysed at each call with the search path then (PostgreSQL tracks
    no dependency of it): a table dropped under it is the call's error, one of the same name
    earlier on the path is the one read."""
    stmts = [
        "CREATE TABLE lt (a int)",
        "INSERT INTO lt VALUES (1), (2)",
        "CREATE FUNCTION l_sum() RETURNS bigint LANGUAGE sql AS 'SELECT sum(a) FROM lt'",
        "SELECT l_sum()",
        "CREATE SCHEMA ls",
        "CREATE TABLE ls.lt (a int)",
        "INSERT INTO ls.lt VALUES (40)",
        "SET search_path = ls, public",
        "SELECT l_sum()",
        "RESET search_path",
        "DROP TABLE lt",
        "SELECT l_sum()",
        "SET check_function_bodies = off",
        "CREATE FUNCTION l_late() RETURNS int LANGUAGE sql AS 'SELECT a FROM nowhere'",
        "SELECT l_late()",
        "RESET check_function_bodies",
        "DROP SCHEMA ls CASCADE",
        "DROP FUNCTION l_sum(), l_late()",
    ]
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("late")), stmts).close()


def test_a_function_survives_a_restart(tmp_path: Path) -> None:
    with ProxyServer(tmp_path / "data") as server, psycopg.connect(server.dsn(), autocommit=True) as c:
        c.execute("CREATE FUNCTION rf(x int, y int DEFAULT 10) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT x * y'")
        c.execute("CREATE FUNCTION rs() RETURNS SETOF text RETURN 'a'")
        c.execute("BEGIN")
        c.execute("CREATE FUNCTION gone() RETURNS int LANGUAGE sql AS 'SELECT 1'")
        c.execute("ROLLBACK")
    with ProxyServer(tmp_path / "data") as server, psycopg.connect(server.dsn(), autocommit=True) as c:
        assert c.execute("SELECT rf(4), rf(4, 2)").fetchall() == [(40, 8)]
        assert c.execute("SELECT * FROM rs()").fetchall() == [("a",)]
        assert c.execute("SELECT proname, provolatile FROM pg_proc WHERE proname IN ('rf', 'rs', 'gone') ORDER BY 1").fetchall() == [
            ("rf", "i"),
            ("rs", "v"),
        ]
        assert c.execute("SELECT pg_get_function_arguments('rf'::regproc)").fetchall() == [("x integer, y integer DEFAULT 10",)]


def test_psql_lists_and_shows_functions(proxy: ProxyServer, pg15: PgCluster) -> None:
    schema = (
        "CREATE SCHEMA pfs; CREATE FUNCTION pfs.pf(a int, b text DEFAULT 'x') RETURNS int LANGUAGE sql STABLE AS 'SELECT a + length(b)';"
        " CREATE FUNCTION pfs.pf(a bigint) RETURNS SETOF int LANGUAGE sql IMMUTABLE STRICT ROWS 5 AS $$SELECT 1$$;"
        " CREATE FUNCTION pfs.pt(n int) RETURNS TABLE (i int, \"Q\" text) LANGUAGE sql AS 'SELECT n, ''q''';"
        " CREATE FUNCTION pfs.pv() RETURNS void RETURN NULL;"
    )
    db = fresh_pg_db(pg15)
    assert psql(pg15.port, "-c", schema, dbname=db).returncode == 0
    r = psql(proxy.port, "-c", schema)
    assert r.returncode == 0, r.stderr
    for cmd in ("\\df pfs.*", "\\df pfs.pf", "\\df+ pfs.pt", "\\sf pfs.pt"):
        ref = psql(pg15.port, "-c", cmd, dbname=db)
        got = psql(proxy.port, "-c", cmd)
        assert got.stdout == ref.stdout, cmd
    psql(proxy.port, "-c", "DROP SCHEMA pfs CASCADE")


def test_parameters_take_the_function_s_types(proxy: ProxyServer, pg15: PgCluster) -> None:
    """``f($1)`` with ``$1`` unspecified at Parse: the parameter is the function's parameter
    type (a text value read as that type), as PostgreSQL's resolution makes it; a volatile
    argument put into a nested call is evaluated once."""
    answers = []
    for dsn in (proxy.dsn(), pg15.dsn(dbname=pg15.new_database("fparams"))):
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("CREATE FUNCTION pd(x int) RETURNS int LANGUAGE sql AS 'SELECT x * 2'")
            c.execute("CREATE FUNCTION g2(x float8) RETURNS float8 LANGUAGE sql AS 'SELECT x - x'")
            c.execute("CREATE FUNCTION f2(y float8) RETURNS float8 LANGUAGE sql AS 'SELECT g2(y) + g2($1)'")
            out: list[object] = []
            for q, p in [("SELECT pd(%s)", (5,)), ("SELECT pd(%s)", (50000000000,)), ("SELECT pd(%s)", ("7",)), ("SELECT pd(%s)", (None,)), ("SELECT pd(%s::text)", ("7",))]:
                for prepare in (False, True):
                    try:
                        out.append(c.execute(q, p, prepare=prepare).fetchall())
                    except psycopg.Error as e:
                        out.append((e.sqlstate, e.diag.message_primary))
            out.append(c.execute("SELECT f2(random()) FROM generate_series(1, 3)").fetchall())
            answers.append(out)
    assert answers[0] == answers[1]


WRITES = [
    "CREATE TABLE fw (a smallint, b real)",
    "INSERT INTO fw VALUES (777, 7.8), (0, 0.09561), (42, 324.78), (56, 99.097), (787, 777.777)",
    "CREATE FUNCTION fw_max() RETURNS smallint LANGUAGE sql STABLE AS 'SELECT max(a) FROM fw'",
    "BEGIN",
    "UPDATE fw SET a = fw_max() + 10 WHERE a > 0",
    "SELECT * FROM fw ORDER BY b",
    "ROLLBACK",
    "CREATE TABLE fw_other (v int)",
    "INSERT INTO fw_other VALUES (5)",
    "CREATE FUNCTION fw_other_max() RETURNS int LANGUAGE sql AS 'SELECT max(v) FROM fw_other'",
    "INSERT INTO fw SELECT fw_other_max(), 2",
    "UPDATE fw SET a = fw_other_max() + 1 WHERE b = 2",
    "SELECT * FROM fw ORDER BY b",
]


def test_a_function_reading_the_table_a_statement_writes(proxy: ProxyServer, pg15: PgCluster) -> None:
    """A STABLE function sees the statement's snapshot, as here; a VOLATILE one reading the
    table the statement writes would see the rows changed before it in PostgreSQL: that is
    refused (0A000), one reading another table is not."""
    with same_answers(proxy.dsn(), pg15.dsn(dbname=fresh_pg_db(pg15)), WRITES) as got:
        got("CREATE OR REPLACE FUNCTION fw_max() RETURNS smallint LANGUAGE sql VOLATILE AS 'SELECT max(a) FROM fw'")
        for sql in ("UPDATE fw SET a = fw_max() + 10 WHERE a > 0", "INSERT INTO fw SELECT fw_max(), 3", "DELETE FROM fw WHERE a = fw_max()"):
            outcome = got(sql)
            assert outcome[:2] == ("error", "0A000") and "VOLATILE SQL function fw_max()" in str(outcome[2]), outcome
