"""Publication row filters cooked as PostgreSQL 15 cooks them: printed as its
``pg_get_expr(prqual, prrelid)`` prints them, refused where it refuses them, and refused
with 0A000 where the proxy could not evaluate them with PostgreSQL's verdict."""

from __future__ import annotations

import pytest

from decoding.catalog import Table, fill_marks
from decoding.errors import PgError
from tests.lakeutil import FAST
from walsender_proxy.lake import Lake
from walsender_proxy.sql import rowfilter_sql
from walsender_proxy.sql.pgcatalog_defs import quote_ident

COLUMNS = [
    ("id", "integer", True), ("a", "text"), ("b", "varchar(10)"), ("n", "numeric"), ("m", "numeric(10,2)"),
    ("d", "date"), ("big", "bigint"), ("f", "boolean"), ("ts", "timestamptz"), ("c", "char(3)"), ("s", "smallint"),
]  # fmt: skip


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Table:
    with Lake(tmp_path_factory.mktemp("rf") / "lake", FAST) as lake:
        with lake.begin() as tx:
            tx.create_table("t", COLUMNS, primary_key=["id"])
        with lake.begin() as tx:
            return tx.table("t")


def printed(text: str, t: Table) -> str:
    rf = rowfilter_sql.from_text(text, t)
    return fill_marks(rf.expr, {c.attnum: quote_ident(c.name) for c in t.columns})


# The expected texts are PostgreSQL 15's pg_get_expr output for the same filters over a
# table of the same columns.
@pytest.mark.parametrize(
    ("text", "pg"),
    [
        ("a = 'x'", "(a = 'x'::text)"),
        ("b = 'x'", "((b)::text = 'x'::text)"),
        ("m > 1.5", "(m > 1.5)"),
        ("big > 5", "(big > 5)"),
        ("id > 5 AND a IS NOT NULL", "((id > 5) AND (a IS NOT NULL))"),
        ("f", "f"),
        ("NOT f", "(NOT f)"),
        ("d > '2020-01-01'", "(d > '2020-01-01'::date)"),
        ("a IN ('x','y')", "(a = ANY (ARRAY['x'::text, 'y'::text]))"),
        ("id between 1 and 5", "((id >= 1) AND (id <= 5))"),
        ("a like 'x%'", "(a ~~ 'x%'::text)"),
        ("id > 5 OR (a = 'x' AND m < 3)", "((id > 5) OR ((a = 'x'::text) AND (m < (3)::numeric)))"),
        ("id = -5", "(id = '-5'::integer)"),
        ("a <> 'x' and id % 2 = 0", "((a <> 'x'::text) AND ((id % 2) = 0))"),
        ("a IS DISTINCT FROM 'y'", "(a IS DISTINCT FROM 'y'::text)"),
        ("s / 2 > id", "((s / 2) > id)"),
        ("null", "NULL::boolean"),
        ("'t'", "true"),
        ("s::bigint > 1", "((s)::bigint > 1)"),
        ("id = any('{1,2,NULL}')", "(id = ANY ('{1,2,NULL}'::integer[]))"),
        ("a <> all('{x,\"y z\"}')", "(a <> ALL ('{x,\"y z\"}'::text[]))"),
        ("s = any(array[1,2])", "(s = ANY (ARRAY[1, 2]))"),
        ("b = any('{a,b}')", "((b)::text = ANY ('{a,b}'::text[]))"),
        ("big = any('{}')", "(big = ANY ('{}'::bigint[]))"),
        ("f = any('{t}')", "(f = ANY ('{t}'::boolean[]))"),
        ("coalesce(s, 0) > 1", "(COALESCE((s)::integer, 0) > 1)"),
        ("coalesce(s, big) > 1", "(COALESCE((s)::bigint, big) > 1)"),
        ("coalesce(a, b) = 'x'", "(COALESCE(a, (b)::text) = 'x'::text)"),
        ("a || 'x' = 'yx'", "((a || 'x'::text) = 'yx'::text)"),
        ("b || a = 'yx'", "(((b)::text || a) = 'yx'::text)"),
    ],
)
def test_printed_as_pg_get_expr(table: Table, text: str, pg: str) -> None:
    assert printed(text, table) == pg


# PostgreSQL's own refusals (SQLSTATE and message as PostgreSQL 15 raises them)
@pytest.mark.parametrize(
    ("text", "sqlstate", "message"),
    [
        ("1234", "42804", "argument of PUBLICATION WHERE must be type boolean, not type integer"),
        ("id + 1", "42804", "argument of PUBLICATION WHERE must be type boolean, not type integer"),
        ("avg(id) > 1", "42803", "aggregate functions are not allowed in WHERE"),
        ("row_number() over () > 1", "42P20", "window functions are not allowed in WHERE"),
        ("zz > 1", "42703", 'column "zz" does not exist'),
        ("u.id > 1", "42P01", 'missing FROM-clause entry for table "u"'),
        ("random() > 0.5", "0A000", "invalid publication WHERE expression"),
        ("now() > '2020-01-01'", "0A000", "invalid publication WHERE expression"),
        ("id > (select 1)", "0A000", "invalid publication WHERE expression"),
        ("a::int > 1", "0A000", "invalid publication WHERE expression"),
        ("ctid > '(0,1)'", "0A000", "invalid publication WHERE expression"),
        ("id > $1", "42P02", "there is no parameter $1"),
        ("nope(a)", "42883", "function nope(text) does not exist"),
        ("coalesce(id, 'x') > 1", "22P02", 'invalid input syntax for type integer: "x"'),
        ("a || id = 'x1'", "0A000", "invalid publication WHERE expression"),
    ],
)
def test_refused_as_postgresql_refuses(table: Table, text: str, sqlstate: str, message: str) -> None:
    with pytest.raises(PgError) as ei:
        rowfilter_sql.from_text(text, table)
    assert (ei.value.sqlstate, ei.value.message) == (sqlstate, message)


# Filters PostgreSQL takes that the proxy could not evaluate with its verdict: 0A000,
# never an approximation (unconstrained numeric, collation-dependent functions, …)
@pytest.mark.parametrize(
    "text",
    ["n > 10", "upper(a) = 'X'", "coalesce(n, 0) > 1", "ts > '2020-01-01'", "c = 'ab'", "a::varchar(3) = 'x'", "s + 1 > id", "id / s > 1", "big::int > 1", "id % -1 = 0", "id / 0 = 1", "2 * 3 = id",
     "id < any('{1,2}')", "id = any(array[id, 2])", "d = any('{2020-01-01}')",
     "case when id > 1 then true end", "a collate \"C\" > 'x'"],
)  # fmt: skip
def test_refused_where_not_exact(table: Table, text: str) -> None:
    with pytest.raises(PgError) as ei:
        rowfilter_sql.from_text(text, table)
    assert ei.value.sqlstate == "0A000"
    assert "not supported by walsender-proxy" in ei.value.message


def test_cooked_filter_names_columns_by_attnum(table: Table) -> None:
    rf = rowfilter_sql.from_text("big > 5 and a = 'x'", table)
    assert rf.attnums == (table.column("big").attnum, table.column("a").attnum)  # type: ignore[union-attr]
    assert rf.columns(table) == {"big", "a"}

