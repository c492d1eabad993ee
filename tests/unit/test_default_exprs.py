"""Column defaults cooked and printed as PostgreSQL 15 does (the texts below are what
``pg_get_expr(adbin, adrelid[, true])`` printed on PostgreSQL 15.18 for each form; the
integration test compares them live), and kept in the catalog across its JSON form."""

from __future__ import annotations

import pytest
from pglast import parse_sql

from decoding.catalog import Column, ColumnDefault, Table
from decoding.errors import PgError
from decoding.pgtypes import parse_type
from walsender_proxy.sql.default_exprs import cook


def cooked(typ: str, expr: str) -> tuple[str, str] | None:
    node = parse_sql(f"SELECT {expr}")[0].stmt.targetList[0].val
    c = cook(node, parse_type(typ), "c")
    if c is None:
        return None
    d = c.column_default()
    return d.expr, d.pretty


@pytest.mark.parametrize(
    ("typ", "expr", "plain", "pretty"),
    [
        ("int", "5", "5", "5"),
        ("int", "-5", "'-5'::integer", "'-5'::integer"),
        ("bigint", "3000000000", "'3000000000'::bigint", "'3000000000'::bigint"),
        ("int", "1.5", "1.5", "1.5"),
        ("numeric(10,2)", "'1'", "'1'::numeric", "'1'::numeric"),
        ("varchar(3)", "'abcdef'", "'abcdef'::character varying", "'abcdef'::character varying"),
        ("timestamptz", "current_timestamp", "CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP"),
        ("timestamp(0)", "current_timestamp(2)", "CURRENT_TIMESTAMP(2)", "CURRENT_TIMESTAMP(2)"),
        ("int", "1+2*3", "(1 + (2 * 3))", "1 + 2 * 3"),
        ("int", "(1+2)*3", "((1 + 2) * 3)", "(1 + 2) * 3"),
        ("int", "10-(2-3)", "(10 - (2 - 3))", "10 - (2 - 3)"),
        ("bigint", "1+2", "(1 + 2)", "(1 + 2)"),
        ("varchar(10)", "'a'||'b'", "('a'::text || 'b'::text)", "(('a'::text || 'b'::text))"),
        ("numeric", "1 + 1.5", "((1)::numeric + 1.5)", "1::numeric + 1.5"),
        ("real", "1.5::float4 + 1", "((1.5)::real + (1)::double precision)", "(1.5::real + 1::double precision)"),
        ("text", "'a'::varchar || 'b'", "(('a'::character varying)::text || 'b'::text)", "'a'::character varying::text || 'b'::text"),
        ("timestamptz", "now() + interval '1 day'", "(now() + '1 day'::interval)", "now() + '1 day'::interval"),
        ("bigint", "5::bigint", "(5)::bigint", "5::bigint"),
        ("varchar(10)", "'abc'::varchar(3)", "'abc'::character varying(3)", "'abc'::character varying(3)"),
        ("jsonb", "'{\"b\":1,\"a\":2}'", "'{\"a\": 2, \"b\": 1}'::jsonb", "'{\"a\": 2, \"b\": 1}'::jsonb"),
        ("timestamptz", "'2020-01-01 10:00+02'", "'2020-01-01 08:00:00+00'::timestamp with time zone", "'2020-01-01 08:00:00+00'::timestamp with time zone"),
        ("text", "'it''s'", "'it''s'::text", "'it''s'::text"),
    ],
)
def test_printed_as_postgresql_prints_it(typ: str, expr: str, plain: str, pretty: str) -> None:
    assert cooked(typ, expr) == (plain, pretty)


def test_a_null_constant_is_no_default() -> None:
    assert cooked("int", "NULL") is None
    assert cooked("int", "NULL::int") is None
    assert cooked("text", "NULL::text") is None


@pytest.mark.parametrize(
    ("typ", "expr", "sqlstate", "message"),
    [
        ("int", "'abc'", "22P02", 'invalid input syntax for type integer: "abc"'),
        ("int", "now()", "42804", 'column "c" is of type integer but default expression is of type timestamp with time zone'),
        ("int", "c", "0A000", "cannot use column reference in DEFAULT expression"),
        ("int", "(SELECT 1)", "0A000", "cannot use subquery in DEFAULT expression"),
        ("int", "nope()", "42883", "function nope() does not exist"),
        ("int", "'1' + '2'", "42725", "operator is not unique: unknown + unknown"),
        ("int", "abs(1)", "0A000", "DEFAULT expression calling abs() is not supported by walsender-proxy"),
    ],
)
def test_errors_as_postgresql_or_refused(typ: str, expr: str, sqlstate: str, message: str) -> None:
    with pytest.raises(PgError) as e:
        cooked(typ, expr)
    assert (e.value.sqlstate, str(e.value)) == (sqlstate, message)


def test_volatility_decides_per_row_evaluation() -> None:
    def volatile(expr: str, typ: str = "float8") -> bool:
        c = cook(parse_sql(f"SELECT {expr}")[0].stmt.targetList[0].val, parse_type(typ), "c")
        assert c is not None
        return c.volatile

    assert volatile("random()") and volatile("random() + 1")
    assert volatile("gen_random_uuid()", "uuid") and volatile("clock_timestamp()", "timestamptz")
    assert not volatile("now()", "timestamptz") and not volatile("1.5")


def test_defaults_keep_through_the_catalogs_json() -> None:
    d = ColumnDefault("(1 + 2)", "1 + 2", False, 16400, False)
    t = Table(16384, "public", "t", (Column(1, "a", parse_type("int4"), False, "a", d, True), Column(2, "b", parse_type("text"), physical="b")))
    back = Table.from_json(t.to_json())
    assert back == t
    assert "default" not in t.to_json()["columns"][1]  # (a column without one stays as it was written)
