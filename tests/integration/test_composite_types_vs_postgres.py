"""Composite types (CREATE TYPE … AS (…)) and the row types of tables beside PostgreSQL 15:
the DDL with its errors (names shared with relations and types, duplicate attributes,
attributes of domains, enums, other composite types and arrays of them), DROP TYPE with
its dependents (RESTRICT's 2BP01 DETAIL, CASCADE's dropped attributes), the catalog rows
psql and drivers read (``pg_type``, ``pg_class``, ``pg_attribute``, ``format_type``,
``\\d``, ``\\dT``), values (``NULL::t``, record_in of a literal with its errors and the
attributes' typmods, ``ROW(…)::t`` coerced field by field, field selection, IS NULL,
comparison and ordering) and json_populate_record(set) over one. Each statement compared
with a real PostgreSQL 15; what the proxy refuses says so (0A000)."""

from __future__ import annotations

import subprocess

import psycopg
import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import Client
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration

DDL = [
    "create type ct_a as (a int, b text)",
    "create table ct_a (x int)",
    "create view ct_a as select 1",
    "create sequence ct_a",
    "create table ct_tab (x int)",
    "create type ct_tab as (a int)",
    "create domain ct_a as int",
    "create type ct_a as enum ('a')",
    "create type ct_dup as (a int, a text)",
    "create type ct_bad as (a nosuch)",
    "create type ct_empty as ()",
    "create type ct_ser as (a serial)",
    "create domain ct_pos as int check (value > 0)",
    "create type ct_en as enum ('x', 'y')",
    "create type ct_all as (a int, b ct_a, c ct_a[], d ct_pos, e int[][], f ct_en, g ct_en[], h numeric(5,2), i varchar(3), j _int4)",
    "select oid::regtype::text, typtype, typrelid::regclass::text, typarray::regtype::text, typlen, typalign, typstorage, typcategory,"
    " typinput, typoutput, typreceive, typsend, typelem::regtype::text from pg_type where typname in ('ct_a', 'ct_all', '_ct_a', 'ct_empty')"
    " order by typname",
    "select relname, relkind, reltype::regtype::text, relnatts, relam, relfilenode, reltuples, relpages, relhasindex, relpersistence"
    " from pg_class where relname in ('ct_a', 'ct_all', 'ct_empty') order by relname",
    "select attrelid::regclass::text, attname, atttypid::regtype::text, attnum, attlen, atttypmod, attstattarget, attalign, attstorage,"
    " attcollation, attbyval, attnotnull from pg_attribute where attrelid in ('ct_a'::regclass, 'ct_all'::regclass) order by 1, 4",
    "select format_type('ct_all'::regtype, null), 'ct_a[]'::regtype::text, to_regtype('ct_a')::text, pg_typeof(null::ct_all)::text",
    "drop type ct_a",
    "drop domain ct_pos",
    "drop type ct_en",
    "drop type ct_tab",
    "drop domain ct_all",
    "drop type ct_a cascade",
    "select attname, atttypid::regtype::text from pg_attribute where attrelid = 'ct_all'::regclass order by attnum",
    "drop domain ct_pos cascade",
    "drop type ct_en cascade",
    "select attname from pg_attribute where attrelid = 'ct_all'::regclass order by attnum",
    "alter type nosuch add attribute z int",
    "alter type ct_tab add attribute z int",
    "drop type if exists nosuch",
    "drop type ct_all, ct_empty",
    "select count(*) from pg_type where typnamespace = 'public'::regnamespace",
    "create type ct_own as (a int)",
    "alter type ct_own owner to ct_role",
    "select typowner::regrole::text, (select relowner::regrole::text from pg_class where relname = 'ct_own') from pg_type where typname = 'ct_own'",
    "alter type ct_own rename to ct_own2",
    "alter type ct_own2 rename to ct_tab",
    "select typname from pg_type where typname like 'ct\\_own%'",
    "create schema ct_s",
    "create type ct_s.in1 as (a int)",
    "create type ct_out as (i ct_s.in1, j int)",
    "drop schema ct_s",
    "drop schema ct_s cascade",
    "select attname from pg_attribute where attrelid = 'ct_out'::regclass and not attisdropped",
    "set role ct_role",
    "create type ct_denied as (a int)",
    "reset role",
]

VALUES = [
    "create type cv_t as (a varchar(3), b numeric(5,2), c char(2), d timestamp(0))",
    "select '(abc,1.234,x,2020-01-01 10:00:00.7)'::cv_t",
    "select '(abcdef,1.234,x,2020-01-01 10:00:00.7)'::cv_t",
    "select row('abcdef', 1.234, 'x', '2020-01-01 10:00:00.7')::cv_t",
    "select row(1, 2)::cv_t",
    "select row(1, 2, 3, 4, 5)::cv_t",
    "select row('a', 1, 'b', null, 5)::cv_t",
    "select (row('ab', 1, 'x', null)::cv_t).b, (null::cv_t).a",
    "select (row('ab', 1, 'x', null)::cv_t).z",
    "select pg_typeof(row('ab', 1, 'x', null)::cv_t)::text",
    "select null::cv_t",
    "select '(,,,)'::cv_t, '( a , 1 ,\"x\",)'::cv_t",
    "select 'x'::cv_t",
    "select '(a,1'::cv_t",
    "select '(a,1,x,2020-01-01,5)'::cv_t",
    "select '(a,1,x,2020-01-01) x'::cv_t",
    "select '(a,1)'::cv_t",
    "select '(\"a\\\\\"\"b\",1,,)'::cv_t",
    "select '(a,zz,,)'::cv_t",
    "create type cv_pop as (a text, b int, c timestamp)",
    "create type cv_nest as (i int, r cv_pop, e text[])",
    "select '(1,\"(x,2,2020-01-01)\",\"{a,b}\")'::cv_nest",
    "select ('(1,\"(x,2,2020-01-01)\",\"{a,b}\")'::cv_nest).r.b",
    "select ('(1,\"(x,2,2020-01-01)\",\"{a,b}\")'::cv_nest).r",
    "select row(1, row('y', 3, null), array['q'])::cv_nest",
    "create table cv_tab (a int, b text)",
    "select '(1,hello world)'::cv_tab, row(2, 'q')::cv_tab, null::cv_tab",
    "select pg_typeof(null::cv_tab)::text, pg_typeof('(1,x)'::public.cv_tab)::text",
    "select ('(1,x)'::cv_tab) is null, (null::cv_tab) is null, ('(,)'::cv_tab) is null, ('(1,)'::cv_tab) is not null",
    "select row(1, null)::cv_tab = row(1, null)::cv_tab, row(1, null)::cv_tab < row(1, 'a')::cv_tab,"
    " row(null, 'a')::cv_tab <> row(1, 'a')::cv_tab",
    "select x from (values (row(1, null)::cv_tab), (row(1, 'a')::cv_tab), (row(null, 'b')::cv_tab), (null::cv_tab), (row(0, 'z')::cv_tab))"
    " v(x) order by x",
    "select x from (values (row(1, null)::cv_tab), (row(1, 'a')::cv_tab), (null::cv_tab)) v(x) order by x desc",
    "select count(x) from (values (row(1, null)::cv_tab), (null::cv_tab)) v(x)",
    "select * from json_populate_record(null::cv_pop, '{\"a\":\"blurfl\",\"x\":43.2}') q",
    "select * from json_populate_record(null::cv_pop, '{\"a\":[100,200,false],\"x\":43.2}') q",
    "select * from json_populate_recordset(null::cv_pop, '[{\"a\":\"x\",\"b\":2},{\"c\":\"2020-01-01\"}]')",
    "select * from jsonb_populate_record(null::cv_pop, '{\"a\":\"x\",\"b\":\"2\"}') q where b > 1",
    "select * from json_populate_record(null::cv_pop, '{\"b\":\"zz\"}')",
    "select * from json_populate_record(null::cv_pop, '{\"b\":\"1\"}') as q(a text, b int, c timestamp)",
    "select * from json_populate_recordset(null::cv_tab, '[{\"a\":5,\"b\":\"n\"},{\"a\":6}]')",
    "select * from json_populate_record(row('x', 3, '2012-12-31 15:30:56')::cv_pop, '{\"a\":\"blurfl\",\"x\":43.2}') q",
    "select * from json_populate_record(row('x', 3, '2012-12-31 15:30:56')::cv_pop, '{\"c\":[100,200,false],\"x\":43.2}') q",
    "select * from json_populate_record(row('x', 3, '2012-12-31 15:30:56')::cv_pop, '{\"a\":null}') q",
    # a type with an attribute of a composite type: populated when the document has no
    # value for it (the proxy refuses one it has)
    "create type cv_deep as (i int, r cv_pop, ra cv_pop[], t text)",
    "select * from json_populate_record(null::cv_deep, '{\"i\": 1, \"t\": \"x\"}')",
    "select i, r from json_populate_record(null::cv_deep, '{\"i\": 2, \"r\": null}')",
    "select * from json_populate_recordset(null::cv_deep, '[{\"i\": 1}, {\"t\": \"y\", \"ra\": null}]')",
    "select i, t from jsonb_populate_record(null::cv_deep, '{\"i\": 3, \"ra\": null}')",
    "select * from json_populate_recordset(row('def', 99, null)::cv_pop, '[{\"a\":\"blurfl\",\"x\":43.2},{\"b\":3,\"c\":\"2012-01-20 10:42:53\"}]') q",
    "select json_populate_record(null::cv_pop, '{\"a\":\"x\",\"b\":2}')",
    "select json_populate_record(row('q', 5, null)::cv_pop, '{\"a\":\"x\"}') as r, 1 as k",
    "select (json_populate_record(null::cv_pop, '{\"a\":\"x\",\"b\":2}')).b",
    "select json_populate_record(null::cv_pop, j) from (values ('{\"b\":1}'::json), ('{\"b\":2}')) v(j)",
    "select jsonb_populate_record(null::cv_pop, '{\"c\":\"2020-01-01\"}')",
    "create domain cv_nn as int not null",
    "create type cv_inn as (i cv_nn)",
    "select i from json_populate_record(null::cv_inn, '{\"x\": 43.2}') q",
    "select i from json_populate_record(null::cv_inn, '{\"i\": 12345}') q",
    "select i from json_populate_record(null::cv_inn, '{\"i\": 43.2}') q",
    "create domain cv_pos as numeric(5,1) check (value > 0)",
    "create type cv_en as enum ('red', 'green')",
    "create type cv_de as (p cv_pos, e cv_en, t text)",
    "select * from json_populate_record(null::cv_de, '{\"p\": 1.25, \"e\": \"green\", \"t\": \"x\"}')",
    "select * from json_populate_record(null::cv_de, '{\"p\": -1}')",
    "select * from json_populate_record(null::cv_de, '{\"e\": \"blue\"}')",
    "select * from jsonb_populate_recordset(null::cv_de, '[{\"p\": 2}, {\"e\": \"red\"}]')",
    "select pg_typeof(p)::text, pg_typeof(e)::text from json_populate_record(null::cv_de, '{}')",
    "select * from json_populate_record(row(5, 'green', 'z')::cv_de, '{\"t\": \"y\"}')",
    "select (json_populate_record(row(5, 'green', 'z')::cv_de, '{\"t\": \"y\"}')).*",
    "select (row(1.5, 'red', 'b')::cv_de).*, 7 as k",
    "select (x).* from (values (row(1, 'a')::cv_tab), (null::cv_tab)) v(x)",
    "select (('(1,\"(x,2,2020-01-01)\",\"{a,b}\")'::cv_nest).r).*",
    # record's comparison with an anonymous ROW(…) or a quoted literal: PostgreSQL's
    # errors as each row is compared (none without a row), never an answer
    "create table cv_rows (q1 int8, q2 text)",
    "select * from cv_rows t where t = row(1, 'x')",
    "insert into cv_rows values (1, 'x'), (2, 'y')",
    "select * from cv_rows t where t = row(1::int8, 'x'::text)",
    "select * from cv_rows t where t = row(1, 'x')",
    "select * from cv_rows t where t in (row(1::int8, 'x'::text), row(2, 'y'::text))",
    "select * from cv_rows t where row(1::int8, 'x') = t",
    "select * from cv_rows t where t <> row(1::int8, 'x'::text, 3)",
    "select * from cv_rows t where t is distinct from row(1::int8, null)",
    "select * from cv_rows t where t = '(1,x)'",
    "select * from cv_rows t where t in (row(1::int8, 'x'::text), '(2,y)')",
    "select row(1, 'a')::cv_tab = '(1,a)'",
    "select * from cv_rows t where t = '(1,x)'::cv_rows",
    # (record_eq compares type OIDs: a type modifier makes no difference)
    "create table cv_mods (a varchar(5), n numeric(10,2))",
    "insert into cv_mods values ('x', 1.5)",
    "select * from cv_mods t where t = row('x'::varchar(3), 1.5::numeric(4,1))",
    "select * from cv_mods t where t = row('x'::text, 1.5::numeric)",
]


def _compare(proxy: ProxyServer, pg15: PgCluster, statements: list[str]) -> None:
    """Statement by statement; the type OIDs of result columns of user types masked (they
    are each server's own)."""
    ref, got = Client(pg15.dsn(dbname=pg15.new_database("ctypes"))), Client(proxy.dsn())
    for c in (ref, got):
        c("create role ct_role")  # (an error where it exists is recorded, not raised)
    try:
        for sql in statements:
            a, b = got(sql), ref(sql)
            if a[0] == b[0] == "rows":
                a = (a[0], [(n, min(t, 16384)) for n, t in a[1]], *a[2:])  # type: ignore[union-attr]
                b = (b[0], [(n, min(t, 16384)) for n, t in b[1]], *b[2:])  # type: ignore[union-attr]
            assert repr(a) == repr(b), sql
    finally:
        ref.close()
        got.close()


#: A whole-row reference as text: record_out's quoting (empty, quotes, backslashes,
#: parentheses, commas, white space), each column by its output function, NULL columns
#: empty; through a cast, md5(), concat(), format() and ||. (The session's TimeZone is UTC.)
WHOLE_ROW_TEXT = [
    "create table wrt (a int, b text, c bool, d numeric, n numeric(6,3), e timestamptz, f float8, r real, g text[], h text, j jsonb, i interval, u uuid, bt bytea)",
    "insert into wrt values (1, 'x y', true, 1.50, 2.5, '2020-01-01 00:00:00+00', 0.1, 1e20, '{a,\"b c\"}', '', '{\"k\": [1, 2]}', '1 day 02:00', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\x00ff')",
    "insert into wrt values (2, null, false, null, null, null, null, null, null, 'q\"\\(', null, null, null, null)",
    "insert into wrt values (3, 'tab\there', null, -0.000, 0, 'infinity', 'NaN', '-Infinity', '{}', 'a,b', 'null', '-3 months', null, '')",
    "select wrt::text from wrt order by a",
    "select a, md5(wrt::text) from wrt order by a",
    "select concat(wrt), format('%s|%s', a, wrt), wrt::text || '!', wrt || '?' from wrt order by a",
    "select cast(wrt as varchar) from wrt where a = 3",
    "select (select w::text from wrt w where w.a = o.a) from wrt o order by 1",
    "drop table wrt",
]


@pytest.mark.parametrize("statements", [DDL, VALUES, WHOLE_ROW_TEXT], ids=["ddl-and-catalog", "values", "whole-row-text"])
def test_answers_as_postgres(proxy: ProxyServer, pg15: PgCluster, statements: list[str]) -> None:
    _compare(proxy, pg15, statements)


def test_a_composite_value_is_described_as_its_type(proxy: ProxyServer) -> None:
    """RowDescription names the composite type by its OID (what drivers look up)."""
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("create type cd_t as (a int, b text)")
        oid = c.execute("select 'cd_t'::regtype::oid").fetchone()[0]  # type: ignore[index]
        cur = c.execute("select row(1, 'x')::cd_t as v")
        assert cur.description is not None and cur.description[0].type_code == oid
        assert cur.fetchone() == ("(1,x)",)


PSQL_SCRIPT = r"""
create schema cps;
create type cps_in as (x int, y text);
create type cps.outside as (p numeric(4,1), q cps_in, r cps_in[]);
\d cps.outside
\d+ cps_in
\dT cps*
\dT+ cps.*
"""


def test_psql_describes_composite_types_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    outs = [
        subprocess.run([str(pg15.bindir / "psql"), "-X", "-d", dsn], input=PSQL_SCRIPT, capture_output=True, text=True, timeout=60)
        for dsn in (proxy.dsn(), pg15.dsn(dbname=pg15.new_database("cps")))
    ]
    assert (outs[0].stdout, outs[0].stderr) == (outs[1].stdout, outs[1].stderr)
    assert 'Composite type "cps.outside"' in outs[0].stdout and "ERROR" not in outs[0].stderr


@pytest.mark.parametrize(
    "sql",
    [
        "create table cr_x (a cr_t)",
        "create table cr_x (a cr_t[])",
        "alter table cr_tab add column c cr_t",
        "create domain cr_d as cr_t",
        "create type cr_x as (a cr_tab)",
        "create type cr_x as (a text collate \"C\")",
        "alter type cr_t add attribute z int",
        "alter type cr_t rename attribute a to z",
        "alter type cr_t set schema public",
        "select (row(1, 'x')::cr_t)::text",
        "select row(1, 'x')::cr_t || 'a'",
        "select max(row(1, 'x')::cr_t)",
        "select to_json(row(1, 'x')::cr_t)",
        "select array[row(1, 'x')]::cr_t[]",
        "select json_populate_recordset(null::cr_t, '[]')",
        "select * from json_populate_record(null::cr_e, '{\"a\": [\"x\"]}')",
    ],
)
def test_what_composite_types_refuse_names_it(proxy: ProxyServer, sql: str) -> None:
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("create type cr_t as (a int, b text)") if c.execute("select to_regtype('cr_t')").fetchone() == (None,) else None
        if c.execute("select to_regtype('cr_e')").fetchone() == (None,):
            c.execute("create type cr_en as enum ('x')")
            c.execute("create type cr_e as (a cr_en[])")
        c.execute("create table if not exists cr_tab (a int)")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="not supported by walsender-proxy"):
            c.execute(sql)


def test_binary_rows_are_record_send_as_postgres(proxy: ProxyServer, pg15: PgCluster) -> None:
    """A composite value asked for in binary is record_send's bytes (field OIDs, lengths,
    each field's binary form), as PostgreSQL 15 sends them."""
    ddl = "create type cb_t as (a int, b text, c numeric(5,2), d varchar(3)[], e timestamp)"
    sql = "select row(1, 'x', 1.5, array['ab', null], '2020-01-02 03:04:05')::cb_t, null::cb_t, row(null, null, null, null, null)::cb_t"
    got = []
    for dsn in (proxy.dsn(), pg15.dsn(dbname=pg15.new_database("cbin"))):
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(ddl)
            cur = c.cursor(binary=True)
            cur.execute(sql)
            got.append(cur.fetchall())
    assert got[0] == got[1]


def test_asyncpg_reads_composite_values_as_from_postgres(proxy: ProxyServer, pg15: PgCluster) -> None:
    """asyncpg introspects the type (pg_type, pg_attribute) and decodes record_send."""
    import asyncio

    import asyncpg

    async def read(dsn: str) -> list[object]:
        c = await asyncpg.connect(**{k: v for k, v in (kv.split("=", 1) for kv in dsn.split()) if k in ("host", "port", "user")}, database=dict(kv.split("=", 1) for kv in dsn.split())["dbname"])
        try:
            await c.execute("create type ca_t as (a int, b text, c numeric(5,2), d int[])")
            rows = await c.fetch("select row(1, 'x', 1.5, array[1, null])::ca_t as v, null::ca_t as n")
            rows += await c.fetch("select * from json_populate_record(null::ca_t, $1::json)", '{"a": 3, "d": [4]}')
            return [tuple(r.items()) for r in rows]
        finally:
            await c.close()

    assert asyncio.run(read(proxy.dsn())) == asyncio.run(read(pg15.dsn(dbname=pg15.new_database("capg"))))
