"""Names in FROM resolve, and ``*`` expands, as PostgreSQL 15 does.

Without LATERAL, PostgreSQL hides the FROM items beside the subquery: a name the subquery
does not define comes from an enclosing query, or is an error (42703, 42P01). DuckDB binds
such a subquery as if it were LATERAL, which answered other rows, and made
``UPDATE … FROM (SELECT … WHERE f1 = x1)`` change rows where PostgreSQL refuses the
statement. ``*`` over a join with USING or NATURAL lists the merged columns first, where
DuckDB keeps the left table's order. Each statement runs on a real PostgreSQL 15 and on the
proxy, full answers compared.
"""

from __future__ import annotations

from tests.pgcluster import PgCluster
from tests.pgcompare import same_answers
from tests.proxy import ProxyServer

SETUP = [
    "CREATE TABLE fs_int4 (f1 int)",
    "INSERT INTO fs_int4 VALUES (1), (2), (3)",
    "CREATE TABLE fs_int8 (q1 bigint, q2 bigint)",
    "INSERT INTO fs_int8 VALUES (1, 2), (3, 4), (2, 1)",
    "CREATE TABLE fs_xx1 (x1 int, x2 int)",
    "INSERT INTO fs_xx1 VALUES (1, 10), (2, 20)",
]


def test_a_subquery_without_lateral_sees_the_enclosing_query_not_its_neighbours(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("fromscope")), [
        *SETUP,
        # q2 inside y is fs_int8's (the enclosing query), not x's beside it
        "SELECT *, (SELECT r FROM (SELECT q1 AS q2) x, (SELECT q2 AS r) y) FROM fs_int8 ORDER BY 1, 2",
        "SELECT f1, g FROM fs_int4 a, (SELECT f1 AS g) ss",
        "SELECT f1, g FROM fs_int4 a, (SELECT a.f1 AS g) ss",
        "SELECT f1, g FROM fs_int4 a CROSS JOIN (SELECT f1 AS g) ss",
        "SELECT f1, g FROM fs_int4 a CROSS JOIN (SELECT a.f1 AS g) ss",
        "SELECT * FROM fs_int4 a, LATERAL (SELECT a.f1 + 1 AS g) s ORDER BY 1",
        "SELECT * FROM fs_int4 a, (SELECT f1 FROM fs_int4 b) s ORDER BY 1, 2",
        "SELECT (SELECT count(*) FROM fs_int4 a, (SELECT f1 FROM fs_int8 LIMIT 1) s) FROM fs_int8 x",
        # the statements PostgreSQL refuses change nothing
        "UPDATE fs_xx1 SET x2 = f1 FROM (SELECT * FROM fs_int4 WHERE f1 = x1) ss",
        "UPDATE fs_xx1 SET x2 = f1 FROM (SELECT * FROM fs_int4 WHERE f1 = fs_xx1.x1) ss",
        "DELETE FROM fs_xx1 USING (SELECT * FROM fs_int4 WHERE f1 = x1) ss",
        "SELECT * FROM fs_xx1 ORDER BY x1",
    ]).close()  # fmt: skip


def test_table_names_once_per_level(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("fromnames")), [
        "CREATE TABLE fs_names (f1 int)",
        "SELECT * FROM fs_names x, fs_names x",
        "SELECT * FROM fs_names JOIN fs_names USING (f1)",
        "SELECT * FROM fs_names, public.fs_names",
        "SELECT count(*) FROM (fs_names a JOIN fs_names b USING (f1)) j, fs_names a",
        "WITH x AS (SELECT 1) SELECT * FROM x, x",
    ]).close()  # fmt: skip


def test_a_table_without_columns_is_refused(proxy: ProxyServer, pg15: PgCluster) -> None:
    """PostgreSQL keeps rows of no columns; the lake keeps a table's rows as its columns'
    values, so it refuses the table rather than lose the rows."""
    from tests.pgcompare import Client

    c = Client(proxy.dsn())
    try:
        assert c("CREATE TABLE fs_nocols ()")[:2] == ("error", "0A000")
        c("CREATE TABLE fs_onecol (a int)")
        assert c("ALTER TABLE fs_onecol DROP COLUMN a")[:2] == ("error", "0A000")
    finally:
        c.close()


def test_star_over_using_and_natural_joins_in_postgresqls_order(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("fromusing")), [
        "CREATE TABLE fu_a (x int, i int, t text)",
        "CREATE TABLE fu_b (i int, k int)",
        "CREATE TABLE fu_c (k int, i int, z int)",
        "INSERT INTO fu_a VALUES (5, 1, 'one'), (6, 2, 'two'), (7, 9, 'nine')",
        "INSERT INTO fu_b VALUES (1, -1), (2, 2), (3, 3)",
        "INSERT INTO fu_c VALUES (2, 2, 20), (-1, 1, 10)",
        "SELECT * FROM fu_a JOIN fu_b USING (i) ORDER BY 1",
        "SELECT * FROM fu_a NATURAL JOIN fu_b ORDER BY 1",
        "SELECT * FROM fu_a LEFT JOIN fu_b USING (i) ORDER BY 1",
        "SELECT * FROM fu_a RIGHT JOIN fu_b USING (i) ORDER BY 1",
        "SELECT * FROM fu_a FULL JOIN fu_b USING (i) ORDER BY 1",
        "SELECT * FROM fu_a JOIN fu_b USING (i) JOIN fu_c USING (k, i) ORDER BY 1",
        "SELECT *, 1 AS one FROM fu_b NATURAL JOIN fu_c ORDER BY 1",
        "SELECT * FROM fu_a t1 (a, b) JOIN fu_b t2 (b) USING (b) ORDER BY 1",
        "SELECT fu_a.*, fu_b.* FROM fu_a JOIN fu_b USING (i) ORDER BY 1",
        "SELECT * FROM fu_a JOIN fu_b USING (x)",
        "SELECT * FROM fu_a t (q) JOIN fu_b USING (i) ORDER BY 1",
    ]).close()  # fmt: skip
