"""The pg_catalog emulation and the PostgreSQL → DuckDB rewriter, without a PostgreSQL.

Exact agreement with PostgreSQL 15 is checked in
tests/integration/test_pgcatalog_vs_postgres.py; these tests pin the mechanisms: name
resolution, column naming, type hints, side effects (set_config, server values), error
SQLSTATEs and positions, registration cost, and the catalog contents derived from a lake
catalog.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from decoding.catalog import Catalog, Column, Publication, PublicationTable, Table
from decoding.errors import PgError
from decoding.pgtypes import parse_type
from walsender_proxy.backend.settings import show_value
from walsender_proxy.sql import literals, pgcatalog, pgcatalog_defs, rowfilter_sql
from walsender_proxy.sql.pgcatalog import (
    CatalogBinding,
    CatalogSnapshot,
    ServerInfo,
    SessionInfo,
    format_type,
    make_table,
    quote_ident,
    split_search_path,
    synthetic_oid,
    translate_error,
)
from walsender_proxy.sql.rewrite import (
    NotAQueryError,
    ServerFunctionError,
    SqlError,
    figure_colname,
    parse_array_literal,
    rewrite,
    statements,
)


def _table(oid: int, schema: str, name: str, cols: list[tuple[str, str, bool]], **kw: Any) -> Table:
    columns = tuple(
        Column(i, n, parse_type(t), nn, n) for i, (n, t, nn) in enumerate(cols, start=1)
    )
    return Table(oid, schema, name, columns, next_attnum=kw.pop("next_attnum", len(cols) + 1), **kw)


def make_catalog() -> Catalog:
    t_pk = _table(
        16390,
        "public",
        "t_pk",
        [("id", "integer", True), ("v", "varchar(20)", False), ("n", "numeric(12,2)", False)],
        primary_key=("id",),
    )
    t_f = _table(
        16391,
        "public",
        "t_filtered",
        [("id", "integer", True), ("region", "text", False), ("amount", "numeric(12,2)", False)],
        primary_key=("id",),
    )
    t_ri = _table(
        16392,
        "s1",
        "t_ri",
        [("a", "bigint", True), ("b", "text", True), ("c", "date", False)],
        replica_identity="i",
        identity_index=("a", "b"),
    )
    # column 2 was dropped
    t_gap = _table(16393, "public", "t_gap", [("id", "integer", False)], next_attnum=4)
    t_gap = Table(
        t_gap.oid,
        t_gap.schema,
        t_gap.name,
        (
            Column(1, "id", parse_type("integer"), False, "id"),
            Column(3, "kept", parse_type("text"), False, "kept"),
        ),
        next_attnum=4,
    )
    pubs = {
        "pub_cols": Publication(
            16400,
            "pub_cols",
            tables=(
                PublicationTable(16391, ("id", "amount"), rowfilter_sql.from_text("region = 'eu' AND amount > 10", t_f)),
                PublicationTable(16390),
            ),
        ),
        "pub_schema": Publication(16401, "pub_schema", schemas=("s1",), delete=False),
        "pub_all": Publication(16402, "pub_all", all_tables=True),
    }
    return Catalog(
        MappingProxyType({"public": 2200, "s1": 16389}),
        MappingProxyType({t.oid: t for t in (t_pk, t_f, t_ri, t_gap)}),
        MappingProxyType(pubs),
        16403,
    )


CATALOG = make_catalog()
SERVER = ServerInfo()
SESSION = SessionInfo(user="postgres", database="postgres", application_name="test", backend_pid=77)


class Session:
    def __init__(self, session: SessionInfo = SESSION) -> None:
        self.con = duckdb.connect()
        literals.install(self.con)  # (the UDFs rewritten SQL calls: SIMILAR TO's, casts')
        self.snapshot = CatalogSnapshot.build(CATALOG, SERVER)
        self.binding = CatalogBinding(self.con)
        self.session = session

    def query(
        self, sql: str, params: list[Any] | None = None, **ensure: Any
    ) -> list[tuple[Any, ...]]:
        rw = rewrite(sql, resolve_user_table=_resolve)
        self.binding.ensure(rw.needs, self.snapshot, self.session, **ensure)
        return self.con.execute(rw.sql, params).fetchall()

    def one(self, sql: str, **ensure: Any) -> Any:
        rows = self.query(sql, **ensure)
        assert len(rows) == 1 and len(rows[0]) == 1, rows
        return rows[0][0]


def _resolve(schema: str | None, name: str) -> str | None:
    tables = {
        ("public", "t_filtered"): "SELECT * FROM (VALUES (1, 'eu', 5.0), (2, 'us', 20.0), "
        "(3, 'eu', 30.0)) AS v(id, region, amount)",
        ("public", "t_pk"): "SELECT 1 AS id, 'x' AS v, 1.5 AS n",
    }
    return tables.get((schema or "public", name))


@pytest.fixture
def s() -> Iterator[Session]:
    sess = Session()
    yield sess
    sess.con.close()


# -- rewriting --------------------------------------------------------------------------------


def test_catalog_names_resolve_to_registered_tables() -> None:
    rw = rewrite(
        "SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace",
        resolve_user_table=_resolve,
    )
    assert "pgc_pg_class AS c" in rw.sql and "pgc_pg_namespace AS n" in rw.sql
    assert rw.needs == {"pgc_pg_class", "pgc_pg_namespace"}
    assert rw.columns is not None and [(c.name, c.type_oid) for c in rw.columns] == [
        ("relname", 19)
    ]


def test_unaliased_catalog_keeps_its_name_as_alias(s: Session) -> None:
    assert s.one("SELECT pg_class.relname FROM pg_class WHERE pg_class.oid = 16390") == "t_pk"
    assert (
        s.one("SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class WHERE oid = 16390")
        == "t_pk"
    )


def test_information_schema(s: Session) -> None:
    rows = s.query("SELECT table_schema, table_name FROM information_schema.tables ORDER BY 1, 2")
    assert rows == [
        ("public", "t_filtered"),
        ("public", "t_gap"),
        ("public", "t_pk"),
        ("s1", "t_ri"),
    ]


def test_user_tables_become_subqueries(s: Session) -> None:
    rw = rewrite(
        "SELECT f.id FROM public.t_filtered f WHERE f.region = $1 ORDER BY 1",
        resolve_user_table=_resolve,
    )
    assert rw.user_tables == (("public", "t_filtered"),) and rw.param_count == 1
    assert "(SELECT * FROM (VALUES" in rw.sql
    assert s.con.execute(rw.sql, ["eu"]).fetchall() == [(1,), (3,)]


def test_unknown_relation_is_42P01_with_position() -> None:
    with pytest.raises(SqlError) as e:
        rewrite("SELECT * FROM nope", resolve_user_table=_resolve)
    assert (e.value.sqlstate, e.value.message, e.value.position) == (
        "42P01",
        'relation "nope" does not exist',
        15,
    )
    with pytest.raises(SqlError) as e:
        rewrite("SELECT 1 FROM pg_catalog.pg_nope", resolve_user_table=_resolve)
    assert e.value.message == 'relation "pg_catalog.pg_nope" does not exist'


def test_syntax_error_has_postgres_message_and_position() -> None:
    with pytest.raises(SqlError) as e:
        rewrite("SELECT FROM WHERE", resolve_user_table=_resolve)
    assert (e.value.sqlstate, e.value.message, e.value.position) == (
        "42601",
        'syntax error at or near "WHERE"',
        13,
    )
    with pytest.raises(SqlError, match="multiple commands"):
        rewrite("SELECT 1; SELECT 2", resolve_user_table=_resolve)


def test_unknown_function_is_42883() -> None:
    with pytest.raises(SqlError) as e:
        rewrite("SELECT 1, nope(1, 'a')", resolve_user_table=_resolve)
    assert e.value.sqlstate == "42883"
    assert e.value.message == "function nope(integer, unknown) does not exist"
    assert e.value.position == 11 and e.value.hint
    # DuckDB's own pg_* compatibility functions are never used
    with pytest.raises(SqlError):
        rewrite("SELECT pg_nope()", resolve_user_table=_resolve)


def test_server_only_functions_are_reported() -> None:
    with pytest.raises(ServerFunctionError) as e:
        rewrite(
            "SELECT pg_copy_logical_replication_slot('s', 't')",
            resolve_user_table=_resolve,
        )
    assert e.value.sqlstate == "0A000" and e.value.function == "pg_copy_logical_replication_slot"


def test_only_queries_are_rewritten() -> None:
    with pytest.raises(NotAQueryError):
        rewrite("INSERT INTO t VALUES (1)", resolve_user_table=_resolve)


def test_set_config_reports_its_side_effect(s: Session) -> None:
    sql = "SELECT pg_catalog.set_config('search_path', '', false);"
    rw = rewrite(sql, resolve_user_table=_resolve)
    assert rw.set_configs == (("search_path", "", False),)
    assert rw.columns is not None and (rw.columns[0].name, rw.columns[0].type_oid) == (
        "set_config",
        25,
    )
    assert s.query(sql) == [("",)]


def test_column_names_follow_postgres() -> None:
    rw = rewrite(
        "SELECT 1, 'a'::text, 1::int, CASE WHEN true THEN 1 END, CASE WHEN true THEN 1 ELSE "
        "c.relnatts END, ARRAY[1], COALESCE(1, 2), EXISTS (SELECT 1), (SELECT relname FROM "
        "pg_class LIMIT 1), c.oid::regclass, count(*), NULLIF(1, 2), current_user, "
        "c.relname AS x, GREATEST(1, 2) FROM pg_class c GROUP BY c.relname, c.oid, c.relnatts",
        resolve_user_table=_resolve,
    )
    assert rw.columns is not None
    assert [c.name for c in rw.columns] == [
        "?column?",
        "text",
        "int4",
        "case",
        "relnatts",
        "array",
        "coalesce",
        "exists",
        "relname",
        "oid",
        "count",
        "nullif",
        "current_user",
        "x",
        "greatest",
    ]


def test_type_hints(s: Session) -> None:
    rw = rewrite(
        "SELECT c.oid, c.relkind, c.relname, c.relnatts, c.oid::regclass, 1, 'x', NULL, "
        "attrs FROM pg_class c, pg_get_publication_tables('pub_all') g WHERE g.relid = c.oid",
        resolve_user_table=_resolve,
    )
    assert rw.columns is not None
    assert [c.type_oid for c in rw.columns] == [26, 18, 19, 21, 2205, 23, 25, 25, 22]


def test_figure_colname_is_used_for_subquery_columns(s: Session) -> None:
    rows = s.query(
        "SELECT x.format_type FROM (SELECT format_type(23, -1)) x UNION ALL "
        "SELECT q.case FROM (SELECT CASE WHEN true THEN 'a' END) q"
    )
    assert rows == [("integer",), ("a",)]


def test_values_columns_are_named_like_postgres() -> None:
    rw = rewrite("VALUES (1, 'a'), (2, 'b')", resolve_user_table=_resolve)
    assert rw.columns is not None and [c.name for c in rw.columns] == ["column1", "column2"]
    con = duckdb.connect()
    assert con.execute(rw.sql).fetchall() == [(1, "a"), (2, "b")]
    rw = rewrite("SELECT * FROM (VALUES (1)) v", resolve_user_table=_resolve)
    assert con.execute(rw.sql).description[0][0] == "column1"


def test_copy_query_is_rewritten(s: Session) -> None:
    rw = rewrite(
        "COPY (SELECT id, region, amount FROM ONLY public.t_filtered WHERE (region = 'eu'::text)) "
        "TO STDOUT",
        resolve_user_table=_resolve,
    )
    assert rw.copy is not None and rw.copy.format == "text"
    assert sorted(s.con.execute(rw.sql).fetchall()) == [(1, "eu", 5.0), (3, "eu", 30.0)]
    rw = rewrite(
        "COPY public.t_pk (id, v) TO STDOUT WITH (FORMAT csv, HEADER true)",
        resolve_user_table=_resolve,
    )
    assert rw.copy is not None and rw.copy.format == "csv" and rw.copy.options == {"header": "true"}
    assert s.con.execute(rw.sql).fetchall() == [(1, "x")]


def test_postgres_only_syntax(s: Session) -> None:
    assert (
        s.one(
            "SELECT count(*) FROM pg_catalog.pg_class c WHERE c.relname OPERATOR(pg_catalog.~) "
            "'^(t_pk)$' COLLATE pg_catalog.default"
        )
        == 1
    )
    assert s.one("SELECT E'a\\tb'") == "a\tb"
    assert s.one("SELECT 2 = ANY('{1,2}'::int[])") is True
    assert s.one("SELECT 2 = ANY('{1,3}')") is False
    assert s.one("SELECT 'x' = ANY(ARRAY['x', 'y'])") is True
    assert s.one("SELECT 3 <> ALL(ARRAY[1, 2])") is True
    assert s.one("SELECT 7 / 2") == 3  # integer division, as PostgreSQL
    assert s.one("SELECT relname FROM pg_class WHERE oid = 16390 FOR UPDATE") == "t_pk"
    assert s.one("SELECT '{a,\"b c\",NULL}'::text[]") == ["a", "b c", None]
    assert s.one("SELECT NULL::text[] || ARRAY['a']") == ["a"]
    assert s.one("SELECT array_to_string(ARRAY[1, 2], ',')") == "1,2"
    assert s.one("SELECT pg_catalog.array_upper(ARRAY[1, 2, 3], 1)") == 3
    assert s.query(
        "SELECT 'abc' SIMILAR TO 'a%', 'a.c' SIMILAR TO 'a_c', 'abc' NOT SIMILAR TO "
        "'(a|x)bc', 'abc' SIMILAR TO 'a.c'"
    ) == [(True, True, False, False)]
    assert s.one("SELECT trim(both 'x' from 'xaxx') || substring('abcd' from 2 for 2)") == "abc"
    # (numeric held as its text: EXTRACT(year FROM date 'infinity') is Infinity)
    assert s.one("SELECT extract(year from DATE '2024-05-01')") == "2024"


def test_int2vector_is_zero_based_and_prints_like_postgres(s: Session) -> None:
    rows = s.query(
        "SELECT pr.prattrs, pr.prattrs[0], array_upper(pr.prattrs::int2[], 1), "
        "array_lower(pr.prattrs::int2[], 1) FROM pg_publication_rel pr WHERE pr.prattrs IS NOT NULL"
    )
    assert rows == [("1 3", 1, 1, 0)]
    assert s.one("SELECT indkey FROM pg_index WHERE indrelid = 16392") == "1 2"


def test_regclass_in_and_out(s: Session) -> None:
    assert s.one("SELECT 'public.t_pk'::regclass::oid") == 16390
    assert s.one("SELECT 't_pk'::regclass") == "t_pk"
    assert s.one("SELECT 16392::regclass") == "s1.t_ri"
    assert s.one("SELECT '16390'::regclass::oid") == 16390
    assert s.one("SELECT to_regclass('nope')") is None
    assert s.one("SELECT 'pg_catalog.pg_class'::regclass::oid") == 1259
    with pytest.raises(duckdb.Error) as e:
        s.query("SELECT 'nope'::regclass")
    err = translate_error(e.value)
    assert (err.sqlstate, err.message) == ("42P01", 'relation "nope" does not exist')


def test_regtype_and_typeinfo_lookup(s: Session) -> None:
    sql = (
        "SELECT typname AS name, oid, typarray AS array_oid, oid::regtype::text AS regtype, "
        "typdelim AS delimiter FROM pg_type t WHERE t.oid = to_regtype($1) ORDER BY t.oid"
    )
    assert s.query(sql, ["character varying"]) == [
        ("varchar", 1043, 1015, "character varying", ",")
    ]
    assert s.query(sql, ["int4[]"]) == [("_int4", 1007, 0, "integer[]", ",")]
    assert s.query(sql, ["hstore"]) == []
    assert s.query(sql, ["t_pk"])[0][3] == "t_pk"
    assert s.one("SELECT pg_typeof(1)") == "integer"


def test_search_path_and_session_functions() -> None:
    sess = Session(SessionInfo(user="postgres", settings={"search_path": ""}, backend_pid=5))
    assert sess.one("SELECT current_schema()") is None
    assert sess.one("SELECT current_schemas(true)") == ["pg_catalog"]
    assert sess.one("SELECT 16390::regclass") == "public.t_pk"
    assert sess.one("SELECT pg_table_is_visible(16390)") is False
    assert sess.one("SELECT pg_backend_pid()") == 5
    assert sess.one("SELECT current_setting('search_path')") == ""
    default = Session()
    assert default.one("SELECT current_schemas(false)") == ["public"]
    assert default.one("SELECT current_user") == "postgres"
    assert default.one("SELECT current_setting('server_version')") == "15.18"
    assert default.one("SELECT current_setting('shared_buffers')") == "128MB"
    assert default.one("SELECT current_setting('nope', true)") is None
    with pytest.raises(duckdb.Error) as e:
        default.query("SELECT current_setting('nope')")
    assert translate_error(e.value).sqlstate == "42704"


def test_server_values_table(s: Session) -> None:
    rw = rewrite("SELECT txid_current(), pg_current_wal_lsn()", resolve_user_table=_resolve)
    assert rw.server_values == {"txid_current", "pg_current_wal_lsn"}
    assert rw.columns is not None and [c.type_oid for c in rw.columns] == [20, 3220]
    s.binding.ensure(
        rw.needs,
        s.snapshot,
        SESSION,
        server_values={"txid_current": 742, "pg_current_wal_lsn": "0/19A6D98"},
    )
    assert s.con.execute(rw.sql).fetchall() == [(742, "0/19A6D98")]


def test_server_udfs_get_leading_arguments() -> None:
    rw = rewrite(
        "SELECT txid_current(), pg_logical_emit_message(true, 'p', 'x')",
        resolve_user_table=_resolve,
        server_udfs={"txid_current": "wpx_txid_current", "pg_logical_emit_message": "wpx_emit"},
        udf_args=(4242,),
    )
    assert "wpx_txid_current(4242)" in rw.sql and "wpx_emit(4242, TRUE, 'p', 'x')" in rw.sql
    again = rewrite(
        "SELECT txid_current()",
        resolve_user_table=_resolve,
        server_udfs={"txid_current": "wpx_txid_current"},
        udf_args=(1,),
    )
    assert "wpx_txid_current(1)" in again.sql


def test_catalog_statements_are_cached() -> None:
    sql = "SELECT relname FROM pg_class WHERE relkind = 'r' /* cache */"
    assert rewrite(sql, resolve_user_table=_resolve) is rewrite(sql, resolve_user_table=_resolve)
    user = "SELECT id FROM t_pk"
    assert rewrite(user, resolve_user_table=_resolve) is not rewrite(
        user, resolve_user_table=_resolve
    )


def test_statements_splits_like_postgres() -> None:
    assert statements("SELECT 1; SELECT $$a;b$$ ;") == ["SELECT 1", "SELECT $$a;b$$"]


# -- the catalog ------------------------------------------------------------------------------


def test_snapshot_is_cached_per_catalog_version() -> None:
    a = CatalogSnapshot.build(CATALOG, SERVER)
    assert CatalogSnapshot.build(CATALOG, SERVER) is a
    other = make_catalog()
    assert CatalogSnapshot.build(other, SERVER) is not a


def test_subscriber_view_of_publications(s: Session) -> None:
    rows = s.query(
        "SELECT DISTINCT t.schemaname, t.tablename, t.attnames FROM "
        "pg_catalog.pg_publication_tables t WHERE t.pubname IN ('pub_cols', 'pub_schema') "
        "ORDER BY 1, 2, 3"
    )
    assert rows == [
        ("public", "t_filtered", ["id", "amount"]),
        ("public", "t_pk", ["id", "v", "n"]),
        ("s1", "t_ri", ["a", "b", "c"]),
    ]
    quals = s.query(
        "SELECT DISTINCT pg_get_expr(gpt.qual, gpt.relid) FROM pg_publication p, "
        "LATERAL pg_get_publication_tables(p.pubname) gpt WHERE gpt.relid = 16391 "
        "AND p.pubname IN ('pub_cols')"
    )
    assert quals == [("((region = 'eu'::text) AND (amount > (10)::numeric))",)]
    cols = s.query(
        "SELECT DISTINCT (CASE WHEN (array_length(gpt.attrs, 1) = c.relnatts) THEN NULL "
        "ELSE gpt.attrs END) FROM pg_publication p, LATERAL pg_get_publication_tables(p.pubname) "
        "gpt, pg_class c WHERE gpt.relid = 16391 AND c.oid = gpt.relid AND p.pubname IN ('pub_cols')"
    )
    assert cols == [("1 3",)]


def test_replica_identity_and_dropped_columns(s: Session) -> None:
    rows = s.query(
        "SELECT a.attnum, a.attname, a.atttypid, a.attnum = ANY(i.indkey) FROM "
        "pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_index i ON (i.indexrelid = "
        "pg_get_replica_identity_index(16392)) WHERE a.attnum > 0::pg_catalog.int2 AND NOT "
        "a.attisdropped AND a.attgenerated = '' AND a.attrelid = 16392 ORDER BY a.attnum"
    )
    assert rows == [(1, "a", 20, True), (2, "b", 25, True), (3, "c", 1082, False)]
    assert s.one("SELECT relnatts FROM pg_class WHERE oid = 16393") == 3
    assert s.query(
        "SELECT attnum, attisdropped FROM pg_attribute WHERE attrelid = 16393 AND attnum > 0 "
        "ORDER BY attnum"
    ) == [(1, False), (2, True), (3, False)]
    idx = synthetic_oid(16392, pgcatalog_defs.IDENTITY_INDEX)
    assert s.query(f"SELECT relname, pg_get_indexdef(oid) FROM pg_class WHERE oid = {idx}") == [
        ("t_ri_a_b_idx", "CREATE UNIQUE INDEX t_ri_a_b_idx ON s1.t_ri USING btree (a, b)")
    ]


def test_injected_server_rows(s: Session) -> None:
    slots = make_table(
        "pg_replication_slots",
        [{"slot_name": "sub", "plugin": "pgoutput", "slot_type": "logical", "active": True}],
    )
    rows = s.query(
        "SELECT slot_name, plugin, active FROM pg_replication_slots",
        injected={"pg_replication_slots": slots},
    )
    assert rows == [("sub", "pgoutput", True)]
    assert s.query("SELECT slot_name FROM pg_replication_slots") == []
    assert s.query("SELECT pid, usename, application_name FROM pg_stat_activity") == [
        (77, "postgres", "test")
    ]
    with pytest.raises(KeyError):
        make_table("pg_replication_slots", [{"nope": 1}])


class _CountingCon:
    def __init__(self) -> None:
        self.con = duckdb.connect()
        self.registered: list[str] = []
        self.executed: list[str] = []

    def register(self, name: str, table: pa.Table) -> None:
        self.registered.append(name)
        self.con.register(name, table)

    def execute(self, sql: str, *a: Any) -> Any:
        self.executed.append(sql)
        return self.con.execute(sql, *a)


def test_binding_registers_each_object_once() -> None:
    con = _CountingCon()
    binding = CatalogBinding(con)
    snap = CatalogSnapshot.build(CATALOG, SERVER)
    rw = rewrite("SELECT format_type(23, -1), pg_get_userbyid(10)", resolve_user_table=_resolve)
    binding.ensure(rw.needs, snap, SESSION)
    first = (len(con.registered), len(con.executed))
    binding.ensure(rw.needs, snap, SESSION)
    assert (len(con.registered), len(con.executed)) == first
    # a new session state re-registers only the session tables
    binding.ensure(rw.needs, snap, SessionInfo(user="postgres", application_name="other"))
    assert all(
        n.startswith("pgc_session") or n == "pgc_search_path" or n == "pgc_settings_lookup"
        for n in con.registered[first[0] :]
    )
    assert con.con.execute(rw.sql).fetchall() == [("integer", "postgres")]


def test_register_everything() -> None:
    con = duckdb.connect()
    pgcatalog.register(con, CatalogSnapshot.build(CATALOG, SERVER), SESSION)
    assert con.execute("SELECT count(*) FROM pgc_pg_type").fetchone() == (
        len(pgcatalog_defs.TYPES.rows) + 2 * 4,
    )


# -- helpers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("oid", "typmod", "text"),
    [
        (1043, 24, "character varying(20)"),
        (1042, -1, "bpchar"),
        (1042, None, "character"),
        (1700, 786438, "numeric(12,2)"),
        (1015, 14, "character varying(10)[]"),
        (1184, 3, "timestamp(3) with time zone"),
        (1083, -1, "time without time zone"),
        (1186, 0x7FFF0000 | 3, "interval(3)"),
        (23, -1, "integer"),
        (424242, -1, "???"),
    ],
)
def test_format_type(oid: int, typmod: int | None, text: str) -> None:
    assert format_type(oid, typmod) == text


def test_quote_ident() -> None:
    assert [quote_ident(x) for x in ("abc", "Abc", "select", "a b", 'a"b', "_x1", "x$")] == [
        "abc",
        '"Abc"',
        '"select"',
        '"a b"',
        '"a""b"',
        "_x1",
        '"x$"',
    ]


def test_split_search_path() -> None:
    assert split_search_path('"$user", public') == ["$user", "public"]
    assert split_search_path('"My Schema",Other , x') == ["My Schema", "other", "x"]
    assert split_search_path("") == []


@pytest.mark.parametrize(
    ("setting", "unit", "vartype", "shown"),
    [
        ("16384", "8kB", "integer", "128MB"),
        ("64", "8kB", "integer", "512kB"),
        ("-1", "kB", "integer", "-1"),
        ("0", "ms", "integer", "0"),
        ("60", "s", "integer", "1min"),
        ("1500", "ms", "integer", "1500ms"),
        ("16777216", "B", "integer", "16MB"),
        ("2", "ms", "real", "2ms"),
        ("on", None, "bool", "on"),
    ],
)
def test_show_value(setting: str, unit: str | None, vartype: str, shown: str) -> None:
    assert show_value(setting, unit, vartype) == shown


def test_parse_array_literal() -> None:
    assert parse_array_literal("{}") == []
    assert parse_array_literal('{a,"b,c",NULL,"NULL", d }') == ["a", "b,c", None, "NULL", "d"]
    assert parse_array_literal("{{1},{2}}") is None
    assert parse_array_literal("abc") is None


def test_figure_colname_on_raw_nodes() -> None:
    from pglast import parse_sql

    stmt = parse_sql("SELECT x::text, 1::int, (SELECT a AS b FROM t), row(1), t.*")[0].stmt
    names = [figure_colname(t.val)[0] for t in stmt.targetList]
    assert names == ["x", "int4", "b", "row", "t"]


def test_translate_error() -> None:
    con = duckdb.connect()
    with pytest.raises(duckdb.Error) as e:
        con.execute("SELECT CAST('x' AS INTEGER)")
    assert translate_error(e.value).sqlstate == "22P02"
    with pytest.raises(duckdb.Error) as e:
        con.execute("SELECT error('PGERR[55006] slot is active')")
    err = translate_error(e.value)
    assert (err.sqlstate, err.message) == ("55006", "slot is active")
    assert translate_error(PgError("42P01", "x")).sqlstate == "42P01"


def test_a_cancel_inside_a_streamed_result_is_57014() -> None:
    """DuckDB interrupted while it makes the next batch of an Arrow stream (a big SELECT or
    INSERT … SELECT read batch by batch): pyarrow raises OSError with DuckDB's text, which
    must read as a cancel, not as an internal error (XX000 "Interrupted!")."""
    import threading

    con = duckdb.connect()
    reader = con.sql("SELECT i, md5(i::text) AS m FROM range(300000000) t(i)").to_arrow_reader(
        batch_size=131_072
    )
    stop = threading.Event()

    def cancel() -> None:  # as a CancelRequest does, until the stream stops
        while not stop.wait(0.05):
            con.interrupt()

    th = threading.Thread(target=cancel)
    th.start()
    try:
        with pytest.raises(OSError) as e:
            while True:
                reader.read_next_batch()
    finally:
        stop.set()
        th.join()
    err = translate_error(e.value)
    assert (err.sqlstate, err.message) == ("57014", "canceling statement due to user request")


def test_the_base_layer_quotes_the_keywords_the_catalog_lists() -> None:
    """decoding.identifiers (for the walsender process, without catalog data) quotes
    exactly the keywords pg_get_keywords lists as needing it."""
    from decoding.identifiers import QUOTED_KEYWORDS
    from walsender_proxy.backend import pgcatalog_data

    assert frozenset(pgcatalog_data.QUOTED_KEYWORDS) == QUOTED_KEYWORDS
