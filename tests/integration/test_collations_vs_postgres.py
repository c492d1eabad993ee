"""COLLATE, compared with PostgreSQL 15: a collation there is (every one in pg_collation
orders by code point, as the proxy compares text) is accepted in expressions and column
definitions and orders as PostgreSQL's does; one there is not is 42704 and a COLLATE on a
type without collations 42804, word for word, with the error's position — before, the
proxy ignored the clause, so a collation that orders otherwise in PostgreSQL would have
been answered in code-point order. The SQL/XML functions are 0A000 naming the function
(they were a 42601 syntax error, though PostgreSQL parses them)."""

from __future__ import annotations

import psycopg
import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import same_answers
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration

STATEMENTS = [
    'CREATE TABLE co_ok (a text COLLATE "C", b varchar(3) COLLATE "POSIX", c text[] COLLATE pg_catalog."C", '
    'd name COLLATE "default", e bpchar(2) COLLATE ucs_basic, f text COLLATE "C.utf8")',
    "INSERT INTO co_ok (a) VALUES ('b'), ('B'), ('a'), ('_')",
    'SELECT a FROM co_ok ORDER BY a COLLATE "C"',
    'SELECT a FROM co_ok ORDER BY a COLLATE "POSIX" DESC',
    "SELECT 'a' < 'B' COLLATE \"C\", 'é' > 'z' COLLATE ucs_basic",
    "SELECT array['b', 'a'] COLLATE \"C\", 'x'::name COLLATE \"C\"",
    'CREATE TABLE co_int (a int COLLATE "C", b text)',
    'CREATE TABLE co_arr (a int[] COLLATE "C")',
    'CREATE TABLE co_nosuch (a text COLLATE "en_US")',
    'CREATE TABLE co_nosuch2 (a numeric COLLATE "nosuch")',
    'ALTER TABLE co_ok ADD COLUMN z int COLLATE "C"',
    'ALTER TABLE co_ok ADD COLUMN z text COLLATE "c"',
    "SELECT 'a' < 'B' COLLATE \"en_US\"",
    'SELECT 1 COLLATE "C"',
    "SELECT 'a' COLLATE pg_catalog.nosuch",
    "SELECT now() COLLATE \"C\"",
]


def test_collate_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("co")), STATEMENTS).close()


def test_errors_point_where_postgresql_points(proxy: ProxyServer, pg15: PgCluster) -> None:
    positions = []
    for dsn in (proxy.dsn(), pg15.dsn()):
        with psycopg.connect(dsn, autocommit=True) as c:
            for sql in ('CREATE TABLE co_pos (a int COLLATE "C")', 'CREATE TABLE co_pos (a numeric COLLATE "nosuch")'):
                with pytest.raises(psycopg.Error) as e:
                    c.execute(sql)
                positions.append((e.value.sqlstate, e.value.diag.statement_position))
    assert positions[:2] == positions[2:] == [("42804", "28"), ("42704", "32")]


@pytest.mark.parametrize(
    ("sql", "what"),
    [
        ("SELECT xmlconcat('hello', 'you')", "xmlconcat()"),
        ("SELECT xmlelement(name foo, 1)", "xmlelement()"),
        ("SELECT xmlforest(1 AS a)", "xmlforest()"),
        ("SELECT xmlparse(content 'x')", "xmlparse()"),
        ("SELECT xmlpi(name foo)", "xmlpi()"),
        ("SELECT xmlroot('<a/>', version no value)", "xmlroot()"),
        ("SELECT xmlserialize(content 'good' AS text)", "xmlserialize()"),
        ("SELECT '<a/>' IS DOCUMENT", "IS DOCUMENT"),
    ],
)
def test_the_xml_functions_are_refused_by_name(proxy: ProxyServer, pg15: PgCluster, sql: str, what: str) -> None:
    with psycopg.connect(pg15.dsn(), autocommit=True) as c:
        c.execute(sql)  # (valid SQL: PostgreSQL answers)
    with psycopg.connect(proxy.dsn(), autocommit=True) as c, pytest.raises(psycopg.Error) as e:
        c.execute(sql)
    assert (e.value.sqlstate, e.value.diag.message_primary) == ("0A000", f"{what} is not supported by walsender-proxy")
