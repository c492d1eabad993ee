"""The emulated pg_catalog answers client catalog queries exactly as PostgreSQL 15 does.

The same schema is created in a real PostgreSQL 15 and in a lake; then every catalog query a
subscriber, tablesync worker and pg_recvlogical send (shared/protocol/pg15/distinct_queries.md),
every query psql 15 sends for \\d, \\dt, \\d TABLE, \\dn, \\l, \\dRp+, \\du (captured live with
``psql -E`` against the reference), psycopg 3's TypeInfo query and a set of common catalog
queries run on both sides. Results are compared in PostgreSQL's text wire format, with
column names and type OIDs; OIDs of user objects differ between the two and are compared by
the object they name.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import psycopg
import pytest
from psycopg.adapt import Loader

from tests.lakeutil import cooked
from tests.pgcluster import PgCluster
from tests.pgcompare import raw_outcome, same_answers
from tests.proxy import ProxyServer
from walsender_proxy.lake import Lake, LakeSettings, PubTable
from walsender_proxy.sql import literals, pgcatalog, pgcatalog_defs
from walsender_proxy.sql.pgcatalog import (
    CatalogBinding,
    CatalogSnapshot,
    Role,
    ServerInfo,
    SessionInfo,
)
from walsender_proxy.sql.rewrite import rewrite

DB = "wpx_catalog"
REPL_ROLE = "wpx_cat_repl"

SCHEMA_SQL = """
CREATE SCHEMA s1;
CREATE TABLE public.t_pk (id integer PRIMARY KEY, b bigint, t text, n numeric(12,2),
  ts timestamp with time zone, flag boolean, data bytea, j jsonb, iarr integer[], tarr text[],
  vc varchar(20), ch char(3), d date, tm time, u uuid, f4 real, f8 double precision,
  sm smallint, iv interval, tsn timestamp, js json, nn numeric NOT NULL);
CREATE TABLE public.t_nokey (id integer, v text);
CREATE TABLE public.t_full (id integer NOT NULL, v text, n numeric, ts timestamp);
ALTER TABLE public.t_full REPLICA IDENTITY FULL;
CREATE TABLE public.t_uidx (id integer NOT NULL, code text NOT NULL, v text);
CREATE UNIQUE INDEX ON public.t_uidx (id, code);
ALTER TABLE public.t_uidx REPLICA IDENTITY USING INDEX t_uidx_id_code_idx;
CREATE TABLE public.t_filtered (id integer PRIMARY KEY, region text, secret text, amount numeric(12,2));
CREATE TABLE public.t_nothing (id bigint, v varchar);
ALTER TABLE public.t_nothing REPLICA IDENTITY NOTHING;
CREATE TABLE public.t_dropped (id integer PRIMARY KEY, gone text, kept text);
ALTER TABLE public.t_dropped DROP COLUMN gone;
CREATE TABLE s1.t_schema (id bigint PRIMARY KEY, v text, ts timestamptz);
CREATE TABLE s1.t_multi (a integer NOT NULL, b text NOT NULL, c date, PRIMARY KEY (a, b));
CREATE INDEX t_multi_c ON s1.t_multi (c DESC NULLS LAST) INCLUDE (b);
ALTER TABLE s1.t_multi ADD CONSTRAINT t_multi_c_key UNIQUE NULLS NOT DISTINCT (c);
CREATE INDEX ON public.t_nokey USING hash (v);
COMMENT ON TABLE s1.t_multi IS 'two keys';
COMMENT ON COLUMN s1.t_multi.c IS 'a date';
CREATE PUBLICATION pub_main FOR TABLE public.t_pk, public.t_nokey, public.t_full, public.t_uidx,
  public.t_dropped, TABLES IN SCHEMA s1;
CREATE PUBLICATION pub_filter FOR TABLE public.t_filtered (id, region, amount)
  WHERE (region = 'eu' AND amount > 10), public.t_nothing WITH (publish = 'insert');
CREATE PUBLICATION pub_all FOR ALL TABLES WITH (publish = 'insert, update');
CREATE PUBLICATION pub_schema FOR TABLES IN SCHEMA s1 WITH (publish_via_partition_root = true);
"""


def build_lake(root: Path) -> Lake:
    lake = Lake(root, LakeSettings(fsync=False, background=False))
    with lake.begin() as tx:
        tx.create_schema("s1")
        tx.create_table(
            "public.t_pk",
            [
                ("id", "integer"),
                ("b", "bigint"),
                ("t", "text"),
                ("n", "numeric(12,2)"),
                ("ts", "timestamp with time zone"),
                ("flag", "boolean"),
                ("data", "bytea"),
                ("j", "jsonb"),
                ("iarr", "integer[]"),
                ("tarr", "text[]"),
                ("vc", "varchar(20)"),
                ("ch", "char(3)"),
                ("d", "date"),
                ("tm", "time"),
                ("u", "uuid"),
                ("f4", "real"),
                ("f8", "double precision"),
                ("sm", "smallint"),
                ("iv", "interval"),
                ("tsn", "timestamp"),
                ("js", "json"),
                ("nn", "numeric", True),
            ],
            primary_key=["id"],
        )
        tx.create_table("public.t_nokey", [("id", "integer"), ("v", "text")])
        tx.create_table(
            "public.t_full",
            [("id", "integer", True), ("v", "text"), ("n", "numeric"), ("ts", "timestamp")],
            replica_identity="f",
        )
        tx.create_table(
            "public.t_uidx", [("id", "integer", True), ("code", "text", True), ("v", "text")]
        )
        tx.create_index("public.t_uidx", None, ["id", "code"], unique=True)
        tx.set_replica_identity("public.t_uidx", "index", ["id", "code"], index_name="t_uidx_id_code_idx")
        tx.create_index("public.t_nokey", None, ["v"], method="hash")
        tx.create_table(
            "public.t_filtered",
            [("id", "integer"), ("region", "text"), ("secret", "text"), ("amount", "numeric(12,2)")],
            primary_key=["id"],
        )
        tx.create_table(
            "public.t_nothing", [("id", "bigint"), ("v", "varchar")], replica_identity="n"
        )
        tx.create_table(
            "public.t_dropped",
            [("id", "integer"), ("gone", "text"), ("kept", "text")],
            primary_key=["id"],
        )
        tx.drop_column("public.t_dropped", "gone")
        tx.create_table(
            "s1.t_schema",
            [("id", "bigint"), ("v", "text"), ("ts", "timestamptz")],
            primary_key=["id"],
        )
        tx.create_table(
            "s1.t_multi",
            [("a", "integer", True), ("b", "text", True), ("c", "date")],
            primary_key=["a", "b"],
        )
        tx.create_index("s1.t_multi", "t_multi_c", ["c"], options=[1], include=["b"])
        multi = tx.table("s1.t_multi").oid
        tx.set_comment(1259, multi, 0, "two keys")
        tx.set_comment(1259, multi, 3, "a date")
        tx.create_index("s1.t_multi", "t_multi_c_key", ["c"], unique=True, nulls_not_distinct=True, constraint=True)
        tx.create_publication(
            "pub_main",
            tables=[
                "public.t_pk",
                "public.t_nokey",
                "public.t_full",
                "public.t_uidx",
                "public.t_dropped",
            ],
            schemas=["s1"],
        )
        tx.create_publication(
            "pub_filter",
            tables=cooked(tx, [
                PubTable("public.t_filtered", ("id", "region", "amount"), "region = 'eu' AND amount > 10"),
                "public.t_nothing",
            ]),
            publish="insert",
        )
        tx.create_publication("pub_all", all_tables=True, publish="insert, update")
        tx.create_publication("pub_schema", schemas=["s1"], publish_via_partition_root=True)
    return lake


# -- text format ------------------------------------------------------------------------------


class _Text(Loader):
    def load(self, data: Any) -> str:
        return bytes(data).decode()


_ARRAY_SPECIAL = re.compile(r'[{},"\\\s]')


def _array_elem(v: Any) -> str:
    if v is None:
        return "NULL"
    s = _text(v)
    if s == "" or s.upper() == "NULL" or _ARRAY_SPECIAL.search(s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return s


def _text(v: Any) -> str:
    """A DuckDB result value in PostgreSQL's text output format (the server's job)."""
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e15:
            return str(int(v))
        return repr(v)
    if isinstance(v, list | tuple):
        return "{" + ",".join(_array_elem(x) for x in v) + "}"
    if isinstance(v, datetime):
        s = v.isoformat(sep=" ")
        return s.replace("+00:00", "+00")
    if isinstance(v, date | time | Decimal | int):
        return str(v)
    if isinstance(v, timedelta):
        return str(v)
    if isinstance(v, bytes):
        return "\\x" + v.hex()
    return str(v)


_DUCK_TO_OID = {
    "BOOLEAN": 16,
    "SMALLINT": 21,
    "INTEGER": 23,
    "BIGINT": 20,
    "UINTEGER": 26,
    "UBIGINT": 20,
    "HUGEINT": 1700,
    "REAL": 700,
    "FLOAT": 700,
    "DOUBLE": 701,
    "VARCHAR": 25,
    "BLOB": 17,
    "DATE": 1082,
    "TIME": 1083,
    "TIMESTAMP": 1114,
    "TIMESTAMP WITH TIME ZONE": 1184,
    "INTERVAL": 1186,
    "UUID": 2950,
}


def _duck_oid(type_name: str) -> int | None:
    if type_name.endswith("[]"):
        elem = _duck_oid(type_name[:-2])
        arrays = {r["oid"]: r["typarray"] for r in pgcatalog_defs.TYPES.rows.values()}
        return arrays.get(elem) if elem else None
    if type_name.startswith("DECIMAL"):
        return 1700
    return _DUCK_TO_OID.get(type_name)


# -- the two sides ----------------------------------------------------------------------------

OID_MAP_SQL = """
SELECT c.oid, 'rel:' || n.nspname || '.' || c.relname FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname IN ('public', 's1')
UNION ALL SELECT t.oid, 'type:' || t.typname FROM pg_catalog.pg_type t
  JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname IN ('public', 's1')
UNION ALL SELECT oid, 'nsp:' || nspname FROM pg_catalog.pg_namespace WHERE nspname IN ('public', 's1')
UNION ALL SELECT oid, 'pub:' || pubname FROM pg_catalog.pg_publication
UNION ALL SELECT c.oid, 'con:' || c.conname FROM pg_catalog.pg_constraint c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.connamespace WHERE n.nspname IN ('public', 's1')
UNION ALL SELECT r.oid, 'prel:' || p.pubname || '/' || c.relname FROM pg_catalog.pg_publication_rel r
  JOIN pg_catalog.pg_publication p ON p.oid = r.prpubid JOIN pg_catalog.pg_class c ON c.oid = r.prrelid
UNION ALL SELECT r.oid, 'pns:' || p.pubname || '/' || n.nspname FROM pg_catalog.pg_publication_namespace r
  JOIN pg_catalog.pg_publication p ON p.oid = r.pnpubid JOIN pg_catalog.pg_namespace n ON n.oid = r.pnnspid
"""


@dataclass
class Result:
    columns: list[tuple[str, int | None]]
    rows: list[tuple[str | None, ...]]


class Reference:
    def __init__(self, pg: PgCluster) -> None:
        self.pg = pg
        with psycopg.connect(pg.dsn(), autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {DB}")
            c.execute(f"CREATE DATABASE {DB}")
            c.execute(
                f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{REPL_ROLE}') "
                f"THEN CREATE ROLE {REPL_ROLE} LOGIN REPLICATION; END IF; END $$"
            )
        self.conn = psycopg.connect(pg.dsn(DB), autocommit=True)
        self.conn.execute(SCHEMA_SQL)
        oids = [r[0] for r in self.conn.execute("SELECT oid FROM pg_type").fetchall()]
        for oid in oids:
            self.conn.adapters.register_loader(oid, _Text)
        self.oid_names = {int(o): n for o, n in self.run(OID_MAP_SQL).rows if o is not None}
        self.name_oids = {n: o for o, n in self.oid_names.items()}

    def run(self, sql: str, params: Sequence[Any] | None = None) -> Result:
        with self.conn.cursor() as cur:
            cur.execute(sql, params)
            cols = [(d.name, d.type_code) for d in cur.description or ()]
            return Result(cols, [tuple(r) for r in cur.fetchall()])

    def psql_queries(self, command: str) -> list[str]:
        """The queries psql 15 sends for a backslash command (``psql -E``)."""
        out = subprocess.run(
            [
                str(self.pg.bindir / "psql"),
                "-X",
                "-E",
                "-h",
                "127.0.0.1",
                "-p",
                str(self.pg.port),
                "-U",
                "postgres",
                "-d",
                DB,
                "-c",
                command,
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
        return re.findall(r"\*{9} QUERY \*{10}\n(.*?)\n\*{26}\n", out, re.S)


class Emulation:
    def __init__(self, root: Path) -> None:
        self.lake = build_lake(root)
        self.server = ServerInfo(
            database=DB,
            roles=(
                Role(
                    "postgres",
                    superuser=True,
                    replication=True,
                    createdb=True,
                    createrole=True,
                    bypassrls=True,
                ),
                Role(REPL_ROLE, replication=True),
            ),
        )
        self.session = SessionInfo(
            user="postgres", database=DB, application_name="psql", backend_pid=4242
        )
        self.snapshot = CatalogSnapshot.build(self.lake.catalog, self.server)
        self.con = duckdb.connect()
        literals.install(self.con)  # (the UDFs rewritten SQL calls: the regex operators')
        self.binding = CatalogBinding(self.con)
        self.oid_names = {int(o): n for o, n in self.run(OID_MAP_SQL).rows if o is not None}
        self.name_oids = {n: o for o, n in self.oid_names.items()}

    def run(
        self, sql: str, params: Sequence[Any] | None = None, session: SessionInfo | None = None
    ) -> Result:
        rw = rewrite(sql, resolve_user_table=lambda s, n: None)
        self.binding.ensure(rw.needs, self.snapshot, session or self.session)
        cur = self.con.execute(rw.sql, list(params) if params else None)
        desc = cur.description or []
        rows = cur.fetchall()
        if session is None and rw.set_configs:
            # what the server does with set_config(): the session's settings change
            settings = dict(self.session.settings)
            settings.update({k: v for k, v, _local in rw.set_configs if v is not None})
            self.session = replace(self.session, settings=settings)
        if rw.columns is not None:
            cols = [
                (c.name, c.type_oid if c.type_oid is not None else _duck_oid(str(d[1])))
                for c, d in zip(rw.columns, desc, strict=True)
            ]
        else:
            cols = [(d[0], _duck_oid(str(d[1]))) for d in desc]
        return Result(cols, [tuple(None if v is None else _text(v) for v in r) for r in rows])

    def close(self) -> None:
        self.con.close()
        self.lake.close()


@pytest.fixture(scope="module")
def ref(pg15: PgCluster) -> Iterator[Reference]:
    r = Reference(pg15)
    yield r
    r.conn.close()


@pytest.fixture(scope="module")
def emu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulation]:
    e = Emulation(tmp_path_factory.mktemp("lake"))
    yield e
    e.close()


# -- comparison -------------------------------------------------------------------------------


def _normalize(
    res: Result, oid_names: dict[int, str], keep_order: bool
) -> tuple[list[Any], list[Any]]:
    def norm(v: str | None) -> str | None:
        if v is not None and v.isdigit() and int(v) in oid_names:
            return oid_names[int(v)]
        return v

    rows = [tuple(norm(v) for v in r) for r in res.rows]
    if not keep_order:
        rows.sort(key=lambda r: tuple("" if v is None else v for v in r))
    return res.columns, rows


def _for_side(sql: str, side: Reference | Emulation, src: Reference) -> str:
    """psql's queries embed the reference's OIDs; point them at the same objects on ``side``."""

    def sub(m: re.Match[str]) -> str:
        name = src.oid_names.get(int(m.group(1)))
        return f"'{side.name_oids[name]}'" if name else m.group(0)

    return re.sub(r"'(\d{5,})'", sub, sql)


def compare(
    ref: Reference,
    emu: Emulation,
    sql: str,
    params: Sequence[Any] | None = None,
    row_filter: Any = None,
) -> None:
    keep_order = bool(re.search(r"ORDER\s+BY", sql, re.I))
    expected = ref.run(sql, params)
    got = emu.run(_for_side(sql, emu, ref), params)
    if row_filter is not None:
        expected.rows = [r for r in expected.rows if row_filter(r)]
        got.rows = [r for r in got.rows if row_filter(r)]
    e_cols, e_rows = _normalize(expected, ref.oid_names, keep_order)
    g_cols, g_rows = _normalize(got, emu.oid_names, keep_order)
    assert g_cols == e_cols, f"columns differ for:\n{sql}"
    assert g_rows == e_rows, f"rows differ for:\n{sql}"


# -- the subscriber's queries (verbatim from shared/protocol/pg15/distinct_queries.md) --------

PUBS = "'pub_main', 'pub_filter'"
SUBSCRIBER_TABLES = [
    "public.t_pk",
    "public.t_filtered",
    "public.t_full",
    "public.t_uidx",
    "public.t_nothing",
    "public.t_nokey",
    "public.t_dropped",
    "s1.t_schema",
    "s1.t_multi",
]

SUBSCRIBER_FIXED = {
    "set_config": "SELECT pg_catalog.set_config('search_path', '', false);",
    "publication_names": f"SELECT t.pubname FROM\n pg_catalog.pg_publication t WHERE\n t.pubname IN ({PUBS})",
    "publication_tables": "SELECT DISTINCT t.schemaname, t.tablename \n, t.attnames\n"
    f"FROM pg_catalog.pg_publication_tables t\n WHERE t.pubname IN ({PUBS})",
}


def subscriber_per_table(schema: str, table: str, oid: str) -> dict[str, str]:
    return {
        "relation": "SELECT c.oid, c.relreplident, c.relkind  FROM pg_catalog.pg_class c  INNER JOIN "
        "pg_catalog.pg_namespace n        ON (c.relnamespace = n.oid) WHERE n.nspname = "
        f"'{schema}'   AND c.relname = '{table}'",
        "column_list": "SELECT DISTINCT  (CASE WHEN (array_length(gpt.attrs, 1) = c.relnatts)   "
        "THEN NULL ELSE gpt.attrs END)  FROM pg_publication p,  LATERAL "
        f"pg_get_publication_tables(p.pubname) gpt,  pg_class c WHERE gpt.relid = {oid} AND "
        f"c.oid = gpt.relid   AND p.pubname IN ( 'pub_main', 'pub_filter' )",
        "columns": "SELECT a.attnum,       a.attname,       a.atttypid,       a.attnum = ANY(i.indkey)  "
        "FROM pg_catalog.pg_attribute a  LEFT JOIN pg_catalog.pg_index i       ON (i.indexrelid = "
        f"pg_get_replica_identity_index({oid})) WHERE a.attnum > 0::pg_catalog.int2   AND NOT "
        f"a.attisdropped AND a.attgenerated = ''   AND a.attrelid = {oid} ORDER BY a.attnum",
        "row_filter": "SELECT DISTINCT pg_get_expr(gpt.qual, gpt.relid)  FROM pg_publication p,  "
        f"LATERAL pg_get_publication_tables(p.pubname) gpt WHERE gpt.relid = {oid}   AND p.pubname "
        "IN ( 'pub_main', 'pub_filter' )",
    }


@pytest.mark.parametrize("name", sorted(SUBSCRIBER_FIXED))
def test_subscriber_queries(ref: Reference, emu: Emulation, name: str) -> None:
    saved = emu.session
    try:
        compare(ref, emu, SUBSCRIBER_FIXED[name])
        if name == "set_config":
            # both sides now have an empty search_path: nothing user-defined is visible
            compare(
                ref,
                emu,
                "SELECT current_setting('search_path'), current_schemas(true), "
                "to_regclass('t_pk'), to_regclass('public.t_pk')",
            )
    finally:
        ref.conn.execute("RESET search_path")
        emu.session = saved


@pytest.mark.parametrize("table", SUBSCRIBER_TABLES)
@pytest.mark.parametrize("kind", ["relation", "column_list", "columns", "row_filter"])
def test_tablesync_queries(ref: Reference, emu: Emulation, table: str, kind: str) -> None:
    schema, name = table.split(".")
    token = f"rel:{table}"
    expected = ref.run(subscriber_per_table(schema, name, str(ref.name_oids[token]))[kind])
    got = emu.run(subscriber_per_table(schema, name, str(emu.name_oids[token]))[kind])
    keep = kind == "columns"
    assert _normalize(got, emu.oid_names, keep) == _normalize(expected, ref.oid_names, keep)


# -- psql's backslash commands (captured live with psql -E) -----------------------------------

PSQL_COMMANDS = [
    "\\d",
    "\\dt",
    "\\dn",
    "\\l",
    "\\dRp",
    "\\dRp+",
    "\\du",
    "\\dx",
    "\\df",
    "\\d t_pk",
    "\\d t_uidx",
    "\\d t_full",
    "\\d t_nothing",
    "\\d t_dropped",
    "\\d s1.t_multi",
    "\\d t_nokey",
    "\\d+ s1.t_multi",
    "\\d+ t_filtered",
    "\\dt s1.*",
    "\\d+ t_pk",
    "\\dn+",
    "\\dT",
    "\\di",
    "\\dp t_pk",
    "\\df lower",
    "\\dfS pg_read_f*",
    "\\df+ pg_catalog.lower",
    "\\dC",  # (pg_cast: PostgreSQL 15's casts, with their descriptions)
    "\\dC+ bigint",
    pytest.param("\\dt+", marks=pytest.mark.xfail(strict=True, reason="Size: no relation files")),
    pytest.param("\\l+", marks=pytest.mark.xfail(strict=True, reason="Size: no database files")),
    pytest.param(
        "\\dS pg_class", marks=pytest.mark.xfail(strict=True, reason="system indexes not emulated")
    ),
]

#: Rows that depend on the rest of the cluster (other tests' databases and roles).
_CLUSTER_ROWS = {
    "\\l": lambda r: r[0] in (DB, "template0", "template1"),
    "\\du": lambda r: r[0] in ("postgres", REPL_ROLE),
}


@pytest.mark.parametrize("command", PSQL_COMMANDS)
def test_psql_commands(ref: Reference, emu: Emulation, command: str) -> None:
    queries = ref.psql_queries(command)
    assert queries, f"psql sent no query for {command}"
    for sql in queries:
        compare(ref, emu, sql, row_filter=_CLUSTER_ROWS.get(command))


# -- psycopg ----------------------------------------------------------------------------------

TYPEINFO_NAMES = [
    "text",
    "int4",
    "integer",
    "text[]",
    "character varying",
    "varchar(10)",
    "hstore",
    "numeric",
    "bpchar",
    '"char"',
    "char",
    "json",
    "jsonb",
    "uuid",
    "timestamptz",
    "timestamp with time zone",
    "int4range",
    "pg_catalog.int8",
    "t_pk",
    "s1.t_multi",
    "oid",
    "name",
    "regclass",
    "int2vector",
    "_int4",
    "bool",
    "interval",
    "bytea",
]


def test_psycopg_typeinfo(ref: Reference, emu: Emulation) -> None:
    from psycopg.types import TypeInfo

    sql = TypeInfo._get_info_query(ref.conn).as_string(ref.conn)
    sql = sql.replace("%(name)s", "$1")
    for name in TYPEINFO_NAMES:
        with ref.conn.cursor() as cur:
            cur.execute(sql.replace("$1", "%s"), [name])
            expected = Result(
                [(d.name, d.type_code) for d in cur.description or ()],
                [tuple(r) for r in cur.fetchall()],
            )
        got = emu.run(sql, [name])
        assert _normalize(got, emu.oid_names, True) == _normalize(expected, ref.oid_names, True), (
            name
        )


# -- other common catalog queries -------------------------------------------------------------

OTHER_QUERIES = {
    "pg_type_star": "SELECT * FROM pg_type WHERE oid IN (16, 22, 23, 1007, 1043, 2205) ORDER BY oid",
    "pg_index_star": "SELECT * FROM pg_index WHERE indrelid = 't_uidx'::regclass",
    "pg_roles_star": "SELECT * FROM pg_roles WHERE rolname = 'postgres'",
    "pg_database": "SELECT datname, datdba::regrole, encoding, datlocprovider, datistemplate, "
    "datallowconn, datconnlimit, dattablespace, datcollate, datctype, datacl FROM pg_database "
    f"WHERE datname IN ('{DB}', 'template0', 'template1') ORDER BY 1",
    "sqlalchemy_has_table": "SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
    "ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relname = 't_pk' "
    "AND c.relkind = ANY (ARRAY['r', 'p', 'f', 'v', 'm'])",
    "star_with_user_join": "SELECT n.*, c.relname FROM pg_namespace n JOIN pg_class c "
    "ON c.relnamespace = n.oid WHERE c.relname = 't_multi'",
    "pg_publication": "SELECT * FROM pg_catalog.pg_publication ORDER BY pubname",
    "pg_publication_rel": "SELECT oid, prpubid, prrelid, prattrs FROM pg_publication_rel",
    "pg_publication_namespace": "SELECT * FROM pg_publication_namespace",
    "pg_publication_tables": "SELECT * FROM pg_catalog.pg_publication_tables ORDER BY 1, 2, 3",
    "gpt_regclass": "SELECT p.pubname, g.relid::regclass, g.attrs, g.qual IS NULL AS noqual "
    "FROM pg_publication p, LATERAL pg_get_publication_tables(p.pubname) g",
    "pg_namespace": "SELECT oid, nspname, nspowner::regrole FROM pg_namespace ORDER BY nspname",
    "user_classes": "SELECT c.oid, c.relname, c.relnamespace::regnamespace, c.relkind, c.relnatts, "
    "c.relhasindex, c.relreplident, c.relpersistence, c.relam, c.reltype, c.relispartition "
    "FROM pg_class c WHERE c.relnamespace IN ('public'::regnamespace, 's1'::regnamespace) ORDER BY 2",
    "user_attributes": "SELECT a.attrelid::regclass, a.attnum, a.attname, a.atttypid::regtype, a.atttypmod, "
    "format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attlen, a.attbyval, a.attalign, "
    "CASE WHEN NOT a.attisdropped THEN a.attcollation END, CASE WHEN NOT a.attisdropped THEN a.attstorage END, "
    "a.attndims, a.attisdropped, a.attstattarget FROM pg_attribute a "
    "JOIN pg_class c ON c.oid = a.attrelid WHERE c.relnamespace IN ('public'::regnamespace, 's1'::regnamespace) "
    "ORDER BY a.attrelid::regclass::text, 2",
    "pg_index": "SELECT indexrelid::regclass, indrelid::regclass, indnatts, indnkeyatts, indisunique, "
    "indisprimary, indisreplident, indkey, indcollation, indclass, indoption, indisvalid "
    "FROM pg_index WHERE indrelid IN (SELECT oid FROM pg_class WHERE relnamespace::regnamespace::text "
    "IN ('public', 's1')) ORDER BY indexrelid::regclass::text",
    "pg_constraint": "SELECT conname, contype, conrelid::regclass, conindid::regclass, conkey, "
    "pg_get_constraintdef(oid), pg_get_constraintdef(oid, true) FROM pg_constraint "
    "WHERE connamespace IN ('public'::regnamespace, 's1'::regnamespace) ORDER BY 1",
    "pg_indexes": "SELECT * FROM pg_indexes WHERE schemaname IN ('public', 's1') ORDER BY indexname",
    "indexdef_columns": "SELECT i.indexrelid::regclass, pg_get_indexdef(i.indexrelid), "
    "pg_get_indexdef(i.indexrelid, 1, true), pg_get_indexdef(i.indexrelid, 2, false) "
    "FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname IN ('public', 's1') ORDER BY i.indexrelid::regclass::text",
    "pg_tables": "SELECT * FROM pg_tables WHERE schemaname IN ('public', 's1') ORDER BY 1, 2",
    "replica_identity_index": "SELECT c.relname, pg_get_replica_identity_index(c.oid) FROM pg_class c "
    "WHERE c.relkind = 'r' AND c.relnamespace IN ('public'::regnamespace, 's1'::regnamespace) ORDER BY 1",
    "publishable": "SELECT relname, pg_relation_is_publishable(oid) FROM pg_class "
    "WHERE relname IN ('t_pk', 'pg_class', 't_uidx_id_code_idx', 's1') ORDER BY 1",
    "regclass_in": "SELECT 'pg_class'::regclass::oid, 't_pk'::regclass, 's1.t_multi'::regclass, "
    "'public.t_pk'::regclass::oid, '\"t_pk\"'::regclass, to_regclass('nope'), to_regclass('t_multi'), "
    "'pg_catalog.pg_type'::regclass::oid",
    "regtype_out": "SELECT 23::regtype, 1043::regtype, 1042::regtype, 18::regtype, 1015::regtype, "
    "1184::regtype, 22::regtype, 2205::regtype::text, 'int4'::regtype::oid, 'character varying'::regtype::oid",
    "format_type": "SELECT format_type(1043, 24), format_type(1042, 7), format_type(1700, 786438), "
    "format_type(1015, 24), format_type(1083, 3), format_type(1184, 2), format_type(1114, 0), "
    "format_type(1042, NULL), format_type(1042, -1), format_type(NULL, 1), format_type(424242, -1), "
    "format_type(1231, 655366), format_type(1186, -1)",
    "builtin_types": "SELECT t.oid, t.typname, t.typarray, t.typelem, t.typtype, t.typcategory, t.typlen, "
    "t.typdelim, t.typinput, t.typoutput, format_type(t.oid, NULL), format_type(t.oid, -1), "
    "t.oid::regtype::text, pg_type_is_visible(t.oid) FROM pg_type t WHERE t.typnamespace = 11 "
    "AND t.typtype <> 'c' AND NOT EXISTS (SELECT 1 FROM pg_type e WHERE e.oid = t.typelem "
    "AND e.typtype = 'c') ORDER BY t.oid",
    "session_functions": "SELECT current_database(), current_schema(), current_schemas(true), "
    "current_schemas(false), current_user, session_user, user, current_catalog, "
    "pg_is_in_recovery(), pg_encoding_to_char(6), pg_char_to_encoding('utf8'), "
    "pg_char_to_encoding('nope'), has_table_privilege('pg_class', 'SELECT'), "
    "has_schema_privilege('public', 'USAGE'), has_database_privilege(current_database(), 'CONNECT')",
    # a superuser's privileges, named, by role name or OID, checked (PostgreSQL's 22023, 42P01,
    # 42704, 42809: ERROR_QUERIES); another role's are refused (test_privileges_of_other_roles_are_refused)
    "privileges": "SELECT has_table_privilege('t_pk', 'INSERT, update WITH GRANT OPTION'), "
    "has_table_privilege('postgres', 't_pk', 'select'), has_table_privilege(10::oid, 't_pk', 'delete'), "
    "has_column_privilege('t_pk', 'id', 'select'), has_column_privilege('postgres', 't_pk', 'id', 'update'), "
    "has_any_column_privilege('t_pk', 'insert'), has_function_privilege('now()', 'execute'), "
    "pg_has_role('postgres', 'member'), has_table_privilege(NULL, 'select'), has_table_privilege('t_pk', NULL)",
    "quote_ident": "SELECT quote_ident('abc'), quote_ident('Abc'), quote_ident('select'), "
    "quote_ident('a b'), quote_ident('a\"b'), quote_ident('user'), quote_ident('_x1$')",
    "settings_meta": "SELECT name, unit, category, short_desc, extra_desc, context, vartype, "
    "min_val, max_val, enumvals, boot_val FROM pg_settings ORDER BY name",
    "roles": f"SELECT rolname, rolsuper, rolreplication, rolcanlogin, rolinherit, rolconnlimit, "
    f"rolpassword, oid >= 16384 FROM pg_roles WHERE rolname IN ('postgres', '{REPL_ROLE}') "
    "OR rolname ~ '^pg_' ORDER BY 1",
    "auth_members": "SELECT roleid::regrole, member::regrole, admin_option FROM pg_auth_members "
    "WHERE roleid < 16384 ORDER BY roleid::regrole::text, member::regrole::text",
    "pg_am": "SELECT * FROM pg_am ORDER BY oid",
    "pg_tablespace": "SELECT oid, spcname, spcowner::regrole FROM pg_tablespace ORDER BY oid",
    "size_pretty": "SELECT pg_size_pretty(0::bigint), pg_size_pretty(10239::bigint), "
    "pg_size_pretty(10240::bigint), pg_size_pretty(123456789::bigint), "
    "pg_size_pretty(-5000000::bigint), pg_size_pretty(99999999999999::bigint), "
    "pg_size_pretty(-15871::bigint), pg_size_pretty(-10485247::bigint), pg_size_pretty(-1000000000000::bigint), "
    "pg_size_pretty(-9223372036854775807::bigint), pg_size_pretty(9223372036854775807::bigint)",
    "size_pretty_numeric": "SELECT x, pg_size_pretty(x), CASE WHEN x < 1e35 AND x > -1e35 THEN pg_size_pretty(x::numeric(38,2)) END FROM (VALUES (0::numeric), (10239.99), "
    "(10240.5), (-10240.5), (10485247.7), (-1e30), (123.450), ('NaN'), ('-Infinity'), (NULL)) v(x) ORDER BY x",
    "info_schema_columns": "SELECT table_schema, table_name, column_name, ordinal_position, is_nullable, "
    "data_type, character_maximum_length, numeric_precision, numeric_scale, udt_name "
    "FROM information_schema.columns WHERE table_schema IN ('public', 's1') ORDER BY 1, 2, 4",
    "info_schema_tables": "SELECT table_catalog, table_schema, table_name, table_type "
    "FROM information_schema.tables WHERE table_schema IN ('public', 's1') ORDER BY 1, 2, 3",
    "info_schema_pk": "SELECT tc.table_schema, tc.table_name, tc.constraint_name, kcu.column_name, "
    "kcu.ordinal_position FROM information_schema.table_constraints tc JOIN "
    "information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name "
    "AND kcu.table_schema = tc.table_schema WHERE tc.constraint_type = 'PRIMARY KEY' "
    "AND tc.table_schema IN ('public', 's1') ORDER BY 1, 2, 5",
    "values": "VALUES (1, 'a'), (2, NULL)",
    "union_expr_names": "SELECT 1 AS x, 'a', NULL::int, 2 + 3, count(*) FROM pg_am "
    "UNION ALL SELECT 2, 'b', 3, 4, 5 ORDER BY 1",
    "cte_and_subquery": "WITH p AS (SELECT pubname, oid FROM pg_publication) "
    "SELECT p.pubname, (SELECT count(*) FROM pg_publication_rel r WHERE r.prpubid = p.oid) AS n, "
    "EXISTS (SELECT 1 FROM pg_publication_namespace WHERE pnpubid = p.oid), "
    "ARRAY(SELECT c.relname FROM pg_publication_rel r JOIN pg_class c ON c.oid = r.prrelid "
    "WHERE r.prpubid = p.oid ORDER BY 1) FROM p ORDER BY 1",
    "int2vector_subscripts": "SELECT pr.prattrs, pr.prattrs[0], pr.prattrs[1], "
    "array_upper(pr.prattrs::int2[], 1), array_lower(pr.prattrs::int2[], 1), "
    "array_length(pr.prattrs, 1) FROM pg_publication_rel pr WHERE pr.prattrs IS NOT NULL",
    "generate_series": "SELECT s, s * 2 FROM generate_series(1, 3) s ORDER BY s",
    # pg_dump reads every catalog's tableoid and compares ACLs with acldefault()
    "tableoid_and_acldefault": "SELECT n.tableoid, n.tableoid::regclass, c.tableoid, n.nspname, "
    "acldefault('n', n.nspowner), acldefault('r', c.relowner), acldefault('s', c.relowner), "
    "acldefault('d', 10), acldefault('f', 10), acldefault('T', 10), acldefault('c', 10) "
    "FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid WHERE c.relname = 't_pk'",
    # pg_proc: PostgreSQL's own functions, regproc and regprocedure both ways
    "pg_proc_builtin": "SELECT count(*), count(*) FILTER (WHERE proacl IS NOT NULL), min(oid), max(oid), "
    "count(DISTINCT proname) FROM pg_proc WHERE pronamespace = 11",
    "regprocedure": "SELECT 870::regprocedure, 'lower(text)'::regprocedure::oid, 'pg_catalog.now()'::regprocedure, "
    "to_regprocedure('lower(int)'), to_regprocedure('substring(text, int, int)'), 'now'::regproc, "
    "'array_in'::regproc::oid, pg_typeof(870::regprocedure)",
    "regprocedure_of_overloads": "SELECT oid::regprocedure::text AS p, oid::regproc::text AS n FROM pg_proc "
    "WHERE proname IN ('substring', 'generate_series', 'pg_read_file') ORDER BY pg_proc.oid",
    "proc_descriptions": "SELECT p.proname, d.description FROM pg_proc p JOIN pg_description d "
    "ON d.objoid = p.oid AND d.classoid = 'pg_proc'::regclass WHERE p.proname IN ('lower', 'now', 'jsonb_set') ORDER BY p.oid",
    "case_names": "SELECT CASE WHEN true THEN 1 END, CASE WHEN true THEN relname ELSE relname END, "
    "COALESCE(NULL, 'x'), GREATEST(1, 2), NULLIF(1, 1), ROW(1, 2) IS NOT NULL AS r, "
    "ARRAY[1, 2], 'x'::text, 1::int4, (SELECT relname FROM pg_class WHERE relname = 't_pk') "
    "FROM pg_class WHERE relname = 't_pk'",
}


@pytest.mark.parametrize("name", sorted(OTHER_QUERIES))
def test_other_catalog_queries(ref: Reference, emu: Emulation, name: str) -> None:
    compare(ref, emu, OTHER_QUERIES[name])


def test_current_setting_formats_like_show(ref: Reference, emu: Emulation) -> None:
    """current_setting spells units out (shared_buffers 16384 → 128MB) as SHOW does."""
    settings = {
        n: v for n, v in ref.run("SELECT name, setting FROM pg_settings").rows if v is not None
    }
    server = ServerInfo(database=DB, settings=settings)
    snap = CatalogSnapshot.build(emu.lake.catalog, server)
    con = duckdb.connect()
    b = CatalogBinding(con)
    expected = dict(ref.run("SELECT name, current_setting(name) FROM pg_settings").rows)
    sql = "SELECT name, current_setting(name) FROM pg_settings"
    rw = rewrite(sql, resolve_user_table=lambda s, n: None)
    b.ensure(rw.needs, snap, SessionInfo(database=DB, application_name="psql"))
    got = dict(con.execute(rw.sql).fetchall())
    volatile = {"application_name", "is_superuser", "session_authorization"}
    diffs = {
        k: (got.get(k), v) for k, v in expected.items() if k not in volatile and got.get(k) != v
    }
    assert not diffs
    con.close()


def test_search_path_visibility(ref: Reference, emu: Emulation) -> None:
    """With search_path '' (as subscribers set it) nothing user-defined is visible."""
    sql = (
        "SELECT c.oid::regclass, pg_table_is_visible(c.oid), current_schemas(true) FROM pg_class c "
        "WHERE c.relname IN ('t_pk', 't_multi', 'pg_class') ORDER BY c.relname"
    )
    ref.conn.execute("SET search_path = ''")
    try:
        expected = ref.run(sql)
    finally:
        ref.conn.execute("RESET search_path")
    got = emu.run(sql, session=SessionInfo(database=DB, settings={"search_path": ""}))
    assert _normalize(got, emu.oid_names, True) == _normalize(expected, ref.oid_names, True)


# -- errors -----------------------------------------------------------------------------------

ERROR_QUERIES = [
    "SELECT foo(1)",
    "SELECT foo('a', 1.5, NULL)",
    "SELECT * FROM nope",
    "SELECT * FROM s1.nope",
    "SELECT * FROM pg_catalog.pg_nope",
    "SELECT FROM WHERE",
    "SELECT 'é' FROM pg_class WHERE (",
    "SELECT 1::nosuchtype",
    "SELECT 'nope'::regclass",
    "SELECT 'nope'::regtype",
    "SELECT current_setting('nope')",
    "SELECT pg_catalog.format_type(1)",
    "SELECT has_table_privilege('t_pk', 'select, selec')",
    "SELECT has_table_privilege('t_nope', 'select')",
    "SELECT has_table_privilege('nobody', 't_pk', 'select')",
    "SELECT has_sequence_privilege('t_pk', 'usage')",
    "SELECT 'lower'::regprocedure",
    "SELECT 'lower(int)'::regprocedure",
    "SELECT 'lower(nosuchtype)'::regprocedure",
    "SELECT 'nope'::regproc",
    "SELECT 'lower'::regproc",
]


@pytest.mark.parametrize("sql", ERROR_QUERIES)
def test_errors_match(ref: Reference, emu: Emulation, sql: str) -> None:
    with pytest.raises(psycopg.Error) as pg_err:
        ref.run(sql)
    diag = pg_err.value.diag
    try:
        emu.run(sql)
    except Exception as e:
        err = pgcatalog.translate_error(e)
    else:
        pytest.fail("no error")
    assert (err.sqlstate, err.message) == (diag.sqlstate, diag.message_primary)
    position = getattr(err, "position", None)
    if position is not None:
        assert str(position) == diag.statement_position


# -- foreign keys, through a proxy: pg_constraint, constraintdef, information_schema, \d ------

FK_SCHEMA = [
    "CREATE SCHEMA fko",
    "CREATE TABLE fk_p (id int PRIMARY KEY, k int, name text, UNIQUE (k, name))",
    "CREATE TABLE fk_c (id int PRIMARY KEY, pid int REFERENCES fk_p, k int, name text, "
    "CONSTRAINT fk_c_kn FOREIGN KEY (k, name) REFERENCES fk_p (k, name) MATCH FULL ON UPDATE CASCADE "
    "ON DELETE SET NULL (k))",
    'CREATE TABLE "Fk T" ("Col A" bigint REFERENCES fk_p (id) ON DELETE CASCADE ON UPDATE RESTRICT, f float8, s smallint)',
    'ALTER TABLE "Fk T" ADD CONSTRAINT fk_t_s FOREIGN KEY (s) REFERENCES fk_p NOT VALID',
    "CREATE TABLE fk_self (id int PRIMARY KEY, parent int REFERENCES fk_self ON DELETE SET NULL)",
    "CREATE TABLE fko.q (id numeric(20,2) PRIMARY KEY, t varchar(10) UNIQUE, d double precision UNIQUE)",
    "CREATE UNIQUE INDEX q_bare ON fko.q (t, d)",
    "CREATE TABLE fk_r (a int REFERENCES fko.q, b text REFERENCES fko.q (t), c int REFERENCES fko.q (d), "
    "e real REFERENCES fko.q (d), g int8 REFERENCES fko.q (id), h varchar(10), i float8, "
    "FOREIGN KEY (h, i) REFERENCES fko.q (t, d))",
    "COMMENT ON CONSTRAINT fk_c_kn ON fk_c IS 'k and name'",
]

_FK_NAMES = "('fk_p', 'fk_c', 'Fk T', 'fk_self', 'q', 'fk_r')"
FK_QUERIES = [
    "SELECT conname, connamespace::regnamespace, contype, condeferrable, condeferred, convalidated, "
    "conrelid::regclass, contypid, conindid::regclass, conparentid, confrelid::regclass, confupdtype, confdeltype, "
    "confmatchtype, conislocal, coninhcount, connoinherit, conkey, confkey, conpfeqop, conppeqop, conffeqop, "
    "confdelsetcols, conexclop, conbin, pg_get_constraintdef(oid), pg_get_constraintdef(oid, true), "
    "obj_description(oid, 'pg_constraint') "
    "FROM pg_constraint WHERE conrelid IN (SELECT oid FROM pg_class WHERE relname IN "
    f"{_FK_NAMES} AND relnamespace::regnamespace::text IN ('public', 'fko')) "
    "ORDER BY conrelid::regclass::text, conname",
    "SELECT relname, relhastriggers FROM pg_class WHERE relname IN "
    f"{_FK_NAMES} AND relnamespace::regnamespace::text IN ('public', 'fko') ORDER BY 1",
    "SET search_path = fko",
    "SELECT conname, pg_get_constraintdef(oid, true) FROM pg_catalog.pg_constraint WHERE contype = 'f' "
    "AND conname LIKE 'fk%' ORDER BY 1",
    "RESET search_path",
    "SELECT constraint_schema, constraint_name, table_name, constraint_type, is_deferrable, initially_deferred, "
    f"enforced, nulls_distinct FROM information_schema.table_constraints WHERE table_name IN {_FK_NAMES} "
    "AND table_schema IN ('public', 'fko') AND constraint_type <> 'CHECK' ORDER BY 1, 2",
    "SELECT constraint_schema, constraint_name, table_schema, table_name, column_name, ordinal_position, "
    "position_in_unique_constraint FROM information_schema.key_column_usage "
    f"WHERE table_name IN {_FK_NAMES} AND table_schema IN ('public', 'fko') ORDER BY 2, 6",
    "SELECT constraint_schema, constraint_name, unique_constraint_catalog IS NULL, unique_constraint_schema, "
    "unique_constraint_name, match_option, update_rule, delete_rule FROM information_schema.referential_constraints "
    "WHERE constraint_name LIKE 'fk%' ORDER BY 2",
    "SELECT table_schema, table_name, column_name, constraint_schema, constraint_name "
    f"FROM information_schema.constraint_column_usage WHERE table_name IN {_FK_NAMES} "
    "AND table_schema IN ('public', 'fko') ORDER BY 5, 3",
    "SELECT table_schema, table_name, constraint_schema, constraint_name FROM information_schema.constraint_table_usage "
    f"WHERE table_name IN {_FK_NAMES} AND table_schema IN ('public', 'fko') ORDER BY 4",
]


def test_foreign_keys_in_the_catalog_and_psql(proxy: Any, pg15: PgCluster) -> None:
    """Foreign keys as PostgreSQL 15 shows them: pg_constraint (the equality operators of
    mixed types), pg_get_constraintdef with and without the schema, comments, the
    information_schema views, and psql's \\d and \\d+ of each table."""
    from tests.pgcompare import Client, same_answers

    db = pg15.new_database("fkcat")
    ref_dsn = pg15.dsn(dbname=db)
    for dsn in (proxy.dsn(), ref_dsn):
        with Client(dsn) as c:
            for sql in FK_SCHEMA:
                assert c(sql)[0] != "error", sql
    same_answers(proxy.dsn(), ref_dsn, FK_QUERIES).close()
    for table in ("fk_p", "fk_c", '"Fk T"', "fk_self", "fko.q", "fk_r"):
        for command in (f"\\d {table}", f"\\d+ {table}"):
            outs = [
                subprocess.run(
                    [str(pg15.bindir / "psql"), "-X", "-d", dsn, "-c", command],
                    capture_output=True, text=True, timeout=60,
                )
                for dsn in (proxy.dsn(), ref_dsn)
            ]
            assert (outs[0].stdout, outs[0].stderr) == (outs[1].stdout, outs[1].stderr), command


# -- CHECK constraints, through a proxy: pg_constraint, constraintdef, information_schema, \d --

CK_SCHEMA = [
    "CREATE SCHEMA cko",
    "CREATE TABLE ck_a (id int PRIMARY KEY, qty int CHECK (qty > 0), status varchar(8) CHECK (status IN ('new', 'done')), "
    "lo int, hi int, CONSTRAINT ordered CHECK (lo <= hi OR lo IS NULL) NO INHERIT, f real CHECK (f <> 0.5), "
    "d date CHECK (d BETWEEN '2020-01-01' AND '2030-12-31'), n text CHECK (length(n) < 10 AND n NOT LIKE '%x%'))",
    "ALTER TABLE ck_a ADD CONSTRAINT late CHECK (id NOT IN (13, 14)) NOT VALID",
    'CREATE TABLE cko."Ck T" ("Col A" bigint CHECK ("Col A" >= -5), b bool CHECK (NOT b), c numeric(8,3) CHECK (c < 1e3))',
    "COMMENT ON CONSTRAINT ordered ON ck_a IS 'low first'",
]

_CK_NAMES = "('ck_a', 'Ck T')"
CK_QUERIES = [
    "SELECT conname, connamespace::regnamespace, contype, condeferrable, condeferred, convalidated, "
    "conrelid::regclass, contypid, conindid::regclass, conparentid, confrelid, confupdtype, confdeltype, "
    "confmatchtype, conislocal, coninhcount, connoinherit, conkey, confkey, conpfeqop, conppeqop, conffeqop, "
    "confdelsetcols, conexclop, pg_get_constraintdef(oid), pg_get_constraintdef(oid, true), "
    "pg_get_expr(conbin, conrelid), pg_get_expr(conbin, conrelid, true), obj_description(oid, 'pg_constraint') "
    f"FROM pg_constraint WHERE conrelid IN (SELECT oid FROM pg_class WHERE relname IN {_CK_NAMES}) "
    "ORDER BY conrelid::regclass::text, conname",
    f"SELECT relname, relchecks FROM pg_class WHERE relname IN {_CK_NAMES} ORDER BY 1",
    "SELECT constraint_schema, constraint_name, table_name, constraint_type, is_deferrable, initially_deferred, "
    f"enforced FROM information_schema.table_constraints WHERE table_name IN {_CK_NAMES} "
    "AND constraint_name NOT LIKE '%not_null' ORDER BY 1, 2",
    "SELECT constraint_schema, constraint_name, check_clause FROM information_schema.check_constraints "
    "WHERE constraint_schema IN ('public', 'cko') AND (constraint_name LIKE 'ck%' OR constraint_name IN ('ordered', 'late')) "
    "ORDER BY 1, 2",
    "ALTER TABLE ck_a RENAME COLUMN lo TO \"Low\"",
    "SELECT conname, pg_get_constraintdef(oid, true) FROM pg_constraint WHERE conname = 'ordered'",
    "ALTER TABLE ck_a RENAME COLUMN \"Low\" TO lo",
]


def test_timezone_names_as_postgresql(proxy: Any, pg15: PgCluster) -> None:
    """Every zone PostgreSQL 15 knows, with its abbreviation, offset and DST flag now."""
    from tests.pgcompare import same_answers

    queries = [
        "SELECT name, abbrev, utc_offset, is_dst FROM pg_timezone_names ORDER BY name",
        "SELECT count(*), count(DISTINCT abbrev), min(utc_offset), max(utc_offset) FROM pg_timezone_names",
    ]
    same_answers(proxy.dsn(), pg15.dsn(), queries).close()


def test_checks_in_the_catalog_and_psql(proxy: Any, pg15: PgCluster) -> None:
    """CHECK constraints as PostgreSQL 15 shows them: pg_constraint, pg_get_constraintdef
    plain and pretty, pg_get_expr of conbin, comments, the information_schema views, and
    psql's \\d and \\d+ of each table ("Check constraints:")."""
    from tests.pgcompare import Client, same_answers

    db = pg15.new_database("ckcat")
    ref_dsn = pg15.dsn(dbname=db)
    for dsn in (proxy.dsn(), ref_dsn):
        with Client(dsn) as c:
            for sql in CK_SCHEMA:
                assert c(sql)[0] != "error", sql
    same_answers(proxy.dsn(), ref_dsn, CK_QUERIES).close()
    for table in ("ck_a", 'cko."Ck T"'):
        for command in (f"\\d {table}", f"\\d+ {table}"):
            outs = [
                subprocess.run(
                    [str(pg15.bindir / "psql"), "-X", "-d", dsn, "-c", command],
                    capture_output=True, text=True, timeout=60,
                )
                for dsn in (proxy.dsn(), ref_dsn)
            ]
            assert (outs[0].stdout, outs[0].stderr) == (outs[1].stdout, outs[1].stderr), command


def test_privileges_of_other_roles_are_refused(proxy: Any) -> None:
    """The proxy keeps ACLs of relations, schemas, the database and functions only
    (test_privileges_vs_postgres): has_*_privilege of other objects for a role that is not
    a superuser (named, or the session's own) is 0A000, not a guess."""
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE ROLE priv_plain LOGIN")
        for sql in ("SELECT has_type_privilege('priv_plain', 'int4', 'usage')",
                    "SELECT has_language_privilege('priv_plain', 'sql', 'usage')"):
            assert raw_outcome(c, sql)[:2] == ("error", "0A000"), sql
    with psycopg.connect(proxy.dsn(user="priv_plain"), autocommit=True) as c:
        assert raw_outcome(c, "SELECT has_type_privilege('int4', 'usage')")[:2] == ("error", "0A000")


@pytest.mark.parametrize("sql", ["SELECT * FROM pg_stat_database", "SELECT name FROM pg_catalog.pg_cursors", "TABLE pg_db_role_setting"])
def test_a_catalog_relation_not_emulated_is_refused_by_name(proxy: ProxyServer, pg15: PgCluster, sql: str) -> None:
    """PostgreSQL has it (its answer is rows), the proxy says it does not serve it: 0A000
    naming the relation, never 42P01 as if there were no such relation."""
    with psycopg.connect(pg15.dsn()) as c:
        c.execute(sql)
    with psycopg.connect(proxy.dsn()) as c, pytest.raises(psycopg.errors.FeatureNotSupported, match=r'relation "pg_catalog\.pg_\w+" is not supported by walsender-proxy'):
        c.execute(sql)


def test_reg_and_id_inputs_as_postgres(proxy: ProxyServer, pg15: PgCluster) -> None:
    """to_regrole/to_regnamespace and their input of a qualified name (42602), regclass
    input of another database's relation (0A000) or of four names (42601), cid's lenient
    input (PostgreSQL 15's strtoul: no error). (PostgreSQL's database here is postgres.)"""
    same_answers(
        proxy.dsn(), pg15.dsn(),
        [
            "SELECT to_regrole('foo.bar')",
            "SELECT to_regnamespace('foo.bar')",
            "SELECT 'foo.bar'::regrole",
            "SELECT 'foo.bar'::regnamespace",
            "SELECT to_regrole('postgres'), to_regnamespace('public'), to_regrole('nope'), to_regrole('\"Postgres\"')",
            "SELECT '(zz'::cid, '0x10'::cid, ' 17'::cid, '-1'::cid",
            "SELECT to_regclass('otherdb.public.t')",
            "SELECT 'otherdb.pg_catalog.pg_class'::regclass",
            "SELECT to_regclass('a.b.c.d')",
            "SELECT to_regclass('postgres.pg_catalog.pg_class') = 'pg_class'::regclass",
        ],
    ).close()


@pytest.mark.parametrize("t", ["tid", "regconfig", "regdictionary", "regcollation", "regoper", "regoperator", "pg_node_tree"])
def test_an_input_the_proxy_does_not_check_is_refused(proxy: ProxyServer, t: str) -> None:
    """These types' input functions are not reproduced: a cast to one is 0A000 naming the
    type (it took any text unchecked, and compared it as text)."""
    with psycopg.connect(proxy.dsn()) as c, pytest.raises(psycopg.errors.FeatureNotSupported, match=f"type {t} is not supported by walsender-proxy"):
        c.execute(f"SELECT '(0,1)'::{t}")
