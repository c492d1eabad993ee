"""Publication row filters and column lists as PostgreSQL 15 takes, prints and enforces
them: each statement runs on a real PostgreSQL 15 and on the proxy and must answer the same
(errors by SQLSTATE, message and detail; ``pg_get_expr`` of what is kept). Filters
PostgreSQL takes that the proxy could not evaluate with PostgreSQL's verdict are refused
with 0A000, tested apart."""

from __future__ import annotations

import psycopg
import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import same_answers
from tests.proxy import ProxyServer

QUAL = (
    "SELECT c.relname, pg_get_expr(r.prqual, r.prrelid) FROM pg_publication_rel r "
    "JOIN pg_publication p ON p.oid = r.prpubid JOIN pg_class c ON c.oid = r.prrelid "
    "WHERE p.pubname = '{}' ORDER BY 1"
)

#: One filter per statement, then what was kept; PostgreSQL's refusals among them.
FILTERS = [
    "(1234)", "(id + 1)", "(avg(id) > 1)", "(zz > 1)", "(random() > 0.5)", "(now() > '2020-01-01')",
    "(id > (select 1))", "(c::int > 1)", "(row_number() over () > 1)", "(rf2.a > 1)", "(rf1.id > 1)",
    "(id > 1 and b is null)", "(id in (1, 2))", "(c is distinct from 'x')", "(c is not distinct from 'x')",
    "(null)", "(true)", "('t')", "(id > $1)", "(id between 1 and 2)", "(xmin::text = '1')",
    "(ctid > '(0,1)')", "(b % 3 = 0 and id / 2 > 1)", "(id::bigint > 1)", "(length(c) > 2)",
    "(c like 'x%' or c > 'm')", "(nope(c))", "(m >= 1.5)", "(d < '2024-01-01')",
    "(id = any('{1,2,NULL}'))", "(c <> all('{x,\"y z\"}'))", "(b = any(array[1, 2]))", "(id = any('{}'))",
    "(coalesce(b, 0) > 1)", "(coalesce(c, 'x') = 'x')", "(coalesce(b, 'x') > 1)", "(c || 'x' = 'yx')",
    "(c || id = 'x1')",
]  # fmt: skip

STATEMENTS = [
    "CREATE TABLE rf1 (id int PRIMARY KEY, b int, c text, m numeric(8,2), d date)",
    "CREATE TABLE rf2 (a int, b int)",
    *[s for f in FILTERS for s in (f"CREATE PUBLICATION rfp FOR TABLE rf1 WHERE {f}", QUAL.format("rfp"),
                                     "DROP PUBLICATION IF EXISTS rfp")],
    # the replica identity must hold the filter's columns for UPDATE and DELETE, rows or none
    "CREATE PUBLICATION rfp FOR TABLE rf1 WHERE (b > 1)",
    "UPDATE rf1 SET c = 'x'",
    "DELETE FROM rf1 WHERE false",
    "INSERT INTO rf1 VALUES (1, 2, 'a')",
    "ALTER PUBLICATION rfp SET TABLE rf1 WHERE (id > 0)",
    "UPDATE rf1 SET c = 'y'",
    "CREATE PUBLICATION rfq FOR TABLE rf2 WHERE (a > 1)",
    "UPDATE rf2 SET b = 3",
    "DELETE FROM rf2",
    "DROP PUBLICATION rfq",
    # the filter follows a renamed column; its column cannot be dropped
    "ALTER PUBLICATION rfp SET TABLE rf1 WHERE (c <> 'z')",
    "ALTER TABLE rf1 RENAME COLUMN c TO cc",
    QUAL.format("rfp"),
    "ALTER TABLE rf1 DROP COLUMN cc",
    "ALTER TABLE rf1 RENAME COLUMN cc TO c",
    # ALTER PUBLICATION … DROP and column lists with TABLES IN SCHEMA
    "ALTER PUBLICATION rfp DROP TABLE rf1 WHERE (id > 1)",
    "ALTER PUBLICATION rfp DROP TABLE rf1 (id)",
    "ALTER PUBLICATION rfp DROP TABLE rf2 WHERE (a > 1)",
    "ALTER PUBLICATION rfp ADD TABLE rf2 WHERE (a > 1)",
    QUAL.format("rfp"),
    "DROP PUBLICATION rfp",
    "CREATE PUBLICATION rfp FOR TABLE rf1 (id, b) WHERE (id > 0), TABLES IN SCHEMA public",
    "CREATE PUBLICATION rfp FOR TABLES IN SCHEMA public, TABLE rf1 (id)",
    "CREATE PUBLICATION rfp FOR TABLE rf1 (id, b)",
    "ALTER PUBLICATION rfp ADD TABLES IN SCHEMA public",
    "DROP PUBLICATION rfp",
    "SET search_path = ''",
    "CREATE PUBLICATION rfp FOR TABLES IN SCHEMA CURRENT_SCHEMA",
    "RESET search_path",
    "DROP PUBLICATION IF EXISTS rfp",
    "DROP TABLE rf1, rf2",
]


def test_row_filters_as_postgresql_takes_them(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("rowfilter")), STATEMENTS).close()


@pytest.mark.parametrize(
    "flt",
    ["(n > 10)", "(upper(c) = 'X')", "(b + 1 > 2)", "(id / b > 1)", "(coalesce(n, 0) > 1)", "(c collate \"C\" > 'x')",
     "(case when b > 1 then true end)", "(b < any('{1,2}'))", "(ts > '2020-01-01')"],
)  # fmt: skip
def test_filters_the_proxy_cannot_evaluate_exactly_are_refused(proxy: ProxyServer, flt: str) -> None:
    with psycopg.connect(proxy.dsn(), autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS rfx (id int PRIMARY KEY, b int, c text, n numeric, ts timestamptz)")
        with pytest.raises(psycopg.errors.FeatureNotSupported) as ei:
            conn.execute(f"CREATE PUBLICATION rfx FOR TABLE rfx WHERE {flt}")
        assert "not supported by walsender-proxy" in str(ei.value)


#: The objects of a publication: duplicates, schemas that are not there or are the system's.
OBJECTS = [
    "CREATE SCHEMA rfs",
    "CREATE TABLE rfs.t1 (a int)",
    "CREATE TABLE rfk (id int PRIMARY KEY, b int)",
    "INSERT INTO rfs.t1 VALUES (1)",
    "CREATE PUBLICATION rfo WITH (publish = 'cluster, vacuum')",
    "CREATE PUBLICATION rfo FOR TABLES IN SCHEMA rfs, rfs",
    "SELECT count(*) FROM pg_publication_namespace pn JOIN pg_publication p ON p.oid = pn.pnpubid WHERE p.pubname = 'rfo'",
    "UPDATE rfs.t1 SET a = 2",
    "ALTER PUBLICATION rfo DROP TABLES IN SCHEMA rfs",
    "UPDATE rfs.t1 SET a = 2",
    "ALTER PUBLICATION rfo SET TABLES IN SCHEMA rfs, rfs",
    "ALTER PUBLICATION rfo DROP TABLES IN SCHEMA rfs",
    "UPDATE rfs.t1 SET a = 3",
    "ALTER PUBLICATION rfo DROP TABLES IN SCHEMA nope",
    "ALTER PUBLICATION rfo ADD TABLES IN SCHEMA nope",
    "CREATE PUBLICATION rfo2 FOR TABLES IN SCHEMA pg_catalog",
    "ALTER PUBLICATION rfo ADD TABLES IN SCHEMA pg_catalog",
    "CREATE PUBLICATION rfo3 FOR TABLE rfk, rfk",
    "SELECT tablename, rowfilter FROM pg_publication_tables WHERE pubname = 'rfo3'",
    "CREATE PUBLICATION rfo4 FOR TABLE rfk WHERE (id > 1), rfk",
    "CREATE PUBLICATION rfo4 FOR TABLE rfk, rfk WHERE (id > 1)",
    "CREATE PUBLICATION rfo4 FOR TABLE rfk (id), rfk",
    "CREATE PUBLICATION rfo4 FOR TABLE rfk (id, b, id)",
    "CREATE PUBLICATION rfo4 FOR TABLE rfk (id, nope)",
    # under REPLICA IDENTITY FULL no column list is allowed, even one naming every column
    "CREATE TABLE rff (a int, b text)",
    "ALTER TABLE rff REPLICA IDENTITY FULL",
    "CREATE PUBLICATION rfo4 FOR TABLE rff (a, b)",
    "UPDATE rff SET a = 1",
    "DELETE FROM rff",
    "ALTER PUBLICATION rfo4 SET TABLE rff",
    "UPDATE rff SET a = 1",
    "DROP TABLE rff",
    "DROP PUBLICATION IF EXISTS rfo, rfo2, rfo3, rfo4",
    "DROP TABLE rfs.t1, rfk",
    "DROP SCHEMA rfs",
]


def test_publication_objects_as_postgresql_takes_them(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("pubobjects")), OBJECTS).close()
